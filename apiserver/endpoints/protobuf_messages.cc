// The message tables of protobuf_messages.h: one Message per Go type,
// grouped by API group, and the kinds a request body may carry.
#include "apiserver/endpoints/protobuf_messages.h"

#include <map>
#include <utility>

namespace kcr {
namespace apiserver {
namespace protobuf_internal {
namespace {

// Field numbers are those of the Go struct tags in k8s.io/api and
// k8s.io/apimachinery (`protobuf:"bytes,2,opt,name=image"`); JSON names and
// omitempty come from the same structs' json tags.

// --- meta/v1 ---

const Message kOwnerReference{
    "meta/v1 OwnerReference",
    {{1, "kind", Type::kString, kKeepZero},
     {3, "name", Type::kString, kKeepZero},
     {4, "uid", Type::kString, kKeepZero},
     {5, "apiVersion", Type::kString, kKeepZero},
     {6, "controller", Type::kBool, kKeepZero},            // *bool
     {7, "blockOwnerDeletion", Type::kBool, kKeepZero}}};  // *bool

const Message kObjectMeta{
    "meta/v1 ObjectMeta",
    {{1, "name", Type::kString},
     {2, "generateName", Type::kString},
     {3, "namespace", Type::kString},
     {4, "selfLink", Type::kString},
     {5, "uid", Type::kString},
     {6, "resourceVersion", Type::kString},
     {7, "generation", Type::kInt64},
     {8, "creationTimestamp", Type::kTime},
     {9, "deletionTimestamp", Type::kTime},
     {10, "deletionGracePeriodSeconds", Type::kInt64, kKeepZero},  // *int64
     {11, "labels", Type::kStringMap},
     {12, "annotations", Type::kStringMap},
     {13, "ownerReferences", Type::kMessage, kRepeated, &kOwnerReference},
     {14, "finalizers", Type::kString, kRepeated}}};

const Message kLabelSelectorRequirement{
    "meta/v1 LabelSelectorRequirement",
    {{1, "key", Type::kString, kKeepZero},
     {2, "operator", Type::kString, kKeepZero},
     {3, "values", Type::kString, kRepeated}}};

const Message kLabelSelector{"meta/v1 LabelSelector",
                             {{1, "matchLabels", Type::kStringMap},
                              {2, "matchExpressions", Type::kMessage, kRepeated,
                               &kLabelSelectorRequirement}}};

const Message kCondition{"meta/v1 Condition",
                         {{1, "type", Type::kString, kKeepZero},
                          {2, "status", Type::kString, kKeepZero},
                          {3, "observedGeneration", Type::kInt64},
                          {4, "lastTransitionTime", Type::kTime},
                          {5, "reason", Type::kString, kKeepZero},
                          {6, "message", Type::kString, kKeepZero}}};

// --- core/v1: what `kubectl create namespace|configmap|secret|
// serviceaccount` send ---

const Message kNamespaceSpec{"v1 NamespaceSpec",
                             {{1, "finalizers", Type::kString, kRepeated}}};
const Message kNamespaceStatus{"v1 NamespaceStatus",
                               {{1, "phase", Type::kString}}};
const Message kNamespace{"v1 Namespace",
                         {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
                          {2, "spec", Type::kMessage, 0, &kNamespaceSpec},
                          {3, "status", Type::kMessage, 0, &kNamespaceStatus}}};
const Message kConfigMap{"v1 ConfigMap",
                         {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
                          {2, "data", Type::kStringMap},
                          {3, "binaryData", Type::kBytesMap},
                          {4, "immutable", Type::kBool, kKeepZero}}};  // *bool
const Message kSecret{"v1 Secret",
                      {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
                       {2, "data", Type::kBytesMap},
                       {3, "type", Type::kString},
                       {4, "stringData", Type::kStringMap},
                       {5, "immutable", Type::kBool, kKeepZero}}};  // *bool
const Message kObjectReference{"v1 ObjectReference",
                               {{1, "kind", Type::kString},
                                {2, "namespace", Type::kString},
                                {3, "name", Type::kString},
                                {4, "uid", Type::kString},
                                {5, "apiVersion", Type::kString},
                                {6, "resourceVersion", Type::kString},
                                {7, "fieldPath", Type::kString}}};
const Message kLocalObjectReference{"v1 LocalObjectReference",
                                    {{1, "name", Type::kString}}};
const Message kServiceAccount{
    "v1 ServiceAccount",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "secrets", Type::kMessage, kRepeated, &kObjectReference},
     {3, "imagePullSecrets", Type::kMessage, kRepeated, &kLocalObjectReference},
     {4, "automountServiceAccountToken", Type::kBool, kKeepZero}}};  // *bool

// --- core/v1 Pod and its template: what `kubectl create deployment` and
// `kubectl run` generate, plus what `--overrides` commonly sets ---

const Message kContainerPort{"v1 ContainerPort",
                             {{1, "name", Type::kString},
                              {2, "hostPort", Type::kInt32},
                              {3, "containerPort", Type::kInt32, kKeepZero},
                              {4, "protocol", Type::kString},
                              {5, "hostIP", Type::kString}}};

const Message kObjectFieldSelector{
    "v1 ObjectFieldSelector",
    {{1, "apiVersion", Type::kString},
     {2, "fieldPath", Type::kString, kKeepZero}}};
const Message kResourceFieldSelector{"v1 ResourceFieldSelector",
                                     {{1, "containerName", Type::kString},
                                      {2, "resource", Type::kString, kKeepZero},
                                      {3, "divisor", Type::kQuantity}}};
// ConfigMapKeySelector and SecretKeySelector have the same shape.
const std::vector<Field> kKeySelectorFields{
    {1, "localObjectReference", Type::kInline, 0, &kLocalObjectReference},
    {2, "key", Type::kString, kKeepZero},
    {3, "optional", Type::kBool, kKeepZero}};  // *bool
const Message kConfigMapKeySelector{"v1 ConfigMapKeySelector",
                                    kKeySelectorFields};
const Message kSecretKeySelector{"v1 SecretKeySelector", kKeySelectorFields};
const Message kEnvVarSource{
    "v1 EnvVarSource",
    {{1, "fieldRef", Type::kMessage, 0, &kObjectFieldSelector},
     {2, "resourceFieldRef", Type::kMessage, 0, &kResourceFieldSelector},
     {3, "configMapKeyRef", Type::kMessage, 0, &kConfigMapKeySelector},
     {4, "secretKeyRef", Type::kMessage, 0, &kSecretKeySelector}}};
const Message kEnvVar{"v1 EnvVar",
                      {{1, "name", Type::kString, kKeepZero},
                       {2, "value", Type::kString},
                       {3, "valueFrom", Type::kMessage, 0, &kEnvVarSource}}};

const Message kResourceRequirements{
    "v1 ResourceRequirements",
    {{1, "limits", Type::kQuantityMap}, {2, "requests", Type::kQuantityMap}}};

const Message kVolumeMount{
    "v1 VolumeMount",
    {{1, "name", Type::kString, kKeepZero},
     {2, "readOnly", Type::kBool},
     {3, "mountPath", Type::kString, kKeepZero},
     {4, "subPath", Type::kString},
     {5, "mountPropagation", Type::kString, kKeepZero},  // *string
     {6, "subPathExpr", Type::kString}}};

const Message kExecAction{"v1 ExecAction",
                          {{1, "command", Type::kString, kRepeated}}};
const Message kHTTPHeader{"v1 HTTPHeader",
                          {{1, "name", Type::kString, kKeepZero},
                           {2, "value", Type::kString, kKeepZero}}};
const Message kHTTPGetAction{
    "v1 HTTPGetAction",
    {{1, "path", Type::kString},
     {2, "port", Type::kIntOrString},
     {3, "host", Type::kString},
     {4, "scheme", Type::kString},
     {5, "httpHeaders", Type::kMessage, kRepeated, &kHTTPHeader}}};
const Message kTCPSocketAction{
    "v1 TCPSocketAction",
    {{1, "port", Type::kIntOrString}, {2, "host", Type::kString}}};
const Message kGRPCAction{
    "v1 GRPCAction",
    {{1, "port", Type::kInt32, kKeepZero},
     {2, "service", Type::kString, kKeepZero}}};  // *string
const Message kProbeHandler{
    "v1 ProbeHandler",
    {{1, "exec", Type::kMessage, 0, &kExecAction},
     {2, "httpGet", Type::kMessage, 0, &kHTTPGetAction},
     {3, "tcpSocket", Type::kMessage, 0, &kTCPSocketAction},
     {4, "grpc", Type::kMessage, 0, &kGRPCAction}}};
const Message kProbe{
    "v1 Probe",
    {{1, "handler", Type::kInline, 0, &kProbeHandler},
     {2, "initialDelaySeconds", Type::kInt32},
     {3, "timeoutSeconds", Type::kInt32},
     {4, "periodSeconds", Type::kInt32},
     {5, "successThreshold", Type::kInt32},
     {6, "failureThreshold", Type::kInt32},
     {7, "terminationGracePeriodSeconds", Type::kInt64, kKeepZero}}};  // *int64

const Message kContainer{
    "v1 Container",
    {{1, "name", Type::kString, kKeepZero},
     {2, "image", Type::kString},
     {3, "command", Type::kString, kRepeated},
     {4, "args", Type::kString, kRepeated},
     {5, "workingDir", Type::kString},
     {6, "ports", Type::kMessage, kRepeated, &kContainerPort},
     {7, "env", Type::kMessage, kRepeated, &kEnvVar},
     {8, "resources", Type::kMessage, 0, &kResourceRequirements},
     {9, "volumeMounts", Type::kMessage, kRepeated, &kVolumeMount},
     {10, "livenessProbe", Type::kMessage, 0, &kProbe},
     {11, "readinessProbe", Type::kMessage, 0, &kProbe},
     {13, "terminationMessagePath", Type::kString},
     {14, "imagePullPolicy", Type::kString},
     {16, "stdin", Type::kBool},
     {17, "stdinOnce", Type::kBool},
     {18, "tty", Type::kBool},
     {20, "terminationMessagePolicy", Type::kString},
     {22, "startupProbe", Type::kMessage, 0, &kProbe},
     {24, "restartPolicy", Type::kString, kKeepZero}}};  // *string

const Message kToleration{
    "v1 Toleration",
    {{1, "key", Type::kString},
     {2, "operator", Type::kString},
     {3, "value", Type::kString},
     {4, "effect", Type::kString},
     {5, "tolerationSeconds", Type::kInt64, kKeepZero}}};  // *int64

// The scalar fields of a pod's security context; the server defaults it
// to `{}`, so a template read back and sent again carries it.
const Message kPodSecurityContext{
    "v1 PodSecurityContext",
    {{2, "runAsUser", Type::kInt64, kKeepZero},    // *int64
     {3, "runAsNonRoot", Type::kBool, kKeepZero},  // *bool
     {4, "supplementalGroups", Type::kInt64, kRepeated},
     {5, "fsGroup", Type::kInt64, kKeepZero},                     // *int64
     {6, "runAsGroup", Type::kInt64, kKeepZero},                  // *int64
     {9, "fsGroupChangePolicy", Type::kString, kKeepZero},        // *string
     {12, "supplementalGroupsPolicy", Type::kString, kKeepZero},  // *string
     {13, "seLinuxChangePolicy", Type::kString, kKeepZero}}};     // *string

const Message kPodSpec{
    "v1 PodSpec",
    {{2, "containers", Type::kMessage, kRepeated, &kContainer},
     {3, "restartPolicy", Type::kString},
     {4, "terminationGracePeriodSeconds", Type::kInt64, kKeepZero},  // *int64
     {5, "activeDeadlineSeconds", Type::kInt64, kKeepZero},          // *int64
     {6, "dnsPolicy", Type::kString},
     {7, "nodeSelector", Type::kStringMap},
     {8, "serviceAccountName", Type::kString},
     {9, "serviceAccount", Type::kString},
     {10, "nodeName", Type::kString},
     {11, "hostNetwork", Type::kBool},
     {12, "hostPID", Type::kBool},
     {13, "hostIPC", Type::kBool},
     {14, "securityContext", Type::kMessage, 0, &kPodSecurityContext},
     {15, "imagePullSecrets", Type::kMessage, kRepeated,
      &kLocalObjectReference},
     {16, "hostname", Type::kString},
     {17, "subdomain", Type::kString},
     {19, "schedulerName", Type::kString},
     {20, "initContainers", Type::kMessage, kRepeated, &kContainer},
     {21, "automountServiceAccountToken", Type::kBool, kKeepZero},  // *bool
     {22, "tolerations", Type::kMessage, kRepeated, &kToleration},
     {24, "priorityClassName", Type::kString},
     {25, "priority", Type::kInt32, kKeepZero},              // *int32
     {27, "shareProcessNamespace", Type::kBool, kKeepZero},  // *bool
     {29, "runtimeClassName", Type::kString, kKeepZero},     // *string
     {30, "enableServiceLinks", Type::kBool, kKeepZero}}};   // *bool

// A Pod's status is the kubelet's to write; a create sends it empty
// (`status: {}`), which is all this accepts.
const Message kPodStatus{"v1 PodStatus", {}};

const Message kPod{"v1 Pod",
                   {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
                    {2, "spec", Type::kMessage, 0, &kPodSpec},
                    {3, "status", Type::kMessage, 0, &kPodStatus}}};

const Message kPodTemplateSpec{
    "v1 PodTemplateSpec",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "spec", Type::kMessage, 0, &kPodSpec}}};

// --- core/v1 Service: `kubectl create service ...` and `kubectl expose` ---

const Message kServicePort{
    "v1 ServicePort",
    {{1, "name", Type::kString},
     {2, "protocol", Type::kString},
     {3, "port", Type::kInt32, kKeepZero},
     {4, "targetPort", Type::kIntOrString},
     {5, "nodePort", Type::kInt32},
     {6, "appProtocol", Type::kString, kKeepZero}}};  // *string

const Message kServiceSpec{
    "v1 ServiceSpec",
    {{1, "ports", Type::kMessage, kRepeated, &kServicePort},
     {2, "selector", Type::kStringMap},
     {3, "clusterIP", Type::kString},
     {4, "type", Type::kString},
     {5, "externalIPs", Type::kString, kRepeated},
     {7, "sessionAffinity", Type::kString},
     {8, "loadBalancerIP", Type::kString},
     {9, "loadBalancerSourceRanges", Type::kString, kRepeated},
     {10, "externalName", Type::kString},
     {11, "externalTrafficPolicy", Type::kString},
     {12, "healthCheckNodePort", Type::kInt32},
     {13, "publishNotReadyAddresses", Type::kBool},
     {17, "ipFamilyPolicy", Type::kString, kKeepZero},  // *string
     {18, "clusterIPs", Type::kString, kRepeated},
     {19, "ipFamilies", Type::kString, kRepeated},
     {20, "allocateLoadBalancerNodePorts", Type::kBool, kKeepZero},  // *bool
     {21, "loadBalancerClass", Type::kString, kKeepZero},            // *string
     {22, "internalTrafficPolicy", Type::kString, kKeepZero}}};      // *string

const Message kLoadBalancerIngress{
    "v1 LoadBalancerIngress",
    {{1, "ip", Type::kString},
     {2, "hostname", Type::kString},
     {3, "ipMode", Type::kString, kKeepZero}}};  // *string
const Message kLoadBalancerStatus{
    "v1 LoadBalancerStatus",
    {{1, "ingress", Type::kMessage, kRepeated, &kLoadBalancerIngress}}};
const Message kServiceStatus{
    "v1 ServiceStatus",
    {{1, "loadBalancer", Type::kMessage, 0, &kLoadBalancerStatus},
     {2, "conditions", Type::kMessage, kRepeated, &kCondition}}};

const Message kService{"v1 Service",
                       {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
                        {2, "spec", Type::kMessage, 0, &kServiceSpec},
                        {3, "status", Type::kMessage, 0, &kServiceStatus}}};

// --- apps/v1 Deployment: `kubectl create deployment` ---

const Message kRollingUpdateDeployment{
    "apps/v1 RollingUpdateDeployment",
    {{1, "maxUnavailable", Type::kIntOrString},
     {2, "maxSurge", Type::kIntOrString}}};
const Message kDeploymentStrategy{
    "apps/v1 DeploymentStrategy",
    {{1, "type", Type::kString},
     {2, "rollingUpdate", Type::kMessage, 0, &kRollingUpdateDeployment}}};
const Message kDeploymentSpec{
    "apps/v1 DeploymentSpec",
    {{1, "replicas", Type::kInt32, kKeepZero},  // *int32
     {2, "selector", Type::kMessage, 0, &kLabelSelector},
     {3, "template", Type::kMessage, 0, &kPodTemplateSpec},
     {4, "strategy", Type::kMessage, 0, &kDeploymentStrategy},
     {5, "minReadySeconds", Type::kInt32},
     {6, "revisionHistoryLimit", Type::kInt32, kKeepZero},  // *int32
     {7, "paused", Type::kBool},
     {9, "progressDeadlineSeconds", Type::kInt32, kKeepZero}}};  // *int32
const Message kDeploymentCondition{"apps/v1 DeploymentCondition",
                                   {{1, "type", Type::kString, kKeepZero},
                                    {2, "status", Type::kString, kKeepZero},
                                    {4, "reason", Type::kString},
                                    {5, "message", Type::kString},
                                    {6, "lastUpdateTime", Type::kTime},
                                    {7, "lastTransitionTime", Type::kTime}}};
const Message kDeploymentStatus{
    "apps/v1 DeploymentStatus",
    {{1, "observedGeneration", Type::kInt64},
     {2, "replicas", Type::kInt32},
     {3, "updatedReplicas", Type::kInt32},
     {4, "availableReplicas", Type::kInt32},
     {5, "unavailableReplicas", Type::kInt32},
     {6, "conditions", Type::kMessage, kRepeated, &kDeploymentCondition},
     {7, "readyReplicas", Type::kInt32},
     {8, "collisionCount", Type::kInt32, kKeepZero}}};  // *int32
const Message kDeployment{
    "apps/v1 Deployment",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "spec", Type::kMessage, 0, &kDeploymentSpec},
     {3, "status", Type::kMessage, 0, &kDeploymentStatus}}};

// --- batch/v1: `kubectl create job` (also `--from=cronjob/x`, which sends
// the CronJob's defaulted template) and `kubectl create cronjob` ---

const Message kJobSpec{
    "batch/v1 JobSpec",
    {{1, "parallelism", Type::kInt32, kKeepZero},            // *int32
     {2, "completions", Type::kInt32, kKeepZero},            // *int32
     {3, "activeDeadlineSeconds", Type::kInt64, kKeepZero},  // *int64
     {4, "selector", Type::kMessage, 0, &kLabelSelector},
     {5, "manualSelector", Type::kBool, kKeepZero},  // *bool
     {6, "template", Type::kMessage, 0, &kPodTemplateSpec},
     {7, "backoffLimit", Type::kInt32, kKeepZero},             // *int32
     {8, "ttlSecondsAfterFinished", Type::kInt32, kKeepZero},  // *int32
     {9, "completionMode", Type::kString, kKeepZero},          // *string
     {10, "suspend", Type::kBool, kKeepZero},                  // *bool
     {12, "backoffLimitPerIndex", Type::kInt32, kKeepZero},    // *int32
     {13, "maxFailedIndexes", Type::kInt32, kKeepZero},        // *int32
     {14, "podReplacementPolicy", Type::kString, kKeepZero},   // *string
     {15, "managedBy", Type::kString, kKeepZero}}};            // *string
const Message kJobCondition{"batch/v1 JobCondition",
                            {{1, "type", Type::kString, kKeepZero},
                             {2, "status", Type::kString, kKeepZero},
                             {3, "lastProbeTime", Type::kTime},
                             {4, "lastTransitionTime", Type::kTime},
                             {5, "reason", Type::kString},
                             {6, "message", Type::kString}}};
const Message kUncountedTerminatedPods{
    "batch/v1 UncountedTerminatedPods",
    {{1, "succeeded", Type::kString, kRepeated},
     {2, "failed", Type::kString, kRepeated}}};
const Message kJobStatus{
    "batch/v1 JobStatus",
    {{1, "conditions", Type::kMessage, kRepeated, &kJobCondition},
     {2, "startTime", Type::kTime},
     {3, "completionTime", Type::kTime},
     {4, "active", Type::kInt32},
     {5, "succeeded", Type::kInt32},
     {6, "failed", Type::kInt32},
     {7, "completedIndexes", Type::kString},
     {8, "uncountedTerminatedPods", Type::kMessage, 0,
      &kUncountedTerminatedPods},
     {9, "ready", Type::kInt32, kKeepZero},            // *int32
     {10, "failedIndexes", Type::kString, kKeepZero},  // *string
     {11, "terminating", Type::kInt32, kKeepZero}}};   // *int32
const Message kJob{"batch/v1 Job",
                   {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
                    {2, "spec", Type::kMessage, 0, &kJobSpec},
                    {3, "status", Type::kMessage, 0, &kJobStatus}}};
const Message kJobTemplateSpec{
    "batch/v1 JobTemplateSpec",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "spec", Type::kMessage, 0, &kJobSpec}}};
const Message kCronJobSpec{
    "batch/v1 CronJobSpec",
    {{1, "schedule", Type::kString, kKeepZero},
     {2, "startingDeadlineSeconds", Type::kInt64, kKeepZero},  // *int64
     {3, "concurrencyPolicy", Type::kString},
     {4, "suspend", Type::kBool, kKeepZero},  // *bool
     {5, "jobTemplate", Type::kMessage, 0, &kJobTemplateSpec},
     {6, "successfulJobsHistoryLimit", Type::kInt32, kKeepZero},  // *int32
     {7, "failedJobsHistoryLimit", Type::kInt32, kKeepZero},      // *int32
     {8, "timeZone", Type::kString, kKeepZero}}};                 // *string
const Message kCronJobStatus{
    "batch/v1 CronJobStatus",
    {{1, "active", Type::kMessage, kRepeated, &kObjectReference},
     {4, "lastScheduleTime", Type::kTime},
     {5, "lastSuccessfulTime", Type::kTime}}};
const Message kCronJob{"batch/v1 CronJob",
                       {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
                        {2, "spec", Type::kMessage, 0, &kCronJobSpec},
                        {3, "status", Type::kMessage, 0, &kCronJobStatus}}};

// --- rbac/v1: what `kubectl create role|clusterrole|rolebinding|
// clusterrolebinding` send ---

const Message kPolicyRule{"rbac/v1 PolicyRule",
                          {{1, "verbs", Type::kString, kRepeated},
                           {2, "apiGroups", Type::kString, kRepeated},
                           {3, "resources", Type::kString, kRepeated},
                           {4, "resourceNames", Type::kString, kRepeated},
                           {5, "nonResourceURLs", Type::kString, kRepeated}}};
const Message kAggregationRule{
    "rbac/v1 AggregationRule",
    {{1, "clusterRoleSelectors", Type::kMessage, kRepeated, &kLabelSelector}}};
const Message kRole{"rbac/v1 Role",
                    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
                     {2, "rules", Type::kMessage, kRepeated, &kPolicyRule}}};
const Message kClusterRole{
    "rbac/v1 ClusterRole",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "rules", Type::kMessage, kRepeated, &kPolicyRule},
     {3, "aggregationRule", Type::kMessage, 0, &kAggregationRule}}};
const Message kSubject{"rbac/v1 Subject",
                       {{1, "kind", Type::kString, kKeepZero},
                        {2, "apiGroup", Type::kString},
                        {3, "name", Type::kString, kKeepZero},
                        {4, "namespace", Type::kString}}};
const Message kRoleRef{"rbac/v1 RoleRef",
                       {{1, "apiGroup", Type::kString, kKeepZero},
                        {2, "kind", Type::kString, kKeepZero},
                        {3, "name", Type::kString, kKeepZero}}};
const Message kRoleBinding{
    "rbac/v1 RoleBinding",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "subjects", Type::kMessage, kRepeated, &kSubject},
     {3, "roleRef", Type::kMessage, 0, &kRoleRef}}};
const Message kClusterRoleBinding{
    "rbac/v1 ClusterRoleBinding",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "subjects", Type::kMessage, kRepeated, &kSubject},
     {3, "roleRef", Type::kMessage, 0, &kRoleRef}}};

// --- authorization/v1: what `kubectl auth can-i` sends ---

const Message kResourceAttributes{"authorization/v1 ResourceAttributes",
                                  {{1, "namespace", Type::kString},
                                   {2, "verb", Type::kString},
                                   {3, "group", Type::kString},
                                   {4, "version", Type::kString},
                                   {5, "resource", Type::kString},
                                   {6, "subresource", Type::kString},
                                   {7, "name", Type::kString}}};
const Message kNonResourceAttributes{
    "authorization/v1 NonResourceAttributes",
    {{1, "path", Type::kString}, {2, "verb", Type::kString}}};
const Message kSelfSubjectAccessReviewSpec{
    "authorization/v1 SelfSubjectAccessReviewSpec",
    {{1, "resourceAttributes", Type::kMessage, 0, &kResourceAttributes},
     {2, "nonResourceAttributes", Type::kMessage, 0, &kNonResourceAttributes}}};
const Message kSubjectAccessReviewStatus{
    "authorization/v1 SubjectAccessReviewStatus",
    {{1, "allowed", Type::kBool, kKeepZero},
     {2, "reason", Type::kString},
     {3, "evaluationError", Type::kString},
     {4, "denied", Type::kBool}}};
const Message kSelfSubjectAccessReview{
    "authorization/v1 SelfSubjectAccessReview",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "spec", Type::kMessage, 0, &kSelfSubjectAccessReviewSpec},
     {3, "status", Type::kMessage, 0, &kSubjectAccessReviewStatus}}};
const Message kSelfSubjectRulesReviewSpec{
    "authorization/v1 SelfSubjectRulesReviewSpec",
    {{1, "namespace", Type::kString}}};
const Message kResourceRule{"authorization/v1 ResourceRule",
                            {{1, "verbs", Type::kString, kRepeated},
                             {2, "apiGroups", Type::kString, kRepeated},
                             {3, "resources", Type::kString, kRepeated},
                             {4, "resourceNames", Type::kString, kRepeated}}};
const Message kNonResourceRule{
    "authorization/v1 NonResourceRule",
    {{1, "verbs", Type::kString, kRepeated},
     {2, "nonResourceURLs", Type::kString, kRepeated}}};
const Message kSubjectRulesReviewStatus{
    "authorization/v1 SubjectRulesReviewStatus",
    {{1, "resourceRules", Type::kMessage, kRepeated, &kResourceRule},
     {2, "nonResourceRules", Type::kMessage, kRepeated, &kNonResourceRule},
     {3, "incomplete", Type::kBool, kKeepZero},
     {4, "evaluationError", Type::kString}}};
const Message kSelfSubjectRulesReview{
    "authorization/v1 SelfSubjectRulesReview",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "spec", Type::kMessage, 0, &kSelfSubjectRulesReviewSpec},
     {3, "status", Type::kMessage, 0, &kSubjectRulesReviewStatus}}};

const Message kSubjectAccessReviewSpec{
    "authorization/v1 SubjectAccessReviewSpec",
    {{1, "resourceAttributes", Type::kMessage, 0, &kResourceAttributes},
     {2, "nonResourceAttributes", Type::kMessage, 0, &kNonResourceAttributes},
     {3, "user", Type::kString},
     {4, "groups", Type::kString, kRepeated},
     {6, "uid", Type::kString}}};
const Message kSubjectAccessReview{
    "authorization/v1 SubjectAccessReview",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "spec", Type::kMessage, 0, &kSubjectAccessReviewSpec},
     {3, "status", Type::kMessage, 0, &kSubjectAccessReviewStatus}}};

// --- authentication/v1: `kubectl create token`, `kubectl auth whoami` ---

const Message kBoundObjectReference{"authentication/v1 BoundObjectReference",
                                    {{1, "kind", Type::kString},
                                     {2, "apiVersion", Type::kString},
                                     {3, "name", Type::kString},
                                     {4, "uid", Type::kString}}};
const Message kTokenRequestSpec{
    "authentication/v1 TokenRequestSpec",
    {{1, "audiences", Type::kString, kRepeated},
     {3, "boundObjectRef", Type::kMessage, 0, &kBoundObjectReference},
     {4, "expirationSeconds", Type::kInt64}}};
const Message kTokenRequestStatus{
    "authentication/v1 TokenRequestStatus",
    {{1, "token", Type::kString}, {2, "expirationTimestamp", Type::kTime}}};
const Message kTokenRequest{
    "authentication/v1 TokenRequest",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "spec", Type::kMessage, 0, &kTokenRequestSpec},
     {3, "status", Type::kMessage, 0, &kTokenRequestStatus}}};
const Message kTokenReviewSpec{
    "authentication/v1 TokenReviewSpec",
    {{1, "token", Type::kString}, {2, "audiences", Type::kString, kRepeated}}};
const Message kUserInfo{"authentication/v1 UserInfo",
                        {{1, "username", Type::kString},
                         {2, "uid", Type::kString},
                         {3, "groups", Type::kString, kRepeated}}};
const Message kTokenReviewStatus{"authentication/v1 TokenReviewStatus",
                                 {{1, "authenticated", Type::kBool},
                                  {2, "user", Type::kMessage, 0, &kUserInfo},
                                  {3, "error", Type::kString},
                                  {4, "audiences", Type::kString, kRepeated}}};
const Message kTokenReview{
    "authentication/v1 TokenReview",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "spec", Type::kMessage, 0, &kTokenReviewSpec},
     {3, "status", Type::kMessage, 0, &kTokenReviewStatus}}};
const Message kSelfSubjectReviewStatus{
    "authentication/v1 SelfSubjectReviewStatus",
    {{1, "userInfo", Type::kMessage, 0, &kUserInfo}}};
const Message kSelfSubjectReview{
    "authentication/v1 SelfSubjectReview",
    {{1, "metadata", Type::kMessage, 0, &kObjectMeta},
     {2, "status", Type::kMessage, 0, &kSelfSubjectReviewStatus}}};

// --- meta/v1 DeleteOptions, the body of a DELETE ---

const Message kPreconditions{
    "meta/v1 Preconditions",
    {{1, "uid", Type::kString, kKeepZero},
     {2, "resourceVersion", Type::kString, kKeepZero}}};
const Message kDeleteOptions{
    "meta/v1 DeleteOptions",
    {{1, "gracePeriodSeconds", Type::kInt64, kKeepZero},  // *int64
     {2, "preconditions", Type::kMessage, 0, &kPreconditions},
     {3, "orphanDependents", Type::kBool, kKeepZero},  // *bool
     {4, "propagationPolicy", Type::kString, kKeepZero},
     {5, "dryRun", Type::kString, kRepeated},
     {6, "ignoreStoreReadErrorWithClusterBreakingPotential", Type::kBool,
      kKeepZero}}};

}  // namespace

const Message* FindMessage(const std::string& api_version,
                           const std::string& kind) {
  static const std::map<std::pair<std::string, std::string>, const Message*>
      kKinds = {
          {{"v1", "Namespace"}, &kNamespace},
          {{"v1", "ConfigMap"}, &kConfigMap},
          {{"v1", "Secret"}, &kSecret},
          {{"v1", "ServiceAccount"}, &kServiceAccount},
          {{"v1", "Pod"}, &kPod},
          {{"v1", "Service"}, &kService},
          {{"apps/v1", "Deployment"}, &kDeployment},
          {{"batch/v1", "Job"}, &kJob},
          {{"batch/v1", "CronJob"}, &kCronJob},
          {{"rbac.authorization.k8s.io/v1", "Role"}, &kRole},
          {{"rbac.authorization.k8s.io/v1", "ClusterRole"}, &kClusterRole},
          {{"rbac.authorization.k8s.io/v1", "RoleBinding"}, &kRoleBinding},
          {{"rbac.authorization.k8s.io/v1", "ClusterRoleBinding"},
           &kClusterRoleBinding},
          {{"authorization.k8s.io/v1", "SelfSubjectAccessReview"},
           &kSelfSubjectAccessReview},
          {{"authorization.k8s.io/v1", "SelfSubjectRulesReview"},
           &kSelfSubjectRulesReview},
          {{"authorization.k8s.io/v1", "SubjectAccessReview"},
           &kSubjectAccessReview},
          {{"authorization.k8s.io/v1", "LocalSubjectAccessReview"},
           &kSubjectAccessReview},
          {{"authentication.k8s.io/v1", "TokenRequest"}, &kTokenRequest},
          {{"authentication.k8s.io/v1", "TokenReview"}, &kTokenReview},
          {{"authentication.k8s.io/v1", "SelfSubjectReview"},
           &kSelfSubjectReview}};
  auto it = kKinds.find({api_version, kind});
  // DeleteOptions is registered in every group version (and meta.k8s.io/v1);
  // clients send it under the group version of the resource they delete.
  const Message* message = it == kKinds.end() ? nullptr : it->second;
  if (kind == "DeleteOptions") message = &kDeleteOptions;
  return message;
}

}  // namespace protobuf_internal
}  // namespace apiserver
}  // namespace kcr
