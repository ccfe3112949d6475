#include "apiserver/kube_controllers/node_simulator.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/object_builder.h"
#include "api/types/time.h"
#include "apiserver/kube_controllers/controller_runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

std::string At(const api::Object& o, const char* pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  if (v == nullptr) return "<absent>";
  if (v->IsString()) return v->GetString();
  if (v->IsBool()) return v->GetBool() ? "true" : "false";
  if (v->IsInt64()) return std::to_string(v->GetInt64());
  return "<other>";
}

// "status reason" of pod condition `type`.
std::string PodCondition(const api::Object& pod, const std::string& type) {
  const rapidjson::Value* list = pod.Find("/status/conditions");
  if (list == nullptr) return "<absent>";
  for (const auto& c : list->GetArray()) {
    if (type == c["type"].GetString()) {
      std::string out = c["status"].GetString();
      if (c.HasMember("reason"))
        out += std::string(" ") + c["reason"].GetString();
      return out;
    }
  }
  return "<absent>";
}

class NodeSimulatorTest : public ControllerTest {
 protected:
  api::ObjectPtr CreatePod(const std::string& name,
                           const std::string& restart_policy = "",
                           const std::string& annotations = "{}") {
    return Create(Pods(), "default",
                  "{\"metadata\":{\"name\":\"" + name +
                      "\",\"annotations\":" + annotations + "},\"spec\":{" +
                      (restart_policy.empty()
                           ? std::string()
                           : "\"restartPolicy\":\"" + restart_policy + "\",") +
                      R"("initContainers":[{"name":"init","image":"busybox"}],
               "containers":[{"name":"app","image":"nginx:1.25"},
                             {"name":"side","image":"busybox"}]}})");
  }
  api::ObjectPtr Pod(const std::string& name) {
    return Get(Pods(), "default", name);
  }
  // Creates `n` pods named p0..p<n-1> and moves them all to Running.
  void RunPods(int n) {
    for (int i = 0; i < n; ++i) CreatePod("p" + std::to_string(i));
    clock_.Advance(absl::Seconds(1));
    Settle();
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(At(*Pod("p" + std::to_string(i)), "/status/phase"), "Running");
    }
  }
  // Syncs until a pass has nothing to do (a pass's own writes queue their
  // pods once more).
  void Settle() {
    for (int i = 0; i < 10; ++i) {
      const uint64_t before = sim_.keys_synced();
      sim_.Sync();
      if (sim_.keys_synced() == before) return;
    }
    FAIL() << "the node simulator does not settle";
  }
  void Annotate(const std::string& pod) {
    api::ObjectBuilder b = Pod(pod)->ToBuilder();
    b.SetAnnotation("touched", "yes");
    ASSERT_TRUE(registry_.Update(Pods(), "default", pod, std::move(b)).ok());
  }
  void PatchNode(const std::string& pointer, const std::string& json) {
    const ResourceInfo& nodes = Resource("", "v1", "nodes");
    api::ObjectBuilder b = Get(nodes, "", "kcr-node")->ToBuilder();
    if (json.empty()) {
      b.Remove(pointer);
    } else {
      ASSERT_TRUE(b.SetJson(pointer, json).ok());
    }
    ASSERT_TRUE(registry_.Update(nodes, "", "kcr-node", std::move(b)).ok());
  }

  // A pass syncs every key due, however long it takes on a loaded machine,
  // so that what one pass does is deterministic.
  static NodeSimulatorOptions Unhurried() {
    NodeSimulatorOptions o;
    o.incremental.pass_budget = absl::InfiniteDuration();
    return o;
  }

  NodeSimulator sim_{&registry_, &clock_, Unhurried()};
};

TEST_F(NodeSimulatorTest, AlwaysPodsRunAndKeepRunning) {
  CreatePod("web");
  const absl::Time t0 = clock_.Now();
  sim_.Sync();  // scheduled
  EXPECT_EQ(At(*Pod("web"), "/spec/nodeName"), "kcr-node");
  sim_.Sync();  // pending on the node
  api::ObjectPtr p = Pod("web");
  EXPECT_EQ(At(*p, "/status/phase"), "Pending");
  EXPECT_EQ(PodCondition(*p, "PodScheduled"), "True");
  EXPECT_EQ(At(*p, "/status/hostIP"), "10.0.0.1");
  // The init container runs first (kubectl: Init:0/1); the containers wait.
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/waiting/reason"),
            "PodInitializing");
  EXPECT_NE(At(*p, "/status/initContainerStatuses/0/state/running/startedAt"),
            "<absent>");
  EXPECT_EQ(PodCondition(*p, "Initialized"), "False ContainersNotInitialized");
  // Due 500ms after creation.
  EXPECT_EQ(sim_.Sync(), t0 + absl::Milliseconds(500));
  EXPECT_EQ(At(*Pod("web"), "/status/phase"), "Pending");

  clock_.Advance(absl::Seconds(1));
  sim_.Sync();
  p = Pod("web");
  EXPECT_EQ(At(*p, "/status/phase"), "Running");
  EXPECT_EQ(PodCondition(*p, "Ready"), "True");
  EXPECT_EQ(PodCondition(*p, "ContainersReady"), "True");
  EXPECT_EQ(PodCondition(*p, "Initialized"), "True");
  EXPECT_EQ(At(*p, "/status/podIP"), "10.244.0.1");
  EXPECT_EQ(At(*p, "/status/podIPs/0/ip"), "10.244.0.1");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/name"), "app");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/ready"), "true");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/started"), "true");
  EXPECT_EQ(At(*p, "/status/containerStatuses/1/image"), "busybox");
  EXPECT_NE(At(*p, "/status/containerStatuses/1/state/running/startedAt"),
            "<absent>");
  EXPECT_EQ(At(*p, "/status/initContainerStatuses/0/state/terminated/reason"),
            "Completed");
  EXPECT_EQ(At(*p, "/status/startTime").empty(), false);

  const std::string rv(p->resource_version());
  clock_.Advance(absl::Hours(10));
  EXPECT_EQ(sim_.Sync(), absl::InfiniteFuture());
  EXPECT_EQ(Pod("web")->resource_version(), rv) << "nothing more to do";
}

// "reason fieldPath component message" of every Event, in creation order.
std::vector<std::string> EventLines(Registry* registry) {
  std::vector<std::string> out;
  ResourceInfoPtr events = registry->resources()->Lookup("", "v1", "events");
  std::vector<api::ObjectPtr> items =
      registry->storage()->Snapshot(events->StorageKey());
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a->name() < b->name(); });
  for (const api::ObjectPtr& e : items) {
    std::string component = At(*e, "/source/component");
    if (component == "<absent>") component = At(*e, "/reportingComponent");
    out.push_back(At(*e, "/reason") + " " +
                  At(*e, "/involvedObject/fieldPath") + " " + component + " " +
                  At(*e, "/message"));
  }
  return out;
}

// Init containers run one after the other before the pod runs, a sleeping
// one for its sleep; until then the first shows running and the rest wait,
// as kubectl's Init:0/N reads them.
TEST_F(NodeSimulatorTest, InitContainersRunBeforeThePod) {
  Create(Pods(), "default", R"({"metadata":{"name":"web"},"spec":{
      "initContainers":[
        {"name":"wait","image":"busybox","command":["sh","-c","sleep 3"]},
        {"name":"migrate","image":"busybox"}],
      "containers":[{"name":"app","image":"nginx"}]}})");
  const absl::Time t0 = clock_.Now();
  sim_.Sync();  // scheduled
  sim_.Sync();  // initializing
  api::ObjectPtr p = Pod("web");
  EXPECT_EQ(At(*p, "/status/phase"), "Pending");
  EXPECT_EQ(PodCondition(*p, "Initialized"), "False ContainersNotInitialized");
  EXPECT_EQ(At(*p, "/status/initContainerStatuses/0/name"), "wait");
  EXPECT_NE(At(*p, "/status/initContainerStatuses/0/state/running/startedAt"),
            "<absent>");
  EXPECT_EQ(At(*p, "/status/initContainerStatuses/0/ready"), "false");
  EXPECT_EQ(At(*p, "/status/initContainerStatuses/1/state/waiting/reason"),
            "PodInitializing");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/waiting/reason"),
            "PodInitializing");
  // Running after 500 ms plus the init container's 3 s.
  EXPECT_EQ(sim_.Sync(), t0 + absl::Milliseconds(3500));
  clock_.Advance(absl::Seconds(2));
  sim_.Sync();
  EXPECT_EQ(At(*Pod("web"), "/status/phase"), "Pending");
  clock_.Advance(absl::Seconds(2));
  sim_.Sync();
  p = Pod("web");
  EXPECT_EQ(At(*p, "/status/phase"), "Running");
  EXPECT_EQ(PodCondition(*p, "Initialized"), "True");
  EXPECT_EQ(At(*p, "/status/initContainerStatuses/1/state/terminated/reason"),
            "Completed");
}

TEST_F(NodeSimulatorTest, RecordsSchedulerAndKubeletEvents) {
  CreatePod("web");
  sim_.Sync();  // scheduled
  sim_.Sync();  // pending on the node
  clock_.Advance(absl::Seconds(1));
  sim_.Sync();  // running
  EXPECT_THAT(
      EventLines(&registry_),
      ::testing::ElementsAre(
          "Scheduled <absent> default-scheduler Successfully assigned "
          "default/web to kcr-node",
          "Pulling spec.initContainers{init} kubelet Pulling image "
          "\"busybox\"",
          "Pulled spec.initContainers{init} kubelet Successfully pulled image "
          "\"busybox\" in 0s (0s including waiting)",
          "Created spec.initContainers{init} kubelet Created container: init",
          "Started spec.initContainers{init} kubelet Started container init",
          "Pulling spec.containers{app} kubelet Pulling image \"nginx:1.25\"",
          "Pulled spec.containers{app} kubelet Successfully pulled image "
          "\"nginx:1.25\" in 0s (0s including waiting)",
          "Created spec.containers{app} kubelet Created container: app",
          "Started spec.containers{app} kubelet Started container app",
          "Pulling spec.containers{side} kubelet Pulling image \"busybox\"",
          "Pulled spec.containers{side} kubelet Successfully pulled image "
          "\"busybox\" in 0s (0s including waiting)",
          "Created spec.containers{side} kubelet Created container: side",
          "Started spec.containers{side} kubelet Started container side"));
  // Nothing more while it keeps running.
  clock_.Advance(absl::Seconds(10));
  sim_.Sync();
  EXPECT_EQ(EventLines(&registry_).size(), 13u);
}

TEST_F(NodeSimulatorTest, RegistersAReadyNode) {
  sim_.Sync();
  const ResourceInfo& nodes = Resource("", "v1", "nodes");
  api::ObjectPtr node = Get(nodes, "", "kcr-node");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(At(*node, "/status/conditions/3/type"), "Ready");
  EXPECT_EQ(At(*node, "/status/conditions/3/status"), "True");
  EXPECT_EQ(At(*node, "/status/addresses/0/address"), "10.0.0.1");
  EXPECT_EQ(At(*node, "/status/nodeInfo/kubeletVersion"), "v1.32.4");
  // Deleted, it comes back.
  ASSERT_TRUE(registry_.Delete(nodes, "", "kcr-node").ok());
  StoredEvent e;
  e.type = EventType::kDeleted;
  e.collection = "/nodes";
  e.object = node;
  EXPECT_TRUE(sim_.Wants(e));
  sim_.Sync();
  EXPECT_NE(Get(nodes, "", "kcr-node"), nullptr);
}

// The node was written (cordoned, tainted) between its creation and its
// first status: the status still comes, and pods then find room on it.
TEST_F(NodeSimulatorTest, ANodeWithoutStatusGetsIt) {
  const ResourceInfo& nodes = Resource("", "v1", "nodes");
  Create(nodes, "", R"({"metadata":{"name":"kcr-node"},"spec":{"taints":[]}})");
  CreatePod("p0");
  clock_.Advance(absl::Seconds(1));
  Settle();
  api::ObjectPtr node = Get(nodes, "", "kcr-node");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(At(*node, "/status/capacity/pods"), "1000000");
  EXPECT_EQ(At(*node, "/status/conditions/3/status"), "True");
  clock_.Advance(absl::Seconds(1));
  Settle();
  EXPECT_EQ(At(*Pod("p0"), "/status/phase"), "Running");
}

TEST_F(NodeSimulatorTest, NeverPodsSucceed) {
  CreatePod("job", "Never");
  sim_.Sync();
  sim_.Sync();
  clock_.Advance(absl::Seconds(1));
  sim_.Sync();
  ASSERT_EQ(At(*Pod("job"), "/status/phase"), "Running");
  // Due 2s after it started running.
  EXPECT_EQ(sim_.Sync(), clock_.Now() + absl::Seconds(2));
  clock_.Advance(absl::Seconds(2));
  sim_.Sync();
  api::ObjectPtr p = Pod("job");
  EXPECT_EQ(At(*p, "/status/phase"), "Succeeded");
  EXPECT_EQ(PodCondition(*p, "Ready"), "False PodCompleted");
  EXPECT_EQ(PodCondition(*p, "ContainersReady"), "False PodCompleted");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/terminated/exitCode"),
            "0");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/terminated/reason"),
            "Completed");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/ready"), "false");
  EXPECT_EQ(At(*p, "/status/podIP"), "10.244.0.1") << "IPs are kept";
}

TEST_F(NodeSimulatorTest, AnnotationsSetTimingAndFailure) {
  const absl::Time t0 = clock_.Now();
  CreatePod("fail", "OnFailure",
            R"({"kcr.io/sim-running-after":"5s",
                "kcr.io/sim-complete-after":"1m",
                "kcr.io/sim-outcome":"Failed",
                "kcr.io/sim-exit-code":"3",
                "kcr.io/sim-message":"boom"})");
  sim_.Sync();
  sim_.Sync();
  clock_.Advance(absl::Seconds(4));
  EXPECT_EQ(sim_.Sync(), t0 + absl::Seconds(5));
  EXPECT_EQ(At(*Pod("fail"), "/status/phase"), "Pending");
  clock_.Advance(absl::Seconds(1));
  sim_.Sync();
  EXPECT_EQ(At(*Pod("fail"), "/status/phase"), "Running");
  clock_.Advance(absl::Seconds(59));
  sim_.Sync();
  EXPECT_EQ(At(*Pod("fail"), "/status/phase"), "Running");
  clock_.Advance(absl::Seconds(1));
  sim_.Sync();
  api::ObjectPtr p = Pod("fail");
  EXPECT_EQ(At(*p, "/status/phase"), "Failed");
  EXPECT_EQ(PodCondition(*p, "Ready"), "False PodFailed");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/terminated/exitCode"),
            "3");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/terminated/reason"),
            "Error");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/terminated/message"),
            "boom");
  EXPECT_NE(At(*p, "/status/containerStatuses/0/state/terminated/containerID"),
            "<absent>");
}

TEST_F(NodeSimulatorTest, MalformedAnnotationsFallBackToDefaults) {
  CreatePod("odd", "Never",
            R"({"kcr.io/sim-running-after":"soon",
                "kcr.io/sim-outcome":"Maybe",
                "kcr.io/sim-exit-code":"x"})");
  sim_.Sync();
  sim_.Sync();
  clock_.Advance(absl::Seconds(1));
  sim_.Sync();
  EXPECT_EQ(At(*Pod("odd"), "/status/phase"), "Running");
  clock_.Advance(absl::Seconds(2));
  sim_.Sync();
  EXPECT_EQ(At(*Pod("odd"), "/status/phase"), "Succeeded");
}

TEST_F(NodeSimulatorTest, DeploymentsBecomeAvailable) {
  Create(Deployments(), "default", R"({"metadata":{"name":"web"},
      "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
              "template":{"metadata":{"labels":{"app":"web"}},
                          "spec":{"containers":[{"name":"c","image":"nginx"}]}}}})");
  EXPECT_EQ(sim_.Sync(), clock_.Now() + absl::Milliseconds(500));
  api::ObjectPtr d = Get(Deployments(), "default", "web");
  EXPECT_EQ(d->Find("/status/readyReplicas"), nullptr);
  clock_.Advance(absl::Seconds(1));
  sim_.Sync();
  d = Get(Deployments(), "default", "web");
  EXPECT_EQ(At(*d, "/status/observedGeneration"), "1");
  EXPECT_EQ(At(*d, "/status/replicas"), "3");
  EXPECT_EQ(At(*d, "/status/readyReplicas"), "3");
  EXPECT_EQ(At(*d, "/status/availableReplicas"), "3");
  EXPECT_EQ(At(*d, "/status/updatedReplicas"), "3");
  EXPECT_EQ(At(*d, "/status/conditions/0/type"), "Available");
  EXPECT_EQ(At(*d, "/status/conditions/0/reason"), "MinimumReplicasAvailable");
  EXPECT_EQ(At(*d, "/status/conditions/1/type"), "Progressing");
  EXPECT_EQ(At(*d, "/status/conditions/1/reason"), "NewReplicaSetAvailable");

  // Scale to zero: a new generation, then counts omitted.
  api::ObjectBuilder b = d->ToBuilder();
  ASSERT_TRUE(b.SetInt("/spec/replicas", 0).ok());
  ASSERT_TRUE(
      registry_.Update(Deployments(), "default", "web", std::move(b)).ok());
  sim_.Sync();
  EXPECT_EQ(At(*Get(Deployments(), "default", "web"), "/status/replicas"), "3");
  clock_.Advance(absl::Seconds(1));
  sim_.Sync();
  d = Get(Deployments(), "default", "web");
  EXPECT_EQ(At(*d, "/status/observedGeneration"), "2");
  EXPECT_EQ(d->Find("/status/replicas"), nullptr);
  EXPECT_EQ(sim_.Sync(), absl::InfiniteFuture());
}

TEST_F(NodeSimulatorTest, SwitchedOff) {
  NodeSimulatorOptions options;
  options.simulate_pods = false;
  options.simulate_deployments = false;
  NodeSimulator off(&registry_, &clock_, options);
  CreatePod("web");
  EXPECT_EQ(off.Sync(), absl::InfiniteFuture());
  EXPECT_EQ(At(*Pod("web"), "/spec/nodeName"), "<absent>");
}

TEST_F(NodeSimulatorTest, WantsPodAndDeploymentWrites) {
  StoredEvent e;
  e.object = CreatePod("web");
  e.collection = "/pods";
  EXPECT_TRUE(sim_.Wants(e));
  // A pod's deletion frees the room it took on its node.
  e.type = EventType::kDeleted;
  EXPECT_TRUE(sim_.Wants(e));
  e.type = EventType::kModified;
  e.collection = "apps/deployments";
  EXPECT_TRUE(sim_.Wants(e));
  e.collection = "/configmaps";
  EXPECT_FALSE(sim_.Wants(e));
}

TEST_F(NodeSimulatorTest, RunningPodsCostNothingUntilWritten) {
  RunPods(50);
  const uint64_t before = sim_.keys_synced();
  clock_.Advance(absl::Minutes(5));
  EXPECT_EQ(sim_.Sync(), absl::InfiniteFuture());
  EXPECT_EQ(sim_.keys_synced(), before) << "no pod is looked at again";
  // One pod written: that pod alone is synced.
  Annotate("p7");
  sim_.Sync();
  EXPECT_EQ(sim_.keys_synced(), before + 1);
  // A new pod: it alone, through its stages (bind, pending, running, then
  // its last write).
  CreatePod("late");
  Settle();
  clock_.Advance(absl::Seconds(1));
  Settle();
  EXPECT_EQ(At(*Pod("late"), "/status/phase"), "Running");
  EXPECT_LE(sim_.keys_synced(), before + 1 + 5);
}

TEST_F(NodeSimulatorTest, ATimedStageComesDueWithoutAWrite) {
  RunPods(20);
  const uint64_t before = sim_.keys_synced();
  const absl::Time t0 = clock_.Now();
  CreatePod("job", "Never", R"({"kcr.io/sim-running-after":"3s"})");
  sim_.Sync();  // scheduled
  sim_.Sync();  // pending on the node
  EXPECT_EQ(sim_.Sync(), t0 + absl::Seconds(3));
  const uint64_t pending = sim_.keys_synced();
  EXPECT_EQ(pending, before + 3);
  // Before it is due, a pass looks at nothing.
  clock_.Advance(absl::Seconds(2));
  EXPECT_EQ(sim_.Sync(), t0 + absl::Seconds(3));
  EXPECT_EQ(sim_.keys_synced(), pending);
  // Due: it runs with no write to wake it, and is due to finish 2s later.
  clock_.Advance(absl::Seconds(1));
  sim_.Sync();
  EXPECT_EQ(sim_.keys_synced(), pending + 1);
  EXPECT_EQ(At(*Pod("job"), "/status/phase"), "Running");
  EXPECT_EQ(sim_.Sync(), clock_.Now() + absl::Seconds(2));
  clock_.Advance(absl::Seconds(2));
  sim_.Sync();
  EXPECT_EQ(At(*Pod("job"), "/status/phase"), "Succeeded");
  Settle();
  EXPECT_EQ(sim_.keys_synced(), pending + 4);
}

TEST_F(NodeSimulatorTest, ANodeWriteQueuesOnlyThePodsItRefused) {
  RunPods(20);
  PatchNode("/spec/unschedulable", "true");
  CreatePod("waiting");
  Settle();
  api::ObjectPtr p = Pod("waiting");
  EXPECT_EQ(At(*p, "/spec/nodeName"), "<absent>");
  EXPECT_EQ(PodCondition(*p, "PodScheduled"), "False Unschedulable");
  const uint64_t before = sim_.keys_synced();
  // Uncordoned: the refused pod, and no other, is scheduled.
  PatchNode("/spec/unschedulable", "");
  StoredEvent e;
  e.type = EventType::kModified;
  e.collection = "/nodes";
  e.object = Get(Resource("", "v1", "nodes"), "", "kcr-node");
  EXPECT_TRUE(sim_.Wants(e)) << "a pod waits for the node";
  sim_.Sync();
  EXPECT_EQ(sim_.keys_synced(), before + 1);
  EXPECT_EQ(At(*Pod("waiting"), "/spec/nodeName"), "kcr-node");
  clock_.Advance(absl::Seconds(1));
  Settle();
  EXPECT_EQ(At(*Pod("waiting"), "/status/phase"), "Running");
  // No pod waits any more: node writes cost nothing.
  EXPECT_FALSE(sim_.Wants(e));
  const uint64_t settled = sim_.keys_synced();
  PatchNode("/metadata/labels/zone", R"("a")");
  sim_.Sync();
  EXPECT_EQ(sim_.keys_synced(), settled);
}

TEST_F(NodeSimulatorTest, ADeletedNodeComesBackWithoutLookingAtPods) {
  RunPods(20);
  const uint64_t before = sim_.keys_synced();
  const ResourceInfo& nodes = Resource("", "v1", "nodes");
  ASSERT_TRUE(registry_.Delete(nodes, "", "kcr-node").ok());
  sim_.Sync();
  EXPECT_NE(Get(nodes, "", "kcr-node"), nullptr);
  EXPECT_EQ(sim_.keys_synced(), before + 1);
}

TEST_F(NodeSimulatorTest, ADeploymentIsSyncedWhenWrittenOrDue) {
  for (int i = 0; i < 20; ++i) {
    Create(Deployments(), "default",
           R"({"metadata":{"name":"d)" + std::to_string(i) + R"("},
      "spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},
              "template":{"metadata":{"labels":{"app":"web"}},
                          "spec":{"containers":[{"name":"c","image":"nginx"}]}}}})");
  }
  sim_.Sync();
  clock_.Advance(absl::Seconds(1));
  Settle();
  const uint64_t before = sim_.keys_synced();
  api::ObjectPtr d = Get(Deployments(), "default", "d3");
  EXPECT_EQ(At(*d, "/status/readyReplicas"), "1");
  // Scaled: it alone, now (a new generation) and when it is due.
  api::ObjectBuilder b = d->ToBuilder();
  ASSERT_TRUE(b.SetInt("/spec/replicas", 2).ok());
  ASSERT_TRUE(
      registry_.Update(Deployments(), "default", "d3", std::move(b)).ok());
  EXPECT_EQ(sim_.Sync(), clock_.Now() + absl::Milliseconds(500));
  EXPECT_EQ(sim_.keys_synced(), before + 1);
  clock_.Advance(absl::Seconds(1));
  Settle();
  EXPECT_EQ(At(*Get(Deployments(), "default", "d3"), "/status/readyReplicas"),
            "2");
  EXPECT_EQ(sim_.keys_synced(), before + 3);
  // Deleted: nothing to sync.
  ASSERT_TRUE(registry_.Delete(Deployments(), "default", "d5").ok());
  sim_.Sync();
  EXPECT_EQ(sim_.keys_synced(), before + 3);
}

// The runner reacts to writes without any clock movement: with no delay a
// pod runs as soon as it is created.
TEST(NodeSimulatorRunnerTest, RunsPodsInTheBackground) {
  Storage storage;
  ResourceRegistry resources;
  Registry registry(&storage, &resources);
  ASSERT_TRUE(registry.Bootstrap().ok());
  NodeSimulatorOptions options;
  options.running_after = absl::ZeroDuration();
  NodeSimulator sim(&registry, Clock::Real(), options);
  ControllerRunner runner(&storage, Clock::Real(), &sim);
  runner.Start();
  ResourceInfoPtr pods = resources.Lookup("", "v1", "pods");
  absl::StatusOr<api::ObjectBuilder> pod = api::ObjectBuilder::FromJson(
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c",)"
      R"("image":"nginx"}]}})");
  ASSERT_TRUE(registry.Create(*pods, "default", std::move(*pod)).ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  std::string phase;
  while (absl::Now() < deadline) {
    api::ObjectPtr p = storage.Get(pods->StorageKey(), "default", "p");
    phase = At(*p, "/status/phase");
    if (phase == "Running") break;
    absl::SleepFor(absl::Milliseconds(5));
  }
  runner.Stop();
  EXPECT_EQ(phase, "Running");
}

// The sleep of a container whose command line is `json` ("command" and
// "args" members).
std::optional<absl::Duration> SleepOf(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  return ContainerSleep(d);
}

TEST(ContainerSleepTest, ReadsTheSleepThatEndsAScriptOrACommandLine) {
  // The tutorial's pod, and the ways a script is usually written.
  EXPECT_EQ(SleepOf(R"({"command":["sh","-c",
                        "echo \"I'm so very useful!\"; sleep 120"]})"),
            absl::Seconds(120));
  EXPECT_EQ(SleepOf(R"({"command":["/bin/sh","-c"],
                        "args":["echo hi && sleep 5"]})"),
            absl::Seconds(5));
  EXPECT_EQ(SleepOf(R"({"command":["bash","-ec","set -x\nsleep 7;\n"]})"),
            absl::Seconds(7));
  // kopf's walkthrough: sh -x -c, the script in args, one command a line.
  EXPECT_EQ(SleepOf(R"({"command":["sh","-x","-c"],
                        "args":["echo \"I'm so very useful!\"\nsleep 60\n"]})"),
            absl::Seconds(60));
  EXPECT_EQ(SleepOf(R"({"command":["sh","-c","exec sleep 3"]})"),
            absl::Seconds(3));
  EXPECT_EQ(SleepOf(R"({"command":["sh","-c","sleep 0"]})"),
            absl::ZeroDuration());
  // A plain command line that ends with `sleep N`.
  EXPECT_EQ(SleepOf(R"({"command":["sleep"],"args":["30"]})"),
            absl::Seconds(30));
  EXPECT_EQ(SleepOf(R"({"command":["/bin/sleep","9"]})"), absl::Seconds(9));
  EXPECT_EQ(SleepOf(R"({"args":["sleep","4"]})"), absl::Seconds(4));
}

TEST(ContainerSleepTest, AnythingElseRunsAsBefore) {
  EXPECT_EQ(SleepOf(R"({})"), std::nullopt) << "the image's entrypoint";
  EXPECT_EQ(SleepOf(R"({"command":["nginx","-g","daemon off;"]})"),
            std::nullopt);
  EXPECT_EQ(SleepOf(R"({"command":["sh","-c","sleep 5; echo done"]})"),
            std::nullopt)
      << "the sleep is not the last command";
  EXPECT_EQ(SleepOf(R"({"command":["sh","-c","echo sleep 5"]})"), std::nullopt)
      << "an echo of the word";
  EXPECT_EQ(SleepOf(R"({"command":["sh","-c","echo \"x; sleep 5\""]})"),
            std::nullopt)
      << "a quoted sleep";
  EXPECT_EQ(SleepOf(R"({"command":["sleep","infinity"]})"), std::nullopt);
  EXPECT_EQ(SleepOf(R"({"command":["sleep","1.5"]})"), std::nullopt);
  EXPECT_EQ(SleepOf(R"({"command":["sleep","-3"]})"), std::nullopt);
  EXPECT_EQ(SleepOf(R"({"command":["sleep","1m"]})"), std::nullopt);
  EXPECT_EQ(SleepOf(R"({"command":["sh","-c"]})"), std::nullopt);
  EXPECT_EQ(SleepOf(R"({"command":["sh","-x","sleep 5"]})"), std::nullopt)
      << "no -c: a script file";
  EXPECT_EQ(SleepOf(R"({"command":["sh","-c",5]})"), std::nullopt);
  EXPECT_EQ(SleepOf(R"({"command":["sleep","99999999999"]})"), std::nullopt);
}

TEST(CrashLoopBackOffTest, DoublesFromTenSecondsUpToFiveMinutes) {
  const absl::Duration ran = absl::Seconds(30);
  EXPECT_EQ(CrashLoopBackOff(0, ran), absl::ZeroDuration());
  EXPECT_EQ(CrashLoopBackOff(1, ran), absl::Seconds(10));
  EXPECT_EQ(CrashLoopBackOff(2, ran), absl::Seconds(20));
  EXPECT_EQ(CrashLoopBackOff(3, ran), absl::Seconds(40));
  EXPECT_EQ(CrashLoopBackOff(5, ran), absl::Seconds(160));
  EXPECT_EQ(CrashLoopBackOff(6, ran), absl::Minutes(5));
  EXPECT_EQ(CrashLoopBackOff(1000, ran), absl::Minutes(5));
  // A container that ran for longer than twice the cap starts afresh.
  EXPECT_EQ(CrashLoopBackOff(4, absl::Minutes(11)), absl::ZeroDuration());
}

class SleepingPodTest : public NodeSimulatorTest {
 protected:
  // A busybox pod that echoes, then sleeps `seconds`, as the
  // SimpleDeployment operator makes them.
  void CreateSleeper(const std::string& name, const std::string& policy,
                     int seconds, const std::string& annotations = "{}") {
    Create(Pods(), "default",
           R"({"metadata":{"name":")" + name + R"(","annotations":)" +
               annotations + R"(},"spec":{"restartPolicy":")" + policy +
               R"(","containers":[{"name":"main","image":"busybox",
                 "command":["sh","-c","echo \"I'm so very useful!\"; sleep )" +
               std::to_string(seconds) + R"("]}]}})");
  }
  // Moves `name` to Running; returns when it started.
  absl::Time Start(const std::string& name) {
    Settle();
    clock_.Advance(absl::Seconds(1));
    Settle();
    EXPECT_EQ(At(*Pod(name), "/status/phase"), "Running");
    return clock_.Now();
  }
};

TEST_F(SleepingPodTest, NeverPodSucceedsWhenItsSleepEnds) {
  CreateSleeper("sd", "Never", 120);
  const absl::Time started = Start("sd");
  EXPECT_EQ(sim_.Sync(), started + absl::Seconds(120));
  clock_.Advance(absl::Seconds(119));
  Settle();
  api::ObjectPtr p = Pod("sd");
  EXPECT_EQ(At(*p, "/status/phase"), "Running");
  EXPECT_EQ(PodCondition(*p, "Ready"), "True");
  clock_.Advance(absl::Seconds(1));
  Settle();
  p = Pod("sd");
  EXPECT_EQ(At(*p, "/status/phase"), "Succeeded");
  EXPECT_EQ(PodCondition(*p, "Ready"), "False PodCompleted");
  EXPECT_EQ(PodCondition(*p, "ContainersReady"), "False PodCompleted");
  EXPECT_EQ(PodCondition(*p, "Initialized"), "True");
  EXPECT_EQ(PodCondition(*p, "PodScheduled"), "True");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/terminated/exitCode"),
            "0");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/terminated/reason"),
            "Completed");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/terminated/startedAt"),
            api::FormatRfc3339(started));
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/terminated/finishedAt"),
            api::FormatRfc3339(started + absl::Seconds(120)));
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/ready"), "false");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/started"), "false");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/restartCount"), "0");
}

TEST_F(SleepingPodTest, OnFailurePodSucceedsAndSleepZeroEndsAtOnce) {
  CreateSleeper("zero", "OnFailure", 0);
  Settle();
  clock_.Advance(absl::Seconds(1));
  Settle();
  api::ObjectPtr p = Pod("zero");
  EXPECT_EQ(At(*p, "/status/phase"), "Succeeded");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/terminated/startedAt"),
            api::FormatRfc3339(clock_.Now()))
      << "it ran, for no time";
}

TEST_F(SleepingPodTest, TheLastContainerDecidesAndTheAnnotationWins) {
  // A sleeping container beside one that runs complete_after (2s): the pod
  // ends with the longer.
  Create(Pods(), "default", R"({"metadata":{"name":"two"},
      "spec":{"restartPolicy":"Never","containers":[
        {"name":"a","image":"busybox","command":["sleep","1"]},
        {"name":"b","image":"busybox","command":["sh","-c","sleep 10"]},
        {"name":"c","image":"nginx"}]}})");
  CreateSleeper("told", "Never", 120, R"({"kcr.io/sim-complete-after":"3s"})");
  Settle();
  clock_.Advance(absl::Seconds(1));
  Settle();
  clock_.Advance(absl::Seconds(9));
  Settle();
  EXPECT_EQ(At(*Pod("two"), "/status/phase"), "Running");
  EXPECT_EQ(At(*Pod("told"), "/status/phase"), "Succeeded");
  clock_.Advance(absl::Seconds(1));
  Settle();
  EXPECT_EQ(At(*Pod("two"), "/status/phase"), "Succeeded");
}

TEST_F(SleepingPodTest, AlwaysPodRestartsItsContainerAsKubeletDoes) {
  CreateSleeper("loop", "Always", 30);
  const absl::Time t0 = Start("loop");
  const std::string id0 =
      At(*Pod("loop"), "/status/containerStatuses/0/containerID");
  EXPECT_EQ(sim_.Sync(), t0 + absl::Seconds(30));

  // The first exit restarts it at once.
  clock_.Advance(absl::Seconds(30));
  Settle();
  api::ObjectPtr p = Pod("loop");
  const absl::Time t1 = clock_.Now();
  EXPECT_EQ(At(*p, "/status/phase"), "Running");
  EXPECT_EQ(PodCondition(*p, "Ready"), "True");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/restartCount"), "1");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/ready"), "true");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/running/startedAt"),
            api::FormatRfc3339(t1));
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/lastState/terminated/exitCode"),
            "0");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/lastState/terminated/reason"),
            "Completed");
  EXPECT_EQ(
      At(*p, "/status/containerStatuses/0/lastState/terminated/startedAt"),
      api::FormatRfc3339(t0));
  EXPECT_EQ(
      At(*p, "/status/containerStatuses/0/lastState/terminated/finishedAt"),
      api::FormatRfc3339(t1));
  EXPECT_EQ(
      At(*p, "/status/containerStatuses/0/lastState/terminated/containerID"),
      id0);
  EXPECT_NE(At(*p, "/status/containerStatuses/0/containerID"), id0)
      << "a new container";
  EXPECT_EQ(sim_.Sync(), t1 + absl::Seconds(30));

  // The second waits 10s in CrashLoopBackOff, not ready.
  clock_.Advance(absl::Seconds(30));
  Settle();
  p = Pod("loop");
  EXPECT_EQ(At(*p, "/status/phase"), "Running");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/waiting/reason"),
            "CrashLoopBackOff");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/waiting/message"),
            "back-off 10s restarting failed container=main pod=loop_default(" +
                std::string(p->uid()) + ")");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/ready"), "false");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/restartCount"), "1");
  EXPECT_EQ(PodCondition(*p, "Ready"), "False ContainersNotReady");
  EXPECT_EQ(PodCondition(*p, "ContainersReady"), "False ContainersNotReady");
  EXPECT_EQ(sim_.Sync(), clock_.Now() + absl::Seconds(10));
  clock_.Advance(absl::Seconds(9));
  Settle();
  EXPECT_EQ(At(*Pod("loop"), "/status/containerStatuses/0/restartCount"), "1");
  clock_.Advance(absl::Seconds(1));
  Settle();
  p = Pod("loop");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/restartCount"), "2");
  EXPECT_EQ(At(*p, "/status/containerStatuses/0/state/running/startedAt"),
            api::FormatRfc3339(clock_.Now()));
  EXPECT_EQ(PodCondition(*p, "Ready"), "True");
  EXPECT_EQ(PodCondition(*p, "ContainersReady"), "True");

  // Then 20s.
  clock_.Advance(absl::Seconds(30));
  Settle();
  EXPECT_EQ(sim_.Sync(), clock_.Now() + absl::Seconds(20));
  clock_.Advance(absl::Seconds(20));
  Settle();
  EXPECT_EQ(At(*Pod("loop"), "/status/containerStatuses/0/restartCount"), "3");
}

TEST_F(SleepingPodTest, ASleepWakesOnlyItsOwnPod) {
  RunPods(20);
  CreateSleeper("sd", "Never", 60);
  Start("sd");
  CreateSleeper("loop", "Always", 40);
  Start("loop");
  const uint64_t before = sim_.keys_synced();
  // Nothing is due before the first sleep ends (40s after "loop" started,
  // 41s after "sd" did): a pass looks at nothing.
  clock_.Advance(absl::Seconds(39));
  Settle();
  EXPECT_EQ(sim_.keys_synced(), before);
  // "loop" exits and restarts: its due pass and its write's pass.
  clock_.Advance(absl::Seconds(1));
  Settle();
  EXPECT_EQ(sim_.keys_synced(), before + 2);
  EXPECT_EQ(At(*Pod("loop"), "/status/containerStatuses/0/restartCount"), "1");
  // "sd" finishes: the same two passes, and none for the other pods.
  clock_.Advance(absl::Seconds(19));
  Settle();
  EXPECT_EQ(At(*Pod("sd"), "/status/phase"), "Succeeded");
  EXPECT_EQ(sim_.keys_synced(), before + 4);
}

// Several nodes: each registered with its own address and the given
// capacity and labels; pods spread by least allocation, honour their
// selectors and requests, and one that fits nowhere gets kube-scheduler's
// FailedScheduling message until room appears.
class MultiNodeTest : public ControllerTest {
 protected:
  static NodeSimulatorOptions ThreeNodes() {
    NodeSimulatorOptions o;
    o.incremental.pass_budget = absl::InfiniteDuration();
    o.nodes = 3;
    o.node_cpu = "2";
    o.node_memory = "4Gi";
    o.node_pods = "110";
    o.node_labels = {{"topology.kubernetes.io/zone", "z1"}};
    return o;
  }
  api::ObjectPtr CreatePod(const std::string& name, const std::string& spec) {
    return Create(
        Pods(), "default",
        "{\"metadata\":{\"name\":\"" + name + "\"},\"spec\":" + spec + "}");
  }
  std::string NodeOf(const std::string& pod) {
    return At(*Get(Pods(), "default", pod), "/spec/nodeName");
  }
  void Settle() {
    for (int i = 0; i < 10; ++i) {
      const uint64_t before = sim_.keys_synced();
      sim_.Sync();
      if (sim_.keys_synced() == before) return;
    }
    FAIL() << "the node simulator does not settle";
  }

  NodeSimulator sim_{&registry_, &clock_, ThreeNodes()};
};

TEST_F(MultiNodeTest, RegistersEveryNode) {
  sim_.Sync();
  const ResourceInfo& nodes = Resource("", "v1", "nodes");
  int i = 1;
  for (const char* name : {"kcr-node", "kcr-node-2", "kcr-node-3"}) {
    api::ObjectPtr n = Get(nodes, "", name);
    ASSERT_NE(n, nullptr) << name;
    EXPECT_EQ(At(*n, "/status/addresses/0/address"),
              "10.0.0." + std::to_string(i++));
    EXPECT_EQ(At(*n, "/status/allocatable/cpu"), "2");
    EXPECT_EQ(At(*n, "/status/allocatable/pods"), "110");
    EXPECT_EQ(n->Label("topology.kubernetes.io/zone"), "z1");
    EXPECT_EQ(n->Label("kubernetes.io/hostname"), name);
  }
}

TEST_F(MultiNodeTest, SpreadsFitsAndExplainsWhatDoesNotFit) {
  const std::string one_cpu =
      R"({"containers":[{"name":"c","image":"nginx",)"
      R"("resources":{"requests":{"cpu":"1500m","memory":"1Gi"}}}]})";
  for (const char* p : {"a", "b", "c"}) CreatePod(p, one_cpu);
  Settle();
  std::set<std::string> used = {NodeOf("a"), NodeOf("b"), NodeOf("c")};
  EXPECT_EQ(used.size(), 3u) << "one per node, least allocated first";
  EXPECT_EQ(At(*Get(Pods(), "default", "b"), "/status/hostIP"),
            "10.0.0." + std::string(NodeOf("b") == "kcr-node"     ? "1"
                                    : NodeOf("b") == "kcr-node-2" ? "2"
                                                                  : "3"));

  // No node has 1.5 cores left.
  CreatePod("d", one_cpu);
  Settle();
  api::ObjectPtr d = Get(Pods(), "default", "d");
  EXPECT_EQ(At(*d, "/spec/nodeName"), "<absent>");
  EXPECT_EQ(At(*d, "/status/conditions/0/message"),
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 "
            "nodes are available: 3 No preemption victims found for incoming "
            "pod.");

  // A selector no node matches, beside a node too full.
  CreatePod(
      "e",
      R"({"nodeSelector":{"disk":"ssd"},"containers":[{"name":"c","image":"nginx"}]})");
  Settle();
  EXPECT_EQ(At(*Get(Pods(), "default", "e"), "/status/conditions/0/message"),
            "0/3 nodes are available: 3 node(s) didn't match Pod's node "
            "affinity/selector. preemption: 0/3 nodes are available: 3 "
            "Preemption is not helpful for scheduling.");

  // Room appears when a pod goes: the waiting one is placed there.
  const std::string freed = NodeOf("a");
  ASSERT_TRUE(registry_.Delete(Pods(), "default", "a", {}).ok());
  Settle();
  EXPECT_EQ(NodeOf("d"), freed);
}

TEST_F(MultiNodeTest, NodeAffinityAndTaintsChooseTheNode) {
  sim_.Sync();
  const ResourceInfo& nodes = Resource("", "v1", "nodes");
  for (const char* name : {"kcr-node", "kcr-node-3"}) {
    api::ObjectBuilder b = Get(nodes, "", name)->ToBuilder();
    ASSERT_TRUE(
        b.SetJson(
             "/spec/taints",
             R"([{"key":"dedicated","value":"gpu","effect":"NoSchedule"}])")
            .ok());
    ASSERT_TRUE(registry_.Update(nodes, "", name, std::move(b)).ok());
  }
  CreatePod("plain", R"({"containers":[{"name":"c","image":"nginx"}]})");
  CreatePod(
      "pinned",
      R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["kcr-node-3"]}]}]}}},
      "tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"}],
      "containers":[{"name":"c","image":"nginx"}]})");
  CreatePod(
      "stuck",
      R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/hostname","operator":"NotIn","values":["kcr-node-2"]}]}]}}},
      "containers":[{"name":"c","image":"nginx"}]})");
  Settle();
  EXPECT_EQ(NodeOf("plain"), "kcr-node-2");
  EXPECT_EQ(NodeOf("pinned"), "kcr-node-3");
  EXPECT_EQ(NodeOf("stuck"), "<absent>");
  EXPECT_EQ(
      At(*Get(Pods(), "default", "stuck"), "/status/conditions/0/message"),
      "0/3 nodes are available: 1 node(s) didn't match Pod's node "
      "affinity/selector, 2 node(s) had untolerated taint {dedicated: gpu}. "
      "preemption: 0/3 nodes are available: 3 Preemption is not helpful for "
      "scheduling.");
}

}  // namespace
}  // namespace kcr::apiserver
