#include "apiserver/endpoints/protobuf.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/time/time.h"
#include "api/types/time.h"
#include "apiserver/internal/str_util.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

enum class Type {
  kString,
  kBytes,  // base64 in JSON
  kInt64,  // varint
  kInt32,  // varint, truncated to 32 bits (negatives are sign-extended)
  kBool,
  kTime,  // metav1.Time -> RFC 3339; the zero time (empty) -> null
  kMessage,
  kInline,       // an embedded Go struct (`json:",inline"`): its fields
                 // land in the enclosing JSON object
  kIntOrString,  // intstr.IntOrString -> JSON number or string
  kQuantity,     // resource.Quantity -> its string
  kStringMap,    // map<string,string>
  kBytesMap,     // map<string,bytes>
  kQuantityMap,  // map<string,Quantity> (ResourceList)
};

// Field flags.
constexpr int kRepeated = 1;
// Keep a zero scalar (0, "", false) in the JSON. Go's generated protobuf
// code writes every non-pointer scalar, zero or not, while encoding/json
// leaves out the zero ones tagged omitempty; so zeros are dropped unless
// the field is a pointer (sent only when set, so 0 means 0) or is not
// omitempty in its Go json tag.
constexpr int kKeepZero = 2;

struct Message;

struct Field {
  int number;
  const char* json;
  Type type;
  int flags = 0;
  const Message* message = nullptr;
};

struct Message {
  // "<apiVersion> <Go type>", named in errors.
  const char* name;
  std::vector<Field> fields;
  const Field* Find(int n) const {
    for (const Field& f : fields) {
      if (f.number == n) return &f;
    }
    return nullptr;
  }
};

// Field numbers are those of the Go struct tags in k8s.io/api and
// k8s.io/apimachinery (`protobuf:"bytes,2,opt,name=image"`); JSON names and
// omitempty come from the same structs' json tags.

// --- meta/v1, util/intstr, api/resource ---

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

const Message kIntOrString{"intstr IntOrString",
                           {{1, "type", Type::kInt64},
                            {2, "intVal", Type::kInt32},
                            {3, "strVal", Type::kString}}};

const Message kQuantity{"resource Quantity", {{1, "string", Type::kString}}};

const Message kTime{"meta/v1 Time",
                    {{1, "seconds", Type::kInt64}, {2, "nanos", Type::kInt32}}};

const Message kTypeMeta{
    "runtime TypeMeta",
    {{1, "apiVersion", Type::kString}, {2, "kind", Type::kString}}};

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

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return false;
      uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool Bytes(std::string_view* out) {
    uint64_t n;
    if (!Varint(&n) || n > data_.size() - pos_) return false;
    *out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool Skip(int wire) {
    uint64_t v;
    std::string_view s;
    switch (wire) {
      case 0:
        return Varint(&v);
      case 1:
        if (data_.size() - pos_ < 8) return false;
        pos_ += 8;
        return true;
      case 2:
        return Bytes(&s);
      case 5:
        if (data_.size() - pos_ < 4) return false;
        pos_ += 4;
        return true;
      default:
        return false;
    }
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

absl::Status Malformed() {
  return absl::InvalidArgumentError("malformed protobuf body");
}

// A field this decoder does not know: refused rather than dropped, so that
// nothing a client sent is lost; the caller answers 415 and the client can
// send JSON or YAML instead.
absl::Status UnknownField(const Message& m, uint64_t number) {
  return absl::UnimplementedError(
      Cat("protobuf field ", number, " of ", m.name,
          " is not supported; send the object as JSON or YAML"));
}

constexpr int kMaxDepth = 32;

absl::Status Decode(std::string_view data, const Message& m,
                    rapidjson::Value* out, Allocator& a, int depth);

// Reads a map entry {1: key, 2: value}; the value is left as its bytes.
// Both point into `data`.
absl::Status DecodeMapEntry(std::string_view data, std::string_view* key,
                            std::string_view* value) {
  // A missing key or value is the empty string, as in Go; and never a null
  // pointer, which RapidJSON refuses to make a string of.
  *key = std::string_view("", 0);
  *value = std::string_view("", 0);
  Reader r(data);
  while (!r.done()) {
    uint64_t tag;
    if (!r.Varint(&tag)) return Malformed();
    int wire = static_cast<int>(tag & 7);
    uint64_t num = tag >> 3;
    if (wire == 2 && (num == 1 || num == 2)) {
      std::string_view s;
      if (!r.Bytes(&s)) return Malformed();
      if (num == 1) {
        *key = s;
      } else {
        *value = s;
      }
    } else if (!r.Skip(wire)) {
      return Malformed();
    }
  }
  return absl::OkStatus();
}

// metav1.Time: empty for the zero time, which Go's JSON writes as null.
absl::Status DecodeTime(std::string_view data, rapidjson::Value* out,
                        Allocator& a, int depth) {
  if (data.empty()) {
    out->SetNull();
    return absl::OkStatus();
  }
  rapidjson::Value t(rapidjson::kObjectType);
  if (absl::Status s = Decode(data, kTime, &t, a, depth + 1); !s.ok()) return s;
  int64_t seconds = t.HasMember("seconds") ? t["seconds"].GetInt64() : 0;
  std::string text = api::FormatRfc3339(absl::FromUnixSeconds(seconds));
  out->SetString(text.c_str(), static_cast<rapidjson::SizeType>(text.size()),
                 a);
  return absl::OkStatus();
}

// intstr.IntOrString {type, intVal, strVal}: type 1 is a string.
absl::Status DecodeIntOrString(std::string_view data, rapidjson::Value* out,
                               Allocator& a, int depth) {
  rapidjson::Value v(rapidjson::kObjectType);
  if (absl::Status s = Decode(data, kIntOrString, &v, a, depth + 1); !s.ok()) {
    return s;
  }
  int64_t type = v.HasMember("type") ? v["type"].GetInt64() : 0;
  if (type == 1) {
    if (v.HasMember("strVal")) {
      out->CopyFrom(v["strVal"], a);
    } else {
      out->SetString("", a);
    }
  } else if (type == 0) {
    out->SetInt(v.HasMember("intVal") ? v["intVal"].GetInt() : 0);
  } else {
    return absl::InvalidArgumentError(
        Cat("malformed protobuf body: IntOrString type ", type));
  }
  return absl::OkStatus();
}

// resource.Quantity {string}: its canonical string ("0" when unset, as Go
// prints the zero Quantity).
absl::Status DecodeQuantity(std::string_view data, rapidjson::Value* out,
                            Allocator& a, int depth) {
  rapidjson::Value v(rapidjson::kObjectType);
  if (absl::Status s = Decode(data, kQuantity, &v, a, depth + 1); !s.ok()) {
    return s;
  }
  if (v.HasMember("string")) {
    out->CopyFrom(v["string"], a);
  } else {
    out->SetString("0", a);
  }
  return absl::OkStatus();
}

bool IsScalar(Type t) {
  return t == Type::kString || t == Type::kBytes || t == Type::kInt64 ||
         t == Type::kInt32 || t == Type::kBool;
}

bool IsZero(const rapidjson::Value& v) {
  if (v.IsString()) return v.GetStringLength() == 0;
  if (v.IsBool()) return !v.GetBool();
  if (v.IsInt64()) return v.GetInt64() == 0;
  return false;
}

// The member `name` of `out`, added as an empty `type` when missing.
rapidjson::Value& Member(rapidjson::Value* out, const char* name,
                         rapidjson::Type type, Allocator& a) {
  auto it = out->FindMember(name);
  if (it != out->MemberEnd()) return it->value;
  out->AddMember(rapidjson::StringRef(name), rapidjson::Value(type), a);
  return out->MemberEnd()[-1].value;
}

// A length-delimited scalar: a field's value or a map entry's.
absl::Status DecodeDelimited(Type type, std::string_view s,
                             rapidjson::Value* out, Allocator& a, int depth) {
  switch (type) {
    case Type::kString:
      out->SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
      return absl::OkStatus();
    case Type::kBytes: {
      std::string b64 = absl::Base64Escape(ToAbsl(s));
      out->SetString(b64.c_str(), a);
      return absl::OkStatus();
    }
    case Type::kTime:
      return DecodeTime(s, out, a, depth);
    case Type::kIntOrString:
      return DecodeIntOrString(s, out, a, depth);
    case Type::kQuantity:
      return DecodeQuantity(s, out, a, depth);
    default:
      return Malformed();
  }
}

// The type of a map field's values.
Type MapValueType(Type map) {
  switch (map) {
    case Type::kBytesMap:
      return Type::kBytes;
    case Type::kQuantityMap:
      return Type::kQuantity;
    default:
      return Type::kString;
  }
}

absl::Status Decode(std::string_view data, const Message& m,
                    rapidjson::Value* out, Allocator& a, int depth) {
  if (depth > kMaxDepth) return Malformed();
  Reader r(data);
  while (!r.done()) {
    uint64_t tag;
    if (!r.Varint(&tag)) return Malformed();
    int wire = static_cast<int>(tag & 7);
    const Field* f = m.Find(static_cast<int>(tag >> 3));
    if (f == nullptr) {
      // Check the rest is well formed first: malformed input stays a 400.
      if (!r.Skip(wire)) return Malformed();
      return UnknownField(m, tag >> 3);
    }
    rapidjson::Value value;
    if (f->type == Type::kInt64 || f->type == Type::kInt32 ||
        f->type == Type::kBool) {
      uint64_t v;
      if (wire != 0 || !r.Varint(&v)) return Malformed();
      if (f->type == Type::kBool) {
        value.SetBool(v != 0);
      } else if (f->type == Type::kInt32) {
        // Negative int32s are sent sign-extended to 64 bits; Go keeps the
        // low 32 bits.
        value.SetInt(static_cast<int32_t>(static_cast<uint32_t>(v)));
      } else {
        value.SetInt64(static_cast<int64_t>(v));
      }
    } else {
      std::string_view s;
      if (wire != 2 || !r.Bytes(&s)) return Malformed();
      absl::Status st;
      switch (f->type) {
        case Type::kString:
        case Type::kBytes:
        case Type::kTime:
        case Type::kIntOrString:
        case Type::kQuantity:
          st = DecodeDelimited(f->type, s, &value, a, depth);
          break;
        case Type::kInline:
          st = Decode(s, *f->message, out, a, depth + 1);
          if (!st.ok()) return st;
          continue;
        case Type::kMessage:
          if (!(f->flags & kRepeated)) {
            // A message sent twice is merged, as protobuf does.
            rapidjson::Value& existing =
                Member(out, f->json, rapidjson::kObjectType, a);
            if (!existing.IsObject()) existing.SetObject();
            st = Decode(s, *f->message, &existing, a, depth + 1);
            if (!st.ok()) return st;
            continue;
          }
          value.SetObject();
          st = Decode(s, *f->message, &value, a, depth + 1);
          break;
        case Type::kStringMap:
        case Type::kBytesMap:
        case Type::kQuantityMap: {
          std::string_view key;
          std::string_view raw;
          st = DecodeMapEntry(s, &key, &raw);
          if (!st.ok()) return st;
          rapidjson::Value v;
          st = DecodeDelimited(MapValueType(f->type), raw, &v, a, depth);
          if (!st.ok()) return st;
          rapidjson::Value& map =
              Member(out, f->json, rapidjson::kObjectType, a);
          rapidjson::Value name(
              key.data(), static_cast<rapidjson::SizeType>(key.size()), a);
          auto it = map.FindMember(name);
          if (it != map.MemberEnd()) {
            it->value = v;  // the last entry for a key wins, as in Go
          } else {
            map.AddMember(name, v, a);
          }
          continue;
        }
        default:
          return Malformed();
      }
      if (!st.ok()) return st;
    }
    if (f->flags & kRepeated) {
      Member(out, f->json, rapidjson::kArrayType, a).PushBack(value, a);
    } else if (IsScalar(f->type) && !(f->flags & kKeepZero) && IsZero(value)) {
      out->RemoveMember(f->json);  // the last value wins, and it is empty
    } else {
      Member(out, f->json, rapidjson::kNullType, a) = value;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> KubernetesProtobufToJson(std::string_view body) {
  static constexpr std::string_view kMagic("k8s\0", 4);
  if (body.substr(0, 4) != kMagic) {
    return absl::InvalidArgumentError("protobuf body without the k8s magic");
  }
  Reader r(body.substr(4));
  std::string api_version, kind;
  std::string_view raw;
  while (!r.done()) {
    uint64_t tag;
    if (!r.Varint(&tag)) return Malformed();
    int wire = static_cast<int>(tag & 7);
    uint64_t num = tag >> 3;
    if (wire == 2 && num == 1) {
      std::string_view tm;
      if (!r.Bytes(&tm)) return Malformed();
      rapidjson::Document d(rapidjson::kObjectType);
      if (absl::Status s = Decode(tm, kTypeMeta, &d, d.GetAllocator(), 0);
          !s.ok()) {
        return s;
      }
      if (d.HasMember("apiVersion")) api_version = d["apiVersion"].GetString();
      if (d.HasMember("kind")) kind = d["kind"].GetString();
    } else if (wire == 2 && num == 2) {
      if (!r.Bytes(&raw)) return Malformed();
    } else if (!r.Skip(wire)) {
      return Malformed();
    }
  }
  // A body cut short can still end on a field boundary; kubectl always sends
  // both the type and the object.
  if (kind.empty() || raw.empty()) {
    return absl::InvalidArgumentError(
        "malformed protobuf body: no kind or no object in the envelope");
  }
  static const std::map<std::pair<std::string, std::string>, const Message*>
      kKinds = {
          {{"v1", "Namespace"}, &kNamespace},
          {{"v1", "ConfigMap"}, &kConfigMap},
          {{"v1", "Secret"}, &kSecret},
          {{"v1", "ServiceAccount"}, &kServiceAccount},
          {{"v1", "Pod"}, &kPod},
          {{"v1", "Service"}, &kService},
          {{"apps/v1", "Deployment"}, &kDeployment},
          {{"rbac.authorization.k8s.io/v1", "Role"}, &kRole},
          {{"rbac.authorization.k8s.io/v1", "ClusterRole"}, &kClusterRole},
          {{"rbac.authorization.k8s.io/v1", "RoleBinding"}, &kRoleBinding},
          {{"rbac.authorization.k8s.io/v1", "ClusterRoleBinding"},
           &kClusterRoleBinding},
          {{"authorization.k8s.io/v1", "SelfSubjectAccessReview"},
           &kSelfSubjectAccessReview},
          {{"authorization.k8s.io/v1", "SelfSubjectRulesReview"},
           &kSelfSubjectRulesReview}};
  auto it = kKinds.find({api_version, kind});
  // DeleteOptions is registered in every group version (and meta.k8s.io/v1);
  // clients send it under the group version of the resource they delete.
  const Message* message = it == kKinds.end() ? nullptr : it->second;
  if (kind == "DeleteOptions") message = &kDeleteOptions;
  if (message == nullptr) {
    return absl::UnimplementedError(
        Cat("protobuf is not supported for ", api_version, " ", kind));
  }
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("apiVersion", rapidjson::Value(api_version.c_str(), a), a);
  d.AddMember("kind", rapidjson::Value(kind.c_str(), a), a);
  if (absl::Status s = Decode(raw, *message, &d, a, 0); !s.ok()) return s;
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  d.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace apiserver
}  // namespace kcr
