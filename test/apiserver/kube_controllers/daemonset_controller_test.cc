#include "apiserver/kube_controllers/daemonset_controller.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/object_builder.h"
#include "apiserver/kube_controllers/node_simulator.h"
#include "base/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;

int64_t Int(const api::Object& o, const char* pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
}

std::string Str(const api::Object& o, const std::string& pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsString() ? v->GetString() : "";
}

// Passes that never stop for time, so that a loaded machine does not leave
// keys for the next pass and blur the counts of keys synced.
IncrementalControllerOptions Unhurried() {
  IncrementalControllerOptions o;
  o.pass_budget = absl::Hours(1);
  return o;
}

NodeSimulatorOptions ThreeNodes() {
  NodeSimulatorOptions o;
  o.nodes = 3;
  return o;
}

class DaemonSetControllerTest : public ControllerTest {
 protected:
  DaemonSetControllerTest() { node_.Sync(); }  // the three Nodes

  const ResourceInfo& DaemonSets() {
    return Resource("apps", "v1", "daemonsets");
  }
  const ResourceInfo& Nodes() { return Resource("", "v1", "nodes"); }

  // `extra` goes into the template's spec; `strategy` is the
  // updateStrategy.
  api::ObjectPtr CreateDaemonSet(const std::string& name,
                                 const std::string& extra = "",
                                 const std::string& strategy = "") {
    return Create(
        DaemonSets(), "default",
        Cat(R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":")",
            name, R"("},"spec":{)",
            strategy.empty() ? "" : Cat(R"("updateStrategy":)", strategy, ","),
            R"("selector":{"matchLabels":{"app":")", name,
            R"("}},"template":{"metadata":{"labels":{"app":")", name,
            R"("}},"spec":{)", extra,
            R"("containers":[{"name":"c","image":"agent:1"}]}}}})"));
  }

  api::ObjectPtr DaemonSet(const std::string& name) {
    return Get(DaemonSets(), "default", name);
  }

  void SetImage(const std::string& name, const std::string& image) {
    api::ObjectBuilder b = DaemonSet(name)->ToBuilder();
    ASSERT_TRUE(
        b.SetString("/spec/template/spec/containers/0/image", image).ok());
    ASSERT_TRUE(
        registry_.Update(DaemonSets(), "default", name, std::move(b)).ok());
  }

  // Edits a Node through `edit`.
  template <typename F>
  void EditNode(const std::string& name, F edit) {
    api::ObjectBuilder b = Get(Nodes(), "", name)->ToBuilder();
    edit(&b);
    ASSERT_TRUE(registry_.Update(Nodes(), "", name, std::move(b)).ok());
  }

  std::vector<api::ObjectPtr> PodsOf(const api::Object& ds) {
    std::vector<api::ObjectPtr> out;
    for (api::ObjectPtr& p : storage_.Snapshot("/pods")) {
      auto ref = p->controller_reference();
      if (ref.has_value() && ref->uid == ds.uid()) out.push_back(p);
    }
    return out;
  }

  // The node each pod of `ds` runs on (or targets), sorted.
  std::vector<std::string> NodesOf(const std::string& ds) {
    std::vector<std::string> out;
    for (const api::ObjectPtr& p : PodsOf(*DaemonSet(ds))) {
      std::string node = Str(*p, "/spec/nodeName");
      if (node.empty()) {
        node = Str(*p,
                   "/spec/affinity/nodeAffinity/"
                   "requiredDuringSchedulingIgnoredDuringExecution/"
                   "nodeSelectorTerms/0/matchFields/0/values/0");
      }
      out.push_back(node);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // The controller and the simulated nodes in turn, a second apart, until
  // neither has anything to do.
  void Settle() {
    for (int i = 0; i < 20; ++i) {
      const uint64_t before = dsc_.keys_synced() + node_.keys_synced();
      dsc_.Sync();
      node_.Sync();
      clock_.Advance(absl::Seconds(1));
      dsc_.Sync();
      node_.Sync();
      if (dsc_.keys_synced() + node_.keys_synced() == before) return;
    }
    FAIL() << "the daemonset controller does not settle";
  }

  std::vector<std::string> Events(const std::string& ds) {
    std::vector<std::string> out;
    for (const api::ObjectPtr& e : storage_.Snapshot("/events")) {
      if (Str(*e, "/involvedObject/kind") != "DaemonSet" ||
          Str(*e, "/involvedObject/name") != ds) {
        continue;
      }
      EXPECT_EQ(Str(*e, "/source/component"), "daemonset-controller");
      out.push_back(Cat(Str(*e, "/reason"), ": ", Str(*e, "/message")));
    }
    return out;
  }

  DaemonSetController dsc_{&registry_, &clock_, Unhurried()};
  NodeSimulator node_{&registry_, &clock_, ThreeNodes()};
};

TEST_F(DaemonSetControllerTest, OnePodPerNode) {
  api::ObjectPtr ds = CreateDaemonSet("agent");
  dsc_.Sync();
  std::vector<api::ObjectPtr> pods = PodsOf(*ds);
  ASSERT_EQ(pods.size(), 3u);
  for (const api::ObjectPtr& p : pods) {
    EXPECT_EQ(p->name().substr(0, 6), "agent-");
    EXPECT_EQ(p->name().size(), 11u);
    EXPECT_EQ(p->Label("app"), "agent");
    EXPECT_EQ(p->Label("pod-template-generation"), "1");
    EXPECT_TRUE(p->Label("controller-revision-hash").has_value());
    EXPECT_EQ(p->controller_reference()->kind, "DaemonSet");
    EXPECT_TRUE(p->controller_reference()->block_owner_deletion);
    std::vector<std::string> tolerations;
    for (const auto& t : p->Find("/spec/tolerations")->GetArray()) {
      tolerations.push_back(Cat(t["key"].GetString(), ":",
                                t["operator"].GetString(), ":",
                                t["effect"].GetString()));
    }
    EXPECT_THAT(
        tolerations,
        ElementsAre("node.kubernetes.io/not-ready:Exists:NoExecute",
                    "node.kubernetes.io/unreachable:Exists:NoExecute",
                    "node.kubernetes.io/disk-pressure:Exists:NoSchedule",
                    "node.kubernetes.io/memory-pressure:Exists:"
                    "NoSchedule",
                    "node.kubernetes.io/pid-pressure:Exists:NoSchedule",
                    "node.kubernetes.io/unschedulable:Exists:"
                    "NoSchedule"));
    EXPECT_EQ(Str(*p,
                  "/spec/affinity/nodeAffinity/"
                  "requiredDuringSchedulingIgnoredDuringExecution/"
                  "nodeSelectorTerms/0/matchFields/0/key"),
              "metadata.name");
  }
  EXPECT_THAT(NodesOf("agent"),
              ElementsAre("kcr-node", "kcr-node-2", "kcr-node-3"));
  Settle();
  // The scheduler bound each to the node its affinity names.
  for (const api::ObjectPtr& p : PodsOf(*ds)) {
    EXPECT_EQ(Str(*p, "/spec/nodeName"),
              Str(*p,
                  "/spec/affinity/nodeAffinity/"
                  "requiredDuringSchedulingIgnoredDuringExecution/"
                  "nodeSelectorTerms/0/matchFields/0/values/0"));
    EXPECT_EQ(Str(*p, "/status/phase"), "Running");
  }
  ds = DaemonSet("agent");
  EXPECT_EQ(Int(*ds, "/status/desiredNumberScheduled"), 3);
  EXPECT_EQ(Int(*ds, "/status/currentNumberScheduled"), 3);
  EXPECT_EQ(Int(*ds, "/status/numberMisscheduled"), 0);
  EXPECT_NE(ds->Find("/status/numberMisscheduled"), nullptr);
  EXPECT_EQ(Int(*ds, "/status/numberReady"), 3);
  EXPECT_EQ(Int(*ds, "/status/numberAvailable"), 3);
  EXPECT_EQ(Int(*ds, "/status/updatedNumberScheduled"), 3);
  EXPECT_EQ(ds->Find("/status/numberUnavailable"), nullptr);
  EXPECT_EQ(Int(*ds, "/status/observedGeneration"), 1);
  std::vector<std::string> events = Events("agent");
  ASSERT_EQ(events.size(), 3u);
  for (const std::string& e : events) {
    EXPECT_EQ(e.rfind("SuccessfulCreate: Created pod: agent-", 0), 0u) << e;
  }
}

TEST_F(DaemonSetControllerTest, HostNetworkPodsTolerateNetworkUnavailable) {
  api::ObjectPtr ds = CreateDaemonSet("net", R"("hostNetwork":true,)");
  dsc_.Sync();
  std::vector<api::ObjectPtr> pods = PodsOf(*ds);
  ASSERT_EQ(pods.size(), 3u);
  const rapidjson::Value* t = pods[0]->Find("/spec/tolerations");
  ASSERT_EQ(t->Size(), 7u);
  EXPECT_STREQ((*t)[6]["key"].GetString(),
               "node.kubernetes.io/network-unavailable");
}

TEST_F(DaemonSetControllerTest, NodeSelectorLimitsAndRelabellingMovesPods) {
  EditNode("kcr-node-2",
           [](api::ObjectBuilder* b) { b->SetLabel("gpu", "yes"); });
  CreateDaemonSet("gpu", R"("nodeSelector":{"gpu":"yes"},)");
  Settle();
  EXPECT_THAT(NodesOf("gpu"), ElementsAre("kcr-node-2"));
  EXPECT_EQ(Int(*DaemonSet("gpu"), "/status/desiredNumberScheduled"), 1);
  // Another node gets the label: a pod there too.
  EditNode("kcr-node-3",
           [](api::ObjectBuilder* b) { b->SetLabel("gpu", "yes"); });
  Settle();
  EXPECT_THAT(NodesOf("gpu"), ElementsAre("kcr-node-2", "kcr-node-3"));
  // One loses it: its pod is deleted.
  EditNode("kcr-node-2", [](api::ObjectBuilder* b) { b->RemoveLabel("gpu"); });
  Settle();
  EXPECT_THAT(NodesOf("gpu"), ElementsAre("kcr-node-3"));
  EXPECT_EQ(Int(*DaemonSet("gpu"), "/status/desiredNumberScheduled"), 1);
  EXPECT_EQ(Int(*DaemonSet("gpu"), "/status/numberMisscheduled"), 0);
}

TEST_F(DaemonSetControllerTest, TaintedNodeGetsNoneUnlessTolerated) {
  EditNode("kcr-node-2", [](api::ObjectBuilder* b) {
    ASSERT_TRUE(
        b->SetJson(
             "/spec/taints",
             R"([{"key":"dedicated","value":"db","effect":"NoSchedule"}])")
            .ok());
  });
  CreateDaemonSet("plain");
  CreateDaemonSet("tolerant",
                  R"("tolerations":[{"key":"dedicated","operator":"Equal",)"
                  R"("value":"db","effect":"NoSchedule"}],)");
  Settle();
  EXPECT_THAT(NodesOf("plain"), ElementsAre("kcr-node", "kcr-node-3"));
  EXPECT_THAT(NodesOf("tolerant"),
              ElementsAre("kcr-node", "kcr-node-2", "kcr-node-3"));
  // A NoSchedule taint added later leaves running pods; NoExecute evicts.
  EditNode("kcr-node-3", [](api::ObjectBuilder* b) {
    ASSERT_TRUE(b->SetJson("/spec/taints",
                           R"([{"key":"maintenance","effect":"NoSchedule"}])")
                    .ok());
  });
  Settle();
  EXPECT_THAT(NodesOf("plain"), ElementsAre("kcr-node", "kcr-node-3"));
  EXPECT_EQ(Int(*DaemonSet("plain"), "/status/desiredNumberScheduled"), 1);
  EXPECT_EQ(Int(*DaemonSet("plain"), "/status/numberMisscheduled"), 1);
  EditNode("kcr-node-3", [](api::ObjectBuilder* b) {
    ASSERT_TRUE(b->SetJson("/spec/taints",
                           R"([{"key":"maintenance","effect":"NoExecute"}])")
                    .ok());
  });
  Settle();
  EXPECT_THAT(NodesOf("plain"), ElementsAre("kcr-node"));
  EXPECT_THAT(NodesOf("tolerant"), ElementsAre("kcr-node", "kcr-node-2"));
}

TEST_F(DaemonSetControllerTest, NodeAddedGetsAPodNodeDeletedLosesIt) {
  CreateDaemonSet("agent");
  Settle();
  Create(
      Nodes(), "",
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"extra",)"
      R"("labels":{"kubernetes.io/hostname":"extra"}},)"
      R"("status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}})");
  Settle();
  EXPECT_THAT(NodesOf("agent"),
              ElementsAre("extra", "kcr-node", "kcr-node-2", "kcr-node-3"));
  EXPECT_EQ(Int(*DaemonSet("agent"), "/status/desiredNumberScheduled"), 4);
  ASSERT_TRUE(registry_.Delete(Nodes(), "", "extra", {}).ok());
  Settle();
  EXPECT_THAT(NodesOf("agent"),
              ElementsAre("kcr-node", "kcr-node-2", "kcr-node-3"));
  EXPECT_EQ(Int(*DaemonSet("agent"), "/status/desiredNumberScheduled"), 3);
}

TEST_F(DaemonSetControllerTest, RollingUpdateReplacesMaxUnavailableAtATime) {
  CreateDaemonSet("agent");
  Settle();
  const std::string old_hash = std::string(
      *PodsOf(*DaemonSet("agent"))[0]->Label("controller-revision-hash"));
  SetImage("agent", "agent:2");
  // Step by step: never more than one node without an available pod.
  int max_down = 0;
  for (int i = 0; i < 40; ++i) {
    dsc_.Sync();
    node_.Sync();
    int up = 0;
    for (const api::ObjectPtr& p : PodsOf(*DaemonSet("agent"))) {
      if (Str(*p, "/status/phase") == "Running") ++up;
    }
    max_down = std::max(max_down, 3 - up);
    clock_.Advance(absl::Milliseconds(300));
  }
  Settle();
  EXPECT_EQ(max_down, 1);
  std::vector<api::ObjectPtr> pods = PodsOf(*DaemonSet("agent"));
  ASSERT_EQ(pods.size(), 3u);
  for (const api::ObjectPtr& p : pods) {
    EXPECT_EQ(Str(*p, "/spec/containers/0/image"), "agent:2");
    EXPECT_EQ(p->Label("pod-template-generation"), "2");
    EXPECT_NE(p->Label("controller-revision-hash"), old_hash);
  }
  api::ObjectPtr ds = DaemonSet("agent");
  EXPECT_EQ(Int(*ds, "/status/updatedNumberScheduled"), 3);
  EXPECT_EQ(Int(*ds, "/status/numberAvailable"), 3);
  EXPECT_EQ(Int(*ds, "/status/observedGeneration"), 2);
}

TEST_F(DaemonSetControllerTest, RollingUpdateWithSurgeStartsNewPodsFirst) {
  CreateDaemonSet("agent", "",
                  R"({"type":"RollingUpdate","rollingUpdate":)"
                  R"({"maxSurge":1,"maxUnavailable":0}})");
  Settle();
  SetImage("agent", "agent:2");
  int max_pods = 0, min_up = 3;
  for (int i = 0; i < 40; ++i) {
    dsc_.Sync();
    node_.Sync();
    int up = 0;
    std::vector<api::ObjectPtr> pods = PodsOf(*DaemonSet("agent"));
    for (const api::ObjectPtr& p : pods) {
      if (Str(*p, "/status/phase") == "Running") ++up;
    }
    max_pods = std::max<int>(max_pods, pods.size());
    min_up = std::min(min_up, up);
    clock_.Advance(absl::Milliseconds(300));
  }
  Settle();
  EXPECT_EQ(max_pods, 4);
  EXPECT_EQ(min_up, 3);
  for (const api::ObjectPtr& p : PodsOf(*DaemonSet("agent"))) {
    EXPECT_EQ(Str(*p, "/spec/containers/0/image"), "agent:2");
  }
}

TEST_F(DaemonSetControllerTest, OnDeleteReplacesOnlyDeletedPods) {
  CreateDaemonSet("agent", "", R"({"type":"OnDelete"})");
  Settle();
  SetImage("agent", "agent:2");
  Settle();
  std::vector<api::ObjectPtr> pods = PodsOf(*DaemonSet("agent"));
  ASSERT_EQ(pods.size(), 3u);
  for (const api::ObjectPtr& p : pods) {
    EXPECT_EQ(Str(*p, "/spec/containers/0/image"), "agent:1");
  }
  EXPECT_EQ(Int(*DaemonSet("agent"), "/status/updatedNumberScheduled"), 0);
  ASSERT_TRUE(registry_.Delete(Pods(), "default", pods[0]->name(), {}).ok());
  Settle();
  int updated = 0;
  for (const api::ObjectPtr& p : PodsOf(*DaemonSet("agent"))) {
    if (Str(*p, "/spec/containers/0/image") == "agent:2") ++updated;
  }
  EXPECT_EQ(updated, 1);
  EXPECT_EQ(Int(*DaemonSet("agent"), "/status/updatedNumberScheduled"), 1);
}

TEST_F(DaemonSetControllerTest, FailedPodIsDeletedAndReplaced) {
  CreateDaemonSet("agent");
  Settle();
  api::ObjectPtr victim = PodsOf(*DaemonSet("agent"))[0];
  api::ObjectBuilder b = victim->ToBuilder();
  ASSERT_TRUE(b.SetString("/status/phase", "Failed").ok());
  WriteOptions w;
  w.subresource = "status";
  ASSERT_TRUE(
      registry_.Update(Pods(), "default", victim->name(), std::move(b), w)
          .ok());
  Settle();
  std::vector<api::ObjectPtr> pods = PodsOf(*DaemonSet("agent"));
  ASSERT_EQ(pods.size(), 3u);
  for (const api::ObjectPtr& p : pods) EXPECT_NE(p->name(), victim->name());
  const std::string node = Str(*victim, "/spec/nodeName");
  EXPECT_THAT(Events("agent"),
              Contains(Cat("FailedDaemonPod: Found failed daemon pod "
                           "default/",
                           victim->name(), " on node ", node,
                           ", will try to kill it")));
  EXPECT_THAT(Events("agent"),
              Contains(Cat("SuccessfulDelete: Deleted pod: ", victim->name())));
}

// An adopted pod carries no revision label: OnDelete keeps it (a rolling
// update would replace it).
TEST_F(DaemonSetControllerTest, AdoptsOrphansOnTheirNode) {
  Create(Pods(), "default",
         R"({"metadata":{"name":"orphan","labels":{"app":"agent"}},
             "spec":{"nodeName":"kcr-node-2",
                     "containers":[{"name":"c","image":"agent:1"}]}})");
  api::ObjectPtr ds = CreateDaemonSet("agent", "", R"({"type":"OnDelete"})");
  Settle();
  EXPECT_EQ(Int(*DaemonSet("agent"), "/status/updatedNumberScheduled"), 2);
  std::vector<std::string> names;
  for (const api::ObjectPtr& p : PodsOf(*ds)) names.emplace_back(p->name());
  EXPECT_EQ(names.size(), 3u);
  EXPECT_THAT(names, Contains("orphan"));
  EXPECT_THAT(NodesOf("agent"),
              ElementsAre("kcr-node", "kcr-node-2", "kcr-node-3"));
}

TEST_F(DaemonSetControllerTest, AWriteCostsOnlyTheDaemonSetsItTouches) {
  for (int i = 0; i < 20; ++i) CreateDaemonSet(Cat("ds", i));
  CreateDaemonSet("gpu", R"("nodeSelector":{"gpu":"yes"},)");
  Settle();
  const uint64_t before = dsc_.keys_synced();
  // A pod's write: its DaemonSet alone.
  api::ObjectPtr pod = PodsOf(*DaemonSet("ds7"))[0];
  api::ObjectBuilder b = pod->ToBuilder();
  b.SetAnnotation("touched", "yes");
  ASSERT_TRUE(
      registry_.Update(Pods(), "default", pod->name(), std::move(b)).ok());
  dsc_.Sync();
  EXPECT_EQ(dsc_.keys_synced(), before + 1);
  // A node's write that leaves labels and taints alone: nothing.
  EditNode("kcr-node-3",
           [](api::ObjectBuilder* b) { b->SetAnnotation("note", "x"); });
  dsc_.Sync();
  EXPECT_EQ(dsc_.keys_synced(), before + 1);
  // A label that changes one DaemonSet's placement: that one.
  EditNode("kcr-node-3",
           [](api::ObjectBuilder* b) { b->SetLabel("gpu", "yes"); });
  dsc_.Sync();
  EXPECT_EQ(dsc_.keys_synced(), before + 2);
  EXPECT_THAT(NodesOf("gpu"), ElementsAre("kcr-node-3"));
  Settle();
  // A new node: every DaemonSet that should run there (not gpu).
  Create(Nodes(), "",
         R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"extra"}})");
  const uint64_t at_add = dsc_.keys_synced();
  dsc_.Sync();
  EXPECT_EQ(dsc_.keys_synced(), at_add + 20);
}

// kube's constructHistory: a ControllerRevision per template, named by the
// hash the pods carry; an update adds one, a rollback renumbers the old.
TEST_F(DaemonSetControllerTest, RecordsTemplatesAsControllerRevisions) {
  const ResourceInfo& revisions = Resource("apps", "v1", "controllerrevisions");
  api::ObjectPtr ds = CreateDaemonSet("agent");
  Settle();
  auto revisions_of = [&] {
    std::map<int64_t, api::ObjectPtr> out;
    for (api::ObjectPtr& r : storage_.Snapshot(revisions.StorageKey())) {
      out[Int(*r, "/revision")] = r;
    }
    return out;
  };
  std::map<int64_t, api::ObjectPtr> rs = revisions_of();
  ASSERT_EQ(rs.size(), 1u);
  const api::ObjectPtr first = rs[1];
  const std::string hash1(*first->Label("controller-revision-hash"));
  EXPECT_EQ(first->name(), Cat("agent-", hash1));
  EXPECT_EQ(first->controller_reference()->uid, ds->uid());
  for (const api::ObjectPtr& p : PodsOf(*ds)) {
    EXPECT_EQ(p->Label("controller-revision-hash"), hash1);
  }
  SetImage("agent", "agent:2");
  Settle();
  rs = revisions_of();
  ASSERT_EQ(rs.size(), 2u);
  const std::string hash2(*rs[2]->Label("controller-revision-hash"));
  EXPECT_NE(hash1, hash2);
  for (const api::ObjectPtr& p : PodsOf(*ds)) {
    EXPECT_EQ(p->Label("controller-revision-hash"), hash2);
  }
  // Back to the first template: its revision becomes number 3.
  SetImage("agent", "agent:1");
  Settle();
  rs = revisions_of();
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[3]->name(), first->name());
  for (const api::ObjectPtr& p : PodsOf(*ds)) {
    EXPECT_EQ(p->Label("controller-revision-hash"), hash1);
    EXPECT_EQ(p->Label("pod-template-generation"), "3");
  }
}

TEST_F(DaemonSetControllerTest, RevisionHistoryLimitDropsUnusedRevisions) {
  CreateDaemonSet("agent");
  api::ObjectBuilder b = DaemonSet("agent")->ToBuilder();
  ASSERT_TRUE(b.SetInt("/spec/revisionHistoryLimit", 1).ok());
  ASSERT_TRUE(
      registry_.Update(DaemonSets(), "default", "agent", std::move(b)).ok());
  Settle();
  for (int i = 2; i <= 4; ++i) {
    SetImage("agent", Cat("agent:", i));
    Settle();
  }
  // The current one and one old one.
  EXPECT_EQ(storage_.Snapshot("apps/controllerrevisions").size(), 2u);
}

// kube's failedPodsBackoff: a node whose daemon pods keep failing waits 1 s,
// then 2 s, ... before its failed pod is deleted again.
TEST_F(DaemonSetControllerTest, PodsThatKeepFailingBackOff) {
  api::ObjectPtr ds = CreateDaemonSet("agent", R"("nodeName":"kcr-node",)");
  Settle();
  auto fail_pod = [&] {
    std::vector<api::ObjectPtr> pods = PodsOf(*DaemonSet("agent"));
    EXPECT_EQ(pods.size(), 1u);
    if (pods.empty()) return std::string();
    api::ObjectBuilder b = pods[0]->ToBuilder();
    EXPECT_TRUE(b.SetString("/status/phase", "Failed").ok());
    WriteOptions w;
    w.subresource = "status";
    EXPECT_TRUE(
        registry_.Update(Pods(), "default", pods[0]->name(), std::move(b), w)
            .ok());
    return std::string(pods[0]->name());
  };
  const std::string first = fail_pod();
  dsc_.Sync();  // deleted at once (back-off 1 s from now)
  EXPECT_EQ(Get(Pods(), "default", first), nullptr);
  dsc_.Sync();  // its replacement
  const std::string second = fail_pod();
  ASSERT_NE(second, first);
  const absl::Time next = dsc_.Sync();  // within the back-off: kept
  EXPECT_NE(Get(Pods(), "default", second), nullptr);
  EXPECT_LE(next, clock_.Now() + absl::Seconds(1));
  clock_.Advance(absl::Seconds(1));
  dsc_.Sync();  // deleted; the back-off doubles
  EXPECT_EQ(Get(Pods(), "default", second), nullptr);
  dsc_.Sync();
  const std::string third = fail_pod();
  clock_.Advance(absl::Seconds(1));
  dsc_.Sync();
  EXPECT_NE(Get(Pods(), "default", third), nullptr);
  clock_.Advance(absl::Seconds(1));
  dsc_.Sync();
  EXPECT_EQ(Get(Pods(), "default", third), nullptr);
  int failed_events = 0;
  for (const std::string& e : Events("agent")) {
    if (e.rfind("FailedDaemonPod: ", 0) == 0) ++failed_events;
  }
  EXPECT_EQ(failed_events, 3);
}

}  // namespace
}  // namespace kcr::apiserver
