// kubectl against the kinds operators' manifests carry besides Deployments
// (StatefulSets, DaemonSets, Jobs, CronJobs, PDBs, HPAs, Ingresses, PVCs,
// webhooks, APIServices...): one multi-document manifest of every kind
// applies in one `kubectl apply -f`, `kubectl get` shows kube's columns,
// patch, scale and delete work, invalid specs get kube's 422 causes, and
// `kubectl cluster-info dump` completes.
#include <string>
#include <vector>

#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_apiserver_fixture.h"
#include "test/integration/kubectl_harness.h"

namespace kcr::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPodTemplate[] = R"(
    metadata: {labels: {app: APP}}
    spec:
      containers: [{name: c, image: busybox}])";

std::string Replace(std::string s, const std::string& from,
                    const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

std::string Template(const std::string& app, int indent = 0) {
  std::string t = Replace(kPodTemplate, "APP", app);
  return Replace(t, "\n", "\n" + std::string(indent, ' '));
}

// One object of every kind the server serves beside the ones it had.
std::string EveryKindManifest() {
  return R"(apiVersion: v1
kind: ReplicationController
metadata: {name: rc}
spec:
  replicas: 2
  template:)" +
         Template("rc") + R"(
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /tmp/pv}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PodTemplate
metadata: {name: tmpl}
template:)" +
         Template("tmpl") +
         R"(
---
apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec:
  limits: [{type: Container, default: {cpu: 500m}}]
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: quota}
spec: {hard: {pods: "10"}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:)" +
         Template("db") + R"(
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:)" +
         Template("agent") + R"(
---
apiVersion: apps/v1
kind: ControllerRevision
metadata: {name: db-1}
revision: 1
data: {}
---
apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  template:
    # Runs for the whole test, so that its status is what the test writes.
    metadata: {annotations: {kcr.io/sim-complete-after: 1h}}
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: perl}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: c, image: busybox}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 5
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: db}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: nginx
  rules:
  - host: web.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny}
spec: {podSelector: {}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: example.com/fast
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va}
spec:
  attacher: csi.example.com
  nodeName: node-1
  source: {persistentVolumeName: pv}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: check}
webhooks:
- name: check.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {url: "https://example.com/check"}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: mutate}
webhooks:
- name: mutate.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {url: "https://example.com/mutate"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  validations: [{expression: "object.spec.replicas <= 5"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas}
spec: {policyName: replicas, validationActions: [Deny]}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1alpha1.example.com}
spec: {group: example.com, version: v1alpha1, groupPriorityMinimum: 100, versionPriority: 10}
---
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: me}
spec:
  request: LS0tLS1CRUdJTg==
  signerName: example.com/signer
  usages: [client auth]
)";
}

class KubectlBuiltinKindsTest : public KubectlApiServerFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.controllers.node_simulator = false;
    // The stored objects as created: no pods, no status from controllers.
    options.controllers.replicationcontroller_controller = false;
    ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
  }

  KubectlResult Apply(const std::string& yaml) {
    return kubectl_->Run({"apply", "-f", "-"}, yaml);
  }

  std::vector<std::vector<std::string>> Get(
      const std::vector<std::string>& args, size_t age_column) {
    std::vector<std::string> all = {"get"};
    all.insert(all.end(), args.begin(), args.end());
    KubectlResult r = kubectl_->Run(all);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return WithoutColumn(KubectlHarness::Columns(r.out), age_column);
  }
};

TEST_F(KubectlBuiltinKindsTest, OneManifestOfEveryKindAppliesAndLists) {
  KubectlResult r = Apply(EveryKindManifest());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("replicationcontroller/rc created"));
  EXPECT_THAT(r.out, HasSubstr("statefulset.apps/db created"));
  EXPECT_THAT(r.out, HasSubstr("certificatesigningrequest.certificates.k8s.io/"
                               "me created"));
  for (const char* kind : {"rc",
                           "pv",
                           "pvc",
                           "podtemplates",
                           "limits",
                           "quota",
                           "sts",
                           "ds",
                           "controllerrevisions",
                           "jobs",
                           "cj",
                           "hpa",
                           "pdb",
                           "ing",
                           "ingressclasses",
                           "netpol",
                           "sc",
                           "csidrivers",
                           "volumeattachments",
                           "pc",
                           "validatingwebhookconfigurations",
                           "mutatingwebhookconfigurations",
                           "validatingadmissionpolicies",
                           "validatingadmissionpolicybindings",
                           "apiservices",
                           "csr"}) {
    KubectlResult got = kubectl_->Run({"get", kind});
    EXPECT_EQ(got.exit_code, 0) << kind << ": " << got.err;
    EXPECT_GE(KubectlHarness::Columns(got.out).size(), 2u)
        << kind << ": " << got.out;
  }
  // Applied again: the workloads are unchanged (kinds whose lists kubectl
  // replaces whole, a PDB's selector or a webhook's rules, report
  // "configured" on a cluster too).
  r = Apply(EveryKindManifest());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name :
       {"replicationcontroller/rc", "statefulset.apps/db",
        "daemonset.apps/agent", "job.batch/pi", "cronjob.batch/nightly",
        "horizontalpodautoscaler.autoscaling/web",
        "ingress.networking.k8s.io/web", "persistentvolumeclaim/data"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string(name) + " unchanged"));
  }

  EXPECT_THAT(Get({"sts"}, 2), ElementsAre(ElementsAre("NAME", "READY"),
                                           ElementsAre("db", "0/3")));
  EXPECT_THAT(
      Get({"ds"}, 7),
      ElementsAre(ElementsAre("NAME", "DESIRED", "CURRENT", "READY",
                              "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR"),
                  ElementsAre("agent", "0", "0", "0", "0", "0", "<none>")));
  EXPECT_THAT(
      Get({"rc", "-o", "wide"}, 4),
      ElementsAre(ElementsAre("NAME", "DESIRED", "CURRENT", "READY",
                              "CONTAINERS", "IMAGES", "SELECTOR"),
                  ElementsAre("rc", "2", "0", "0", "c", "busybox", "app=rc")));
  // A Job that has not started has an empty duration (the harness splits
  // cells at runs of spaces, so the empty cell disappears).
  EXPECT_THAT(
      Get({"jobs"}, 4),
      ElementsAre(ElementsAre("NAME", "STATUS", "COMPLETIONS", "DURATION"),
                  ElementsAre("pi", "Running", "0/1", testing::_)));
  EXPECT_THAT(Get({"cj"}, 6),
              ElementsAre(ElementsAre("NAME", "SCHEDULE", "TIMEZONE", "SUSPEND",
                                      "ACTIVE", "LAST SCHEDULE"),
                          ElementsAre("nightly", "0 3 * * *", "<none>", "False",
                                      "0", "<none>")));
  EXPECT_THAT(Get({"hpa"}, 6),
              ElementsAre(ElementsAre("NAME", "REFERENCE", "TARGETS", "MINPODS",
                                      "MAXPODS", "REPLICAS"),
                          ElementsAre("web", "Deployment/web",
                                      "cpu: <unknown>/80%", "2", "5", "0")));
  EXPECT_THAT(Get({"pdb"}, 4),
              ElementsAre(ElementsAre("NAME", "MIN AVAILABLE",
                                      "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS"),
                          ElementsAre("db", "2", "N/A", "0")));
  // Empty cells (no address, no volume yet) vanish from the split rows.
  EXPECT_THAT(
      Get({"ing"}, 5),
      ElementsAre(
          ElementsAre("NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS"),
          ElementsAre("web", "nginx", "web.example.com", "80", testing::_)));
  EXPECT_THAT(
      Get({"pvc"}, 7),
      ElementsAre(
          ElementsAre("NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES",
                      "STORAGECLASS", "VOLUMEATTRIBUTESCLASS"),
          ElementsAre("data", "Pending", "<unset>", testing::_)));
  EXPECT_THAT(
      Get({"pc"}, 3),
      ElementsAre(
          ElementsAre("NAME", "VALUE", "GLOBAL-DEFAULT", "PREEMPTIONPOLICY"),
          ElementsAre("high", "1000", "false", "PreemptLowerPriority"),
          ElementsAre("system-cluster-critical", "2000000000", "false",
                      "PreemptLowerPriority"),
          ElementsAre("system-node-critical", "2000001000", "false",
                      "PreemptLowerPriority")));
  EXPECT_THAT(
      Get({"apiservices", "v1.apps", "v1alpha1.example.com"}, 3),
      ElementsAre(ElementsAre("NAME", "SERVICE", "AVAILABLE"),
                  ElementsAre("v1.apps", "Local", "True"),
                  ElementsAre("v1alpha1.example.com", "Local", "True")));

  // The category "all" now takes in the workloads.
  r = kubectl_->Run({"get", "all", "-o", "name"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name :
       {"replicationcontroller/rc", "statefulset.apps/db",
        "daemonset.apps/agent", "job.batch/pi", "cronjob.batch/nightly",
        "horizontalpodautoscaler.autoscaling/web"}) {
    EXPECT_THAT(r.out, HasSubstr(name));
  }
}

TEST_F(KubectlBuiltinKindsTest, PatchScaleAndDelete) {
  ASSERT_EQ(Apply(EveryKindManifest()).exit_code, 0);
  KubectlResult r = kubectl_->Run({"scale", "sts", "db", "--replicas=5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("statefulset.apps/db scaled"));
  r = kubectl_->Run({"scale", "rc", "rc", "--replicas=4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl_->Run({"get", "rc", "rc", "-o", "jsonpath={.spec.replicas}"});
  EXPECT_EQ(r.out, "4");
  r = kubectl_->Run({"get", "--raw",
                     "/api/v1/namespaces/default/replicationcontrollers/rc/"
                     "scale"});
  EXPECT_THAT(r.out, HasSubstr(R"("selector":"app=rc")"));

  // Strategic merge, merge and JSON patches.
  r = kubectl_->Run(
      {"patch", "cj", "nightly", "-p", R"({"spec":{"suspend":true}})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl_->Run({"patch", "hpa", "web", "--type=merge", "-p",
                     R"({"spec":{"maxReplicas":9}})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl_->Run(
      {"patch", "pdb", "db", "--type=json", "-p",
       R"([{"op":"replace","path":"/spec/minAvailable","value":"50%"}])"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Get({"cj", "nightly"}, 6),
              ElementsAre(ElementsAre("NAME", "SCHEDULE", "TIMEZONE", "SUSPEND",
                                      "ACTIVE", "LAST SCHEDULE"),
                          ElementsAre("nightly", "0 3 * * *", "<none>", "True",
                                      "0", "<none>")));
  // The same object at autoscaling/v1.
  r = kubectl_->Run({"get", "--raw",
                     "/apis/autoscaling/v1/namespaces/default/"
                     "horizontalpodautoscalers/web"});
  EXPECT_THAT(r.out, HasSubstr(R"("apiVersion":"autoscaling/v1")"));
  EXPECT_THAT(r.out, HasSubstr(R"("maxReplicas":9)"));
  EXPECT_THAT(r.out, HasSubstr(R"("targetCPUUtilizationPercentage":80)"));
  r = kubectl_->Run(
      {"get", "pdb", "db", "-o", "jsonpath={.spec.minAvailable}"});
  EXPECT_EQ(r.out, "50%");

  // A status write through the subresource.
  r = kubectl_->Run({"patch", "job", "pi", "--subresource=status",
                     "--type=merge", "-p",
                     R"({"status":{"succeeded":1,"conditions":[)"
                     R"({"type":"Complete","status":"True"}]}})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(
      Get({"job", "pi"}, 4),
      ElementsAre(ElementsAre("NAME", "STATUS", "COMPLETIONS", "DURATION"),
                  ElementsAre("pi", "Complete", "1/1", testing::_)));

  for (const char* what :
       {"sts/db", "ds/agent", "job/pi", "cj/nightly", "hpa/web", "pdb/db",
        "pvc/data", "pv/pv", "ing/web", "pc/high", "csr/me"}) {
    r = kubectl_->Run({"delete", what});
    EXPECT_EQ(r.exit_code, 0) << what << ": " << r.err;
  }
  r = kubectl_->Run({"get", "sts,ds,jobs,cj,hpa,pdb,pvc,ing"});
  EXPECT_THAT(r.err, HasSubstr("No resources found"));
}

TEST_F(KubectlBuiltinKindsTest, InvalidSpecsGetKubesCauses) {
  struct Case {
    const char* yaml;
    const char* cause;
  };
  const Case cases[] = {
      {R"(apiVersion: apps/v1
kind: StatefulSet
metadata: {name: bad}
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: busybox}]}
)",
       R"(spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`)"},
      {R"(apiVersion: apps/v1
kind: DaemonSet
metadata: {name: bad}
spec:
  template:
    metadata: {labels: {app: a}}
    spec: {containers: [{name: c, image: busybox}]}
)",
       "spec.selector: Required value"},
      {R"(apiVersion: batch/v1
kind: Job
metadata: {name: bad}
spec:
  template:
    spec: {containers: [{name: c, image: busybox}]}
)",
       R"(spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never")"},
      {R"(apiVersion: batch/v1
kind: CronJob
metadata: {name: bad}
spec:
  schedule: "not a schedule"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
)",
       R"(spec.schedule: Invalid value: "not a schedule": expected exactly 5 fields, found 3: [not a schedule])"},
      {R"(apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: bad}
spec: {minAvailable: 1, maxUnavailable: 1}
)",
       "minAvailable and maxUnavailable cannot be both set"},
      {R"(apiVersion: v1
kind: ReplicationController
metadata: {name: bad}
spec:
  selector: {app: api}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: busybox}]}
)",
       "`selector` does not match template `labels`"},
      {R"(apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: bad}
spec: {resources: {requests: {storage: 1Gi}}}
)",
       "spec.accessModes: Required value: at least 1 access mode is required"},
      {R"(apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: bad}
spec:
  scaleTargetRef: {kind: Deployment, name: web}
  minReplicas: 0
  maxReplicas: 3
)",
       "spec.minReplicas: Invalid value: 0: must be greater than or equal to "
       "1"},
      {R"(apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: bad}
spec:
  rules:
  - http:
      paths:
      - {path: /, backend: {service: {name: web, port: {number: 80}}}}
)",
       "spec.rules[0].http.paths[0].pathType: Required value: pathType must be "
       "specified"},
  };
  for (const Case& c : cases) {
    KubectlResult r = kubectl_->Run({"create", "-f", "-"}, c.yaml);
    EXPECT_NE(r.exit_code, 0) << c.yaml;
    EXPECT_THAT(r.err, HasSubstr("is invalid")) << c.yaml;
    EXPECT_THAT(r.err, HasSubstr(c.cause)) << c.yaml;
  }
  // The server is still there.
  EXPECT_EQ(kubectl_->Run({"get", "sts,ds,jobs,cj,pdb"}).exit_code, 0);
}

TEST_F(KubectlBuiltinKindsTest, EventsServedAtEventsK8sIo) {
  KubectlResult r = kubectl_->Run({"create", "-f", "-"}, R"(apiVersion: v1
kind: Event
metadata: {name: started}
involvedObject: {kind: Pod, name: web, namespace: default}
reason: Started
message: container started
type: Normal
)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl_->Run({"get", "events.v1.events.k8s.io", "started", "-o",
                     "jsonpath={.apiVersion} {.regarding.name} {.note}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "events.k8s.io/v1 web container started");
  // kubectl get events still shows the core columns.
  r = kubectl_->Run({"get", "events"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("container started"));
}

// The remaining kinds a 1.33 cluster serves by default, with the objects
// kube-apiserver writes into a new cluster and kube's columns.
TEST_F(KubectlBuiltinKindsTest, ClusterConfigurationKinds) {
  KubectlResult r = Apply(R"(apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: kcr-node}
spec:
  drivers: [{name: csi.example.com, nodeID: n1}]
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap}
storageClassName: standard
capacity: 10Gi
---
apiVersion: networking.k8s.io/v1
kind: IPAddress
metadata: {name: 10.96.7.7}
spec:
  parentRef: {group: "", resource: services, namespace: default, name: web}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: batch}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 10
    limitResponse:
      type: Queue
      queuing: {queues: 16, handSize: 4, queueLengthLimit: 50}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: batch}
spec:
  priorityLevelConfiguration: {name: batch}
  matchingPrecedence: 500
  distinguisherMethod: {type: ByNamespace}
  rules:
  - subjects: [{kind: ServiceAccount, serviceAccount: {name: loader, namespace: default}}]
    resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"]}]
)");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(Get({"runtimeclasses"}, 2),
              ElementsAre(ElementsAre("NAME", "HANDLER"),
                          ElementsAre("gvisor", "runsc")));
  EXPECT_THAT(Get({"csinodes"}, 2), ElementsAre(ElementsAre("NAME", "DRIVERS"),
                                                ElementsAre("kcr-node", "1")));
  EXPECT_THAT(Get({"ip"}, 9),
              ElementsAre(ElementsAre("NAME", "PARENTREF"),
                          ElementsAre("10.96.7.7", "services/default/web")));
  EXPECT_THAT(Get({"servicecidrs"}, 2),
              ElementsAre(ElementsAre("NAME", "CIDRS"),
                          ElementsAre("kubernetes", "10.96.0.0/12")));
  EXPECT_THAT(
      Get({"prioritylevelconfigurations"}, 6),
      ElementsAre(ElementsAre("NAME", "TYPE", "NOMINALCONCURRENCYSHARES",
                              "QUEUES", "HANDSIZE", "QUEUELENGTHLIMIT"),
                  ElementsAre("batch", "Limited", "10", "16", "4", "50"),
                  ElementsAre("catch-all", "Limited", "5", "<none>", "<none>",
                              "<none>"),
                  ElementsAre("exempt", "Exempt", "<none>", "<none>", "<none>",
                              "<none>")));
  EXPECT_THAT(
      Get({"flowschemas"}, 4),
      ElementsAre(ElementsAre("NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE",
                              "DISTINGUISHERMETHOD", "MISSINGPL"),
                  ElementsAre("batch", "batch", "500", "ByNamespace", "?"),
                  ElementsAre("catch-all", "catch-all", "10000", "ByUser", "?"),
                  ElementsAre("exempt", "exempt", "1", "<none>", "?")));
  r = kubectl_->Run(
      {"get", "csistoragecapacities", "cap", "-o", "jsonpath={.capacity}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "10Gi");
  r = kubectl_->Run({"explain", "flowschema.spec.rules"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("resourceRules"));
}

TEST_F(KubectlBuiltinKindsTest, ClusterInfoDumpCompletes) {
  ASSERT_EQ(Apply(EveryKindManifest()).exit_code, 0);
  KubectlResult r = kubectl_->Run(
      {"cluster-info", "dump", "--namespaces", "default,kube-system"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"kind\": \"ReplicationControllerList\""));
  EXPECT_THAT(r.out, HasSubstr("\"kind\": \"DaemonSetList\""));
  EXPECT_THAT(r.out, HasSubstr("\"name\": \"agent\""));
}

}  // namespace
}  // namespace kcr::integration
