// The official Python client (Debian's python3-kubernetes, run with
// /usr/bin/python3) against the workload, policy, autoscaling, networking,
// scheduling, admission and apiregistration kinds: typed create, read,
// patch, scale, list and delete decode into the client's models, and an
// invalid spec raises ApiException 422 with kube's cause.
#include <unistd.h>

#include <memory>
#include <string>

#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/process_util.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;

constexpr char kPython[] = "/usr/bin/python3";

constexpr char kPrelude[] = R"(
import json, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=sys.argv[1])
core = client.CoreV1Api()
apps = client.AppsV1Api()
batch = client.BatchV1Api()
autoscaling = client.AutoscalingV1Api()
policy = client.PolicyV1Api()
networking = client.NetworkingV1Api()
scheduling = client.SchedulingV1Api()
admission = client.AdmissionregistrationV1Api()
apiregistration = client.ApiregistrationV1Api()
def template(app, restart=None):
    return client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels={"app": app}),
        spec=client.V1PodSpec(restart_policy=restart, containers=[
            client.V1Container(name="c", image="busybox")]))
def meta(name):
    return client.V1ObjectMeta(name=name)
)";

class PythonBuiltinKindsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ApiServerOptions options;
    options.controllers.node_simulator = false;
    Start(std::move(options));
  }

  void Start(ApiServerOptions options) {
    ASSERT_EQ(access(kPython, X_OK), 0) << kPython << " is missing";
    ProcessResult probe = RunProcess({kPython, "-c", "import kubernetes"}, {});
    ASSERT_EQ(probe.exit_code, 0)
        << "the Python Kubernetes client (python3-kubernetes) is missing: "
        << probe.err;
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    const char* tmp = getenv("TEST_TMPDIR");
    kubeconfig_ = std::string(tmp != nullptr ? tmp : "/tmp") + "/kubeconfig-" +
                  std::to_string(getpid());
    ASSERT_TRUE(server_->WriteKubeconfig(kubeconfig_).ok());
  }

  std::string Run(const std::string& body) {
    ProcessResult r = RunProcess(
        {kPython, "-c", std::string(kPrelude) + body, kubeconfig_}, {});
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    return r.out;
  }

  std::unique_ptr<ApiServer> server_;
  std::string kubeconfig_;
};

// The same client watching the workload controllers at work on three
// simulated nodes: a Job runs to Complete, a StatefulSet's ordinal pods
// become ready, a DaemonSet puts a pod on each node.
class PythonWorkloadControllersTest : public PythonBuiltinKindsTest {
 protected:
  void SetUp() override {
    ApiServerOptions options;
    options.controllers.node.nodes = 3;
    options.controllers.node.running_after = absl::Milliseconds(100);
    Start(std::move(options));
  }
};

TEST_F(PythonWorkloadControllersTest, JobStatefulSetAndDaemonSetProgress) {
  std::string out = Run(R"(
import time
from kubernetes import watch
def sleeper(app, seconds):
    return client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels={"app": app}),
        spec=client.V1PodSpec(restart_policy="Never", containers=[
            client.V1Container(name="c", image="busybox",
                               command=["sh", "-c", "sleep %d" % seconds])]))
batch.create_namespaced_job("default", client.V1Job(
    metadata=meta("once"), spec=client.V1JobSpec(
        completions=2, parallelism=2, template=sleeper("once", 1))))
done = None
for event in watch.Watch().stream(batch.list_namespaced_job, "default",
                                  field_selector="metadata.name=once",
                                  timeout_seconds=30):
    job = event["object"]
    conditions = [c.type for c in (job.status.conditions or [])]
    if "Complete" in conditions:
        done = job
        break
print("job", done.status.succeeded, done.status.completion_time is not None,
      [c.type for c in done.status.conditions])
pods = core.list_namespaced_pod("default", label_selector="job-name=once").items
print("job-pods", len(pods), sorted({p.status.phase for p in pods}))
apps.create_namespaced_stateful_set("default", client.V1StatefulSet(
    metadata=meta("db"), spec=client.V1StatefulSetSpec(
        service_name="db", replicas=2,
        selector=client.V1LabelSelector(match_labels={"app": "db"}),
        template=template("db"))))
apps.create_namespaced_daemon_set("default", client.V1DaemonSet(
    metadata=meta("agent"), spec=client.V1DaemonSetSpec(
        selector=client.V1LabelSelector(match_labels={"app": "agent"}),
        template=template("agent"))))
deadline = time.time() + 30
while time.time() < deadline:
    sts = apps.read_namespaced_stateful_set_status("db", "default")
    ds = apps.read_namespaced_daemon_set_status("agent", "default")
    if sts.status.ready_replicas == 2 and ds.status.number_ready == 3:
        break
    time.sleep(0.2)
print("sts", sts.status.ready_replicas, sts.status.current_revision == sts.status.update_revision)
print("sts-pods", sorted(p.metadata.name for p in core.list_namespaced_pod(
    "default", label_selector="app=db").items))
print("ds", ds.status.desired_number_scheduled, ds.status.number_ready)
print("ds-nodes", len({p.spec.node_name for p in core.list_namespaced_pod(
    "default", label_selector="app=agent").items}))
)");
  EXPECT_THAT(out,
              HasSubstr("job 2 True ['SuccessCriteriaMet', 'Complete']\n"));
  EXPECT_THAT(out, HasSubstr("job-pods 2 ['Succeeded']\n"));
  EXPECT_THAT(out, HasSubstr("sts 2 True\n"));
  EXPECT_THAT(out, HasSubstr("sts-pods ['db-0', 'db-1']\n"));
  EXPECT_THAT(out, HasSubstr("ds 3 3\n"));
  EXPECT_THAT(out, HasSubstr("ds-nodes 3\n"));
}

TEST_F(PythonBuiltinKindsTest, WorkloadsCrudAndScale) {
  std::string out = Run(R"(
sts = apps.create_namespaced_stateful_set("default", client.V1StatefulSet(
    metadata=meta("db"), spec=client.V1StatefulSetSpec(
        service_name="db", replicas=2,
        selector=client.V1LabelSelector(match_labels={"app": "db"}),
        template=template("db"))))
print("sts", sts.spec.pod_management_policy, sts.status.replicas)
apps.patch_namespaced_stateful_set_scale("db", "default", {"spec": {"replicas": 4}})
print("scaled", apps.read_namespaced_stateful_set("db", "default").spec.replicas)
ds = apps.create_namespaced_daemon_set("default", client.V1DaemonSet(
    metadata=meta("agent"), spec=client.V1DaemonSetSpec(
        selector=client.V1LabelSelector(match_labels={"app": "agent"}),
        template=template("agent"))))
print("ds", ds.spec.update_strategy.type, ds.status.desired_number_scheduled)
rc = core.create_namespaced_replication_controller("default",
    client.V1ReplicationController(metadata=meta("rc"),
        spec=client.V1ReplicationControllerSpec(template=template("rc"))))
print("rc", rc.spec.selector, rc.spec.replicas)
scale = core.patch_namespaced_replication_controller_scale(
    "rc", "default", {"spec": {"replicas": 3}})
print("rc-scale", scale.spec.replicas, scale.status.selector)
job = batch.create_namespaced_job("default", client.V1Job(
    metadata=meta("pi"), spec=client.V1JobSpec(template=template("pi", "Never"))))
print("job", job.spec.backoff_limit, job.spec.completions,
      sorted(job.spec.selector.match_labels))
cj = batch.create_namespaced_cron_job("default", client.V1CronJob(
    metadata=meta("nightly"), spec=client.V1CronJobSpec(
        schedule="*/10 * * * *",
        job_template=client.V1JobTemplateSpec(
            spec=client.V1JobSpec(template=template("cj", "OnFailure"))))))
print("cj", cj.spec.concurrency_policy, cj.spec.successful_jobs_history_limit)
patched = batch.patch_namespaced_cron_job("nightly", "default", {"spec": {"suspend": True}})
print("cj-suspend", patched.spec.suspend)
try:
    batch.create_namespaced_cron_job("default", client.V1CronJob(
        metadata=meta("bad"), spec=client.V1CronJobSpec(
            schedule="61 * * * *",
            job_template=client.V1JobTemplateSpec(
                spec=client.V1JobSpec(template=template("cj", "OnFailure"))))))
except ApiException as e:
    body = json.loads(e.body)
    print("invalid", e.status, body["details"]["causes"][0]["field"],
          body["details"]["causes"][0]["message"])
print("lists", len(apps.list_namespaced_stateful_set("default").items),
      len(batch.list_job_for_all_namespaces().items))
for delete in (lambda: apps.delete_namespaced_stateful_set("db", "default"),
               lambda: apps.delete_namespaced_daemon_set("agent", "default"),
               lambda: batch.delete_namespaced_job("pi", "default"),
               lambda: batch.delete_namespaced_cron_job("nightly", "default"),
               lambda: core.delete_namespaced_replication_controller("rc", "default")):
    delete()
print("left", len(apps.list_namespaced_stateful_set("default").items))
)");
  EXPECT_THAT(out, HasSubstr("sts OrderedReady 0\n"));
  EXPECT_THAT(out, HasSubstr("scaled 4\n"));
  EXPECT_THAT(out, HasSubstr("ds RollingUpdate 0\n"));
  EXPECT_THAT(out, HasSubstr("rc {'app': 'rc'} 1\n"));
  EXPECT_THAT(out, HasSubstr("rc-scale 3 app=rc\n"));
  EXPECT_THAT(out,
              HasSubstr("job 6 1 ['batch.kubernetes.io/controller-uid']\n"));
  EXPECT_THAT(out, HasSubstr("cj Allow 3\n"));
  EXPECT_THAT(out, HasSubstr("cj-suspend True\n"));
  EXPECT_THAT(out, HasSubstr("invalid 422 spec.schedule Invalid value: \"61 "
                             "* * * *\": end of range (61) above maximum "
                             "(59): 61\n"));
  EXPECT_THAT(out, HasSubstr("lists 1 1\n"));
  EXPECT_THAT(out, HasSubstr("left 0\n"));
}

TEST_F(PythonBuiltinKindsTest, PolicyNetworkingAndClusterKinds) {
  std::string out = Run(R"(
hpa = autoscaling.create_namespaced_horizontal_pod_autoscaler("default",
    client.V1HorizontalPodAutoscaler(metadata=meta("web"),
        spec=client.V1HorizontalPodAutoscalerSpec(
            scale_target_ref=client.V1CrossVersionObjectReference(
                api_version="apps/v1", kind="Deployment", name="web"),
            max_replicas=5, target_cpu_utilization_percentage=70)))
print("hpa", hpa.spec.min_replicas, hpa.spec.target_cpu_utilization_percentage,
      hpa.status.current_replicas)
pdb = policy.create_namespaced_pod_disruption_budget("default",
    client.V1PodDisruptionBudget(metadata=meta("db"),
        spec=client.V1PodDisruptionBudgetSpec(min_available="50%",
            selector=client.V1LabelSelector(match_labels={"app": "db"}))))
print("pdb", pdb.spec.min_available, pdb.status.disruptions_allowed)
try:
    policy.create_namespaced_pod_disruption_budget("default",
        client.V1PodDisruptionBudget(metadata=meta("both"),
            spec=client.V1PodDisruptionBudgetSpec(min_available=1, max_unavailable=1)))
except ApiException as e:
    print("pdb-invalid", e.status, json.loads(e.body)["details"]["causes"][0]["message"])
ing = networking.create_namespaced_ingress("default", client.V1Ingress(
    metadata=meta("web"), spec=client.V1IngressSpec(rules=[client.V1IngressRule(
        host="web.example.com", http=client.V1HTTPIngressRuleValue(paths=[
            client.V1HTTPIngressPath(path="/", path_type="Prefix",
                backend=client.V1IngressBackend(service=client.V1IngressServiceBackend(
                    name="web", port=client.V1ServiceBackendPort(number=80))))]))])))
print("ing", ing.spec.rules[0].host)
pcs = sorted(p.metadata.name for p in scheduling.list_priority_class().items)
print("pcs", pcs)
services = {s.metadata.name: s for s in apiregistration.list_api_service().items}
print("apiservice", services["v1.apps"].status.conditions[0].type,
      services["v1.apps"].status.conditions[0].status, "v1." in services)
hook = admission.create_validating_webhook_configuration(
    client.V1ValidatingWebhookConfiguration(metadata=meta("check"), webhooks=[
        client.V1ValidatingWebhook(name="check.example.com",
            admission_review_versions=["v1"], side_effects="None",
            client_config=client.AdmissionregistrationV1WebhookClientConfig(
                url="https://example.com/check"))]))
print("webhook", hook.webhooks[0].failure_policy, hook.webhooks[0].timeout_seconds)
pvc = core.create_namespaced_persistent_volume_claim("default",
    client.V1PersistentVolumeClaim(metadata=meta("data"),
        spec=client.V1PersistentVolumeClaimSpec(access_modes=["ReadWriteOnce"],
            resources=client.V1ResourceRequirements(requests={"storage": "1Gi"}))))
print("pvc", pvc.status.phase, pvc.spec.volume_mode)
)");
  EXPECT_THAT(out, HasSubstr("hpa 1 70 0\n"));
  EXPECT_THAT(out, HasSubstr("pdb 50% 0\n"));
  EXPECT_THAT(out, HasSubstr("pdb-invalid 422 Invalid value: "
                             "policy.PodDisruptionBudgetSpec{...}: "
                             "minAvailable and maxUnavailable cannot be both "
                             "set\n"));
  EXPECT_THAT(out, HasSubstr("ing web.example.com\n"));
  EXPECT_THAT(out, HasSubstr("pcs ['system-cluster-critical', "
                             "'system-node-critical']\n"));
  EXPECT_THAT(out, HasSubstr("apiservice Available True True\n"));
  EXPECT_THAT(out, HasSubstr("webhook Fail 10\n"));
  EXPECT_THAT(out, HasSubstr("pvc Pending Filesystem\n"));
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
