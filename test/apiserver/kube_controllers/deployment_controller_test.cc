#include "apiserver/kube_controllers/deployment_controller.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/json/json_util.h"
#include "api/object_builder.h"
#include "apiserver/kube_controllers/node_simulator.h"
#include "apiserver/kube_controllers/replicaset_controller.h"
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

int64_t Int(const api::Object& o, const char* pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
}

// "status reason" of deployment condition `type`.
std::string Condition(const api::Object& d, const std::string& type) {
  const rapidjson::Value* list = d.Find("/status/conditions");
  if (list == nullptr) return "<absent>";
  for (const auto& c : list->GetArray()) {
    if (type == c["type"].GetString()) {
      return std::string(c["status"].GetString()) + " " +
             c["reason"].GetString();
    }
  }
  return "<absent>";
}

class DeploymentControllerTest : public ControllerTest {
 protected:
  const ResourceInfo& ReplicaSets() {
    return Resource("apps", "v1", "replicasets");
  }

  api::ObjectPtr CreateDeployment(const std::string& name, int replicas,
                                  const std::string& strategy = "{}") {
    return Create(
        Deployments(), "default",
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
        "\"name\":\"" +
            name +
            "\",\"annotations\":{\"kubernetes.io/change-cause\":"
            "\"first\"}},\"spec\":{\"replicas\":" +
            std::to_string(replicas) + ",\"strategy\":" + strategy +
            ",\"selector\":{\"matchLabels\":{\"app\":\"" + name +
            "\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"" + name +
            "\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
            "\"nginx:1\"}]}}}}");
  }

  api::ObjectPtr Deployment(const std::string& name) {
    return Get(Deployments(), "default", name);
  }

  // Edits the stored Deployment's spec.
  void Edit(const std::string& name, const char* pointer,
            const std::string& json) {
    api::ObjectBuilder b = Deployment(name)->ToBuilder();
    ASSERT_TRUE(b.SetJson(pointer, json).ok());
    absl::Status s =
        registry_.Update(Deployments(), "default", name, std::move(b)).status();
    ASSERT_TRUE(s.ok()) << s;
  }

  std::vector<api::ObjectPtr> ReplicaSetsOf(const api::Object& d) {
    std::vector<api::ObjectPtr> out;
    for (api::ObjectPtr& rs : storage_.Snapshot("apps/replicasets")) {
      auto ref = rs->controller_reference();
      if (ref.has_value() && ref->uid == d.uid()) out.push_back(rs);
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return At(*a,
                "/metadata/annotations/deployment.kubernetes.io~1revision") <
             At(*b, "/metadata/annotations/deployment.kubernetes.io~1revision");
    });
    return out;
  }

  int64_t LivePods() {
    int64_t n = 0;
    for (const api::ObjectPtr& p : storage_.Snapshot("/pods")) {
      if (!p->being_deleted()) ++n;
    }
    return n;
  }

  // Syncs the deployment controller alone until a pass has nothing to do
  // (a pass's own writes queue its Deployments once more).
  void Settle() {
    for (int i = 0; i < 10; ++i) {
      const uint64_t before = dc_.keys_synced();
      dc_.Sync();
      if (dc_.keys_synced() == before) return;
    }
    FAIL() << "the deployment controller does not settle";
  }

  // Writes a ReplicaSet's status as the ReplicaSet controller would.
  void SetReplicaSetStatus(const api::ObjectPtr& rs, const std::string& json) {
    api::ObjectBuilder b =
        Get(ReplicaSets(), "default", rs->name())->ToBuilder();
    ASSERT_TRUE(b.SetJson("/status", json).ok());
    WriteOptions w;
    w.subresource = "status";
    absl::Status s =
        registry_.Update(ReplicaSets(), "default", rs->name(), std::move(b), w)
            .status();
    ASSERT_TRUE(s.ok()) << s;
  }

  // A running pod that `rs` controls.
  api::ObjectPtr CreatePodOf(const api::Object& rs, const std::string& name) {
    absl::StatusOr<api::ObjectBuilder> b = api::ObjectBuilder::FromJson(
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" +
        name +
        "\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]},"
        "\"status\":{\"phase\":\"Running\"}}");
    EXPECT_TRUE(b.ok()) << b.status();
    api::OwnerReferenceView ref;
    ref.api_version = "apps/v1";
    ref.kind = "ReplicaSet";
    ref.name = rs.name();
    ref.uid = rs.uid();
    ref.controller = true;
    b->AddOwnerReference(ref);
    absl::StatusOr<WriteResult> w =
        registry_.Create(Pods(), "default", std::move(*b));
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? w->object : nullptr;
  }

  void DeletePod(const std::string& name) {
    DeleteOptions o;
    o.grace_period_seconds = 0;
    absl::Status s = registry_.Delete(Pods(), "default", name, o).status();
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_EQ(Get(Pods(), "default", name), nullptr);
  }

  // One round of every controller, then a second of simulated time.
  void Step() {
    dc_.Sync();
    rc_.Sync();
    node_.Sync();
    node_.Sync();
    rc_.Sync();
    clock_.Advance(absl::Seconds(1));
  }

  // Steps until `done` holds (fails after 60 simulated seconds).
  template <typename F>
  void StepUntil(F done) {
    for (int i = 0; i < 60; ++i) {
      Step();
      dc_.Sync();
      if (done()) return;
    }
    ADD_FAILURE() << "did not settle";
  }

  bool RolledOut(const std::string& name) {
    api::ObjectPtr d = Deployment(name);
    const int64_t want = Int(*d, "/spec/replicas");
    return Int(*d, "/status/observedGeneration") >= d->generation() &&
           Int(*d, "/status/updatedReplicas") == want &&
           Int(*d, "/status/replicas") == want &&
           Int(*d, "/status/availableReplicas") == want &&
           Condition(*d, "Progressing") == "True NewReplicaSetAvailable";
  }

  DeploymentController dc_{&registry_, &clock_};
  ReplicaSetController rc_{&registry_, &clock_};
  NodeSimulator node_{&registry_, &clock_, [] {
                        NodeSimulatorOptions o;
                        o.simulate_deployments = false;
                        return o;
                      }()};
};

TEST_F(DeploymentControllerTest, CreatesReplicaSetAndPods) {
  api::ObjectPtr d = CreateDeployment("web", 3);
  dc_.Sync();
  std::vector<api::ObjectPtr> rss = ReplicaSetsOf(*d);
  ASSERT_EQ(rss.size(), 1u);
  const api::Object& rs = *rss[0];
  const std::string hash = At(rs, "/metadata/labels/pod-template-hash");
  ASSERT_NE(hash, "<absent>");
  EXPECT_EQ(rs.name(), "web-" + hash);
  EXPECT_EQ(hash, PodTemplateHash(*d->Find("/spec/template"), std::nullopt));
  EXPECT_EQ(At(rs, "/spec/selector/matchLabels/pod-template-hash"), hash);
  EXPECT_EQ(At(rs, "/spec/template/metadata/labels/pod-template-hash"), hash);
  EXPECT_EQ(At(rs, "/spec/template/metadata/labels/app"), "web");
  EXPECT_EQ(At(rs, "/spec/replicas"), "3");
  EXPECT_EQ(rs.Annotation("deployment.kubernetes.io/revision"), "1");
  EXPECT_EQ(rs.Annotation("deployment.kubernetes.io/desired-replicas"), "3");
  // 25% of 3 rounds up to a surge of 1.
  EXPECT_EQ(rs.Annotation("deployment.kubernetes.io/max-replicas"), "4");
  EXPECT_EQ(rs.Annotation("kubernetes.io/change-cause"), "first");
  auto ref = rs.controller_reference();
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->kind, "Deployment");
  EXPECT_TRUE(ref->block_owner_deletion);
  d = Deployment("web");
  EXPECT_EQ(d->Annotation("deployment.kubernetes.io/revision"), "1");
  // The revision is written with the status: the generation stays.
  EXPECT_EQ(d->generation(), 1);
  EXPECT_EQ(Condition(*d, "Progressing"), "True NewReplicaSetCreated");

  rc_.Sync();
  std::vector<api::ObjectPtr> pods = storage_.Snapshot("/pods");
  ASSERT_EQ(pods.size(), 3u);
  for (const api::ObjectPtr& p : pods) {
    EXPECT_EQ(p->name().substr(0, rs.name().size() + 1),
              std::string(rs.name()) + "-");
    EXPECT_EQ(p->name().size(), rs.name().size() + 6);
    EXPECT_EQ(p->Label("pod-template-hash"), hash);
    EXPECT_EQ(p->Label("app"), "web");
    ASSERT_TRUE(p->controller_reference().has_value());
    EXPECT_EQ(p->controller_reference()->uid, rs.uid());
  }

  StepUntil([&] { return RolledOut("web"); });
  d = Deployment("web");
  EXPECT_EQ(Int(*d, "/status/readyReplicas"), 3);
  EXPECT_EQ(Int(*d, "/status/observedGeneration"), 1);
  EXPECT_EQ(Condition(*d, "Available"), "True MinimumReplicasAvailable");
  api::ObjectPtr rs_now = ReplicaSetsOf(*d)[0];
  EXPECT_EQ(Int(*rs_now, "/status/replicas"), 3);
  EXPECT_EQ(Int(*rs_now, "/status/fullyLabeledReplicas"), 3);
  EXPECT_EQ(Int(*rs_now, "/status/readyReplicas"), 3);
  EXPECT_EQ(Int(*rs_now, "/status/availableReplicas"), 3);
  EXPECT_EQ(Int(*rs_now, "/status/observedGeneration"), 1);
}

TEST_F(DeploymentControllerTest, RollingUpdateKeepsWithinSurgeAndUnavailable) {
  CreateDeployment("web", 4);
  StepUntil([&] { return RolledOut("web"); });
  Edit("web", "/spec/template/spec/containers/0/image", "\"nginx:2\"");
  // 25% of 4: one pod over, one pod short at most.
  for (int i = 0; i < 60 && !RolledOut("web"); ++i) {
    Step();
    api::ObjectPtr d = Deployment("web");
    int64_t spec_total = 0, available = 0;
    for (const api::ObjectPtr& rs : ReplicaSetsOf(*d)) {
      spec_total += Int(*rs, "/spec/replicas");
      available += Int(*rs, "/status/availableReplicas");
    }
    EXPECT_LE(spec_total, 5);
    EXPECT_LE(LivePods(), 5);
    EXPECT_GE(available, 3);
  }
  ASSERT_TRUE(RolledOut("web"));
  api::ObjectPtr d = Deployment("web");
  std::vector<api::ObjectPtr> rss = ReplicaSetsOf(*d);
  ASSERT_EQ(rss.size(), 2u);
  EXPECT_EQ(Int(*rss[0], "/spec/replicas"), 0);
  EXPECT_EQ(Int(*rss[1], "/spec/replicas"), 4);
  EXPECT_EQ(rss[1]->Annotation("deployment.kubernetes.io/revision"), "2");
  EXPECT_EQ(d->Annotation("deployment.kubernetes.io/revision"), "2");
  EXPECT_EQ(At(*rss[1], "/spec/template/spec/containers/0/image"), "nginx:2");
  EXPECT_EQ(LivePods(), 4);
}

TEST_F(DeploymentControllerTest, RollbackReusesTheOldReplicaSet) {
  CreateDeployment("web", 2);
  StepUntil([&] { return RolledOut("web"); });
  const std::string first =
      std::string(ReplicaSetsOf(*Deployment("web"))[0]->name());
  Edit("web", "/spec/template/spec/containers/0/image", "\"nginx:2\"");
  StepUntil([&] { return RolledOut("web"); });
  // What `kubectl rollout undo` sends: the old template.
  Edit("web", "/spec/template/spec/containers/0/image", "\"nginx:1\"");
  StepUntil([&] { return RolledOut("web"); });
  api::ObjectPtr d = Deployment("web");
  std::vector<api::ObjectPtr> rss = ReplicaSetsOf(*d);
  ASSERT_EQ(rss.size(), 2u);
  EXPECT_EQ(rss.back()->name(), first);
  EXPECT_EQ(rss.back()->Annotation("deployment.kubernetes.io/revision"), "3");
  EXPECT_EQ(rss.back()->Annotation("deployment.kubernetes.io/revision-history"),
            "1");
  EXPECT_EQ(Int(*rss.back(), "/spec/replicas"), 2);
  EXPECT_EQ(d->Annotation("deployment.kubernetes.io/revision"), "3");
}

TEST_F(DeploymentControllerTest, RecreateScalesOldToZeroFirst) {
  CreateDeployment("web", 3, R"({"type":"Recreate"})");
  StepUntil([&] { return RolledOut("web"); });
  Edit("web", "/spec/template/spec/containers/0/image", "\"nginx:2\"");
  for (int i = 0; i < 60 && !RolledOut("web"); ++i) {
    Step();
    std::vector<api::ObjectPtr> rss = ReplicaSetsOf(*Deployment("web"));
    if (rss.size() == 2 && Int(*rss[1], "/spec/replicas") > 0) {
      // Old pods are gone before new ones are asked for.
      EXPECT_EQ(Int(*rss[0], "/spec/replicas"), 0);
      EXPECT_EQ(Int(*rss[0], "/status/replicas"), 0);
    }
  }
  ASSERT_TRUE(RolledOut("web"));
  std::vector<api::ObjectPtr> rss = ReplicaSetsOf(*Deployment("web"));
  ASSERT_EQ(rss.size(), 2u);
  EXPECT_EQ(Int(*rss[1], "/spec/replicas"), 3);
  EXPECT_EQ(LivePods(), 3);
}

TEST_F(DeploymentControllerTest, ScalesTheReplicaSet) {
  CreateDeployment("web", 2);
  StepUntil([&] { return RolledOut("web"); });
  Edit("web", "/spec/replicas", "5");
  StepUntil([&] { return RolledOut("web"); });
  std::vector<api::ObjectPtr> rss = ReplicaSetsOf(*Deployment("web"));
  ASSERT_EQ(rss.size(), 1u);
  EXPECT_EQ(rss[0]->Annotation("deployment.kubernetes.io/desired-replicas"),
            "5");
  EXPECT_EQ(LivePods(), 5);
  Edit("web", "/spec/replicas", "1");
  StepUntil([&] { return RolledOut("web") && LivePods() == 1; });
}

// kube's deployment controller records every scale of a ReplicaSet on the
// Deployment, as ScalingReplicaSet from "deployment-controller".
TEST_F(DeploymentControllerTest, RecordsScalingReplicaSetEvents) {
  api::ObjectPtr d = CreateDeployment("web", 2);
  StepUntil([&] { return RolledOut("web"); });
  Edit("web", "/spec/replicas", "3");
  StepUntil([&] { return RolledOut("web"); });
  Edit("web", "/spec/replicas", "1");
  StepUntil([&] { return RolledOut("web") && LivePods() == 1; });
  const std::string rs(ReplicaSetsOf(*Deployment("web"))[0]->name());
  std::vector<std::string> messages;
  for (const api::ObjectPtr& e : storage_.Snapshot("/events")) {
    if (At(*e, "/involvedObject/kind") != "Deployment") continue;
    EXPECT_EQ(At(*e, "/involvedObject/uid"), d->uid());
    EXPECT_EQ(At(*e, "/source/component"), "deployment-controller");
    EXPECT_EQ(At(*e, "/reason"), "ScalingReplicaSet");
    messages.push_back(At(*e, "/message"));
  }
  std::sort(messages.begin(), messages.end());
  EXPECT_EQ(messages, (std::vector<std::string>{
                          "Scaled down replica set " + rs + " to 1 from 3",
                          "Scaled up replica set " + rs + " from 0 to 2",
                          "Scaled up replica set " + rs + " to 3 from 2"}));
}

TEST_F(DeploymentControllerTest, PausedDoesNotRollOut) {
  CreateDeployment("web", 2);
  StepUntil([&] { return RolledOut("web"); });
  Edit("web", "/spec/paused", "true");
  Edit("web", "/spec/template/spec/containers/0/image", "\"nginx:2\"");
  for (int i = 0; i < 5; ++i) Step();
  api::ObjectPtr d = Deployment("web");
  EXPECT_EQ(ReplicaSetsOf(*d).size(), 1u);
  EXPECT_EQ(Condition(*d, "Progressing"), "Unknown DeploymentPaused");
  EXPECT_EQ(Int(*d, "/status/observedGeneration"), d->generation());
  // Scaling still works while paused.
  Edit("web", "/spec/replicas", "3");
  for (int i = 0; i < 5; ++i) Step();
  EXPECT_EQ(LivePods(), 3);
  Edit("web", "/spec/paused", "false");
  StepUntil([&] { return RolledOut("web"); });
  EXPECT_EQ(ReplicaSetsOf(*Deployment("web")).size(), 2u);
}

TEST_F(DeploymentControllerTest, KeepsRevisionHistoryLimit) {
  CreateDeployment("web", 1);
  Edit("web", "/spec/revisionHistoryLimit", "1");
  StepUntil([&] { return RolledOut("web"); });
  for (const char* image : {"\"nginx:2\"", "\"nginx:3\"", "\"nginx:4\""}) {
    Edit("web", "/spec/template/spec/containers/0/image", image);
    StepUntil([&] { return RolledOut("web"); });
  }
  Step();
  std::vector<api::ObjectPtr> rss = ReplicaSetsOf(*Deployment("web"));
  ASSERT_EQ(rss.size(), 2u);
  EXPECT_EQ(rss[0]->Annotation("deployment.kubernetes.io/revision"), "3");
  EXPECT_EQ(rss[1]->Annotation("deployment.kubernetes.io/revision"), "4");
}

TEST_F(DeploymentControllerTest, ProgressDeadlineExceeded) {
  CreateDeployment("web", 1);
  Edit("web", "/spec/progressDeadlineSeconds", "5");
  // Pods never become ready: the node runs them after an hour.
  Edit("web", "/spec/template/metadata/annotations",
       R"({"kcr.io/sim-running-after":"1h"})");
  absl::Time due = absl::InfiniteFuture();
  for (int i = 0; i < 3; ++i) {
    Step();
    due = dc_.Sync();
  }
  EXPECT_LT(due, clock_.Now() + absl::Seconds(10));
  for (int i = 0; i < 10; ++i) Step();
  api::ObjectPtr d = Deployment("web");
  EXPECT_EQ(Condition(*d, "Progressing"), "False ProgressDeadlineExceeded");
  EXPECT_EQ(Condition(*d, "Available"), "False MinimumReplicasUnavailable");
}

TEST_F(DeploymentControllerTest, AWriteSyncsOnlyTheDeploymentItTouches) {
  for (int i = 0; i < 50; ++i) CreateDeployment("d" + std::to_string(i), 1);
  Settle();
  uint64_t before = dc_.keys_synced();
  EXPECT_GE(before, 50u);
  // One Deployment's write syncs it alone.
  Edit("d7", "/spec/replicas", "2");
  dc_.Sync();
  EXPECT_EQ(dc_.keys_synced(), before + 1);
  std::vector<api::ObjectPtr> rss = ReplicaSetsOf(*Deployment("d7"));
  ASSERT_EQ(rss.size(), 1u);
  EXPECT_EQ(Int(*rss[0], "/spec/replicas"), 2);
  Settle();
  // Then its ReplicaSet's and its status writes, once each.
  EXPECT_LE(dc_.keys_synced(), before + 3);

  // A ReplicaSet's write syncs the Deployment that controls it alone.
  before = dc_.keys_synced();
  api::ObjectPtr rs = ReplicaSetsOf(*Deployment("d3"))[0];
  SetReplicaSetStatus(
      rs,
      R"({"replicas":1,"readyReplicas":1,"availableReplicas":1,"observedGeneration":1})");
  dc_.Sync();
  EXPECT_EQ(dc_.keys_synced(), before + 1);
  EXPECT_EQ(Int(*Deployment("d3"), "/status/availableReplicas"), 1);
  EXPECT_EQ(Int(*Deployment("d4"), "/status/availableReplicas"), 0);
}

TEST_F(DeploymentControllerTest, AnOrphanQueuesTheDeploymentsThatSelectIt) {
  api::ObjectPtr web = CreateDeployment("web", 1);
  CreateDeployment("other", 1);
  Settle();
  const uint64_t before = dc_.keys_synced();
  // A bare ReplicaSet with web's labels: web adopts it, other is not
  // looked at.
  Create(ReplicaSets(), "default",
         R"({"apiVersion":"apps/v1","kind":"ReplicaSet",
             "metadata":{"name":"stray","labels":{"app":"web"}},
             "spec":{"replicas":0,"selector":{"matchLabels":{"app":"web"}},
               "template":{"metadata":{"labels":{"app":"web"}},
                 "spec":{"containers":[{"name":"c","image":"old"}]}}}})");
  dc_.Sync();
  EXPECT_EQ(dc_.keys_synced(), before + 1);
  auto ref = Get(ReplicaSets(), "default", "stray")->controller_reference();
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->uid, web->uid());
  EXPECT_EQ(ReplicaSetsOf(*web).size(), 2u);
}

TEST_F(DeploymentControllerTest,
       ARelabelledReplicaSetMovesToTheDeploymentThatSelectsIt) {
  api::ObjectPtr web = CreateDeployment("web", 1);
  api::ObjectPtr other = CreateDeployment("other", 1);
  Settle();
  api::ObjectPtr rs = ReplicaSetsOf(*web)[0];
  api::ObjectBuilder b = rs->ToBuilder();
  ASSERT_TRUE(b.SetString("/metadata/labels/app", "other").ok());
  ASSERT_TRUE(
      registry_.Update(ReplicaSets(), "default", rs->name(), std::move(b))
          .ok());
  // web releases it (its controller reference named web), then the orphan
  // queues other, which adopts it.
  dc_.Sync();
  EXPECT_FALSE(Get(ReplicaSets(), "default", rs->name())
                   ->controller_reference()
                   .has_value());
  Settle();
  auto ref = Get(ReplicaSets(), "default", rs->name())->controller_reference();
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->uid, other->uid());
  // web made itself a new ReplicaSet.
  ASSERT_EQ(ReplicaSetsOf(*web).size(), 1u);
  EXPECT_NE(ReplicaSetsOf(*web)[0]->uid(), rs->uid());
}

TEST_F(DeploymentControllerTest, APodDeletionQueuesOnlyARecreateDeployment) {
  api::ObjectPtr web = CreateDeployment("web", 1, R"({"type":"Recreate"})");
  api::ObjectPtr roll = CreateDeployment("roll", 1);
  Settle();
  api::ObjectPtr old_rs = ReplicaSetsOf(*web)[0];
  CreatePodOf(*old_rs, "web-pod");
  CreatePodOf(*ReplicaSetsOf(*roll)[0], "roll-pod");
  Edit("web", "/spec/template/spec/containers/0/image", "\"nginx:2\"");
  Settle();
  // The old ReplicaSet is scaled down and reports no pods, but its pod is
  // still there: no new ReplicaSet yet.
  EXPECT_EQ(
      Int(*Get(ReplicaSets(), "default", old_rs->name()), "/spec/replicas"), 0);
  SetReplicaSetStatus(old_rs, R"({"observedGeneration":2})");
  Settle();
  ASSERT_EQ(ReplicaSetsOf(*web).size(), 1u);

  // A RollingUpdate Deployment does not wait for pods.
  uint64_t before = dc_.keys_synced();
  DeletePod("roll-pod");
  dc_.Sync();
  EXPECT_EQ(dc_.keys_synced(), before);
  // The old pod's going alone lets the Recreate rollout go on.
  DeletePod("web-pod");
  dc_.Sync();
  EXPECT_EQ(dc_.keys_synced(), before + 1);
  std::vector<api::ObjectPtr> rss = ReplicaSetsOf(*web);
  ASSERT_EQ(rss.size(), 2u);
  EXPECT_EQ(Int(*rss[1], "/spec/replicas"), 1);
}

TEST_F(DeploymentControllerTest, AProgressDeadlineComesDueWithoutAWrite) {
  CreateDeployment("web", 1);
  CreateDeployment("other", 1);
  Edit("web", "/spec/progressDeadlineSeconds", "5");
  Settle();
  EXPECT_EQ(Condition(*Deployment("web"), "Progressing"),
            "True NewReplicaSetCreated");
  const absl::Time due = dc_.Sync();
  EXPECT_LE(due, clock_.Now() + absl::Seconds(6));
  clock_.Advance(absl::Seconds(3));
  const uint64_t before = dc_.keys_synced();
  dc_.Sync();
  EXPECT_EQ(dc_.keys_synced(), before);
  clock_.Advance(absl::Seconds(4));
  // Nothing was written: the deadline alone brings web back.
  dc_.Sync();
  EXPECT_EQ(dc_.keys_synced(), before + 1);
  EXPECT_EQ(Condition(*Deployment("web"), "Progressing"),
            "False ProgressDeadlineExceeded");
}

TEST_F(DeploymentControllerTest, AnOrphanIsFoundByEverySelectorThatMatchesIt) {
  // A selector of two labels, one of them on other ReplicaSets too, and
  // one without matchLabels.
  api::ObjectPtr pair = Create(
      Deployments(), "default",
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"pair"},
          "spec":{"replicas":1,"selector":{"matchLabels":
            {"app":"shared","instance":"pair-instance"}},
          "template":{"metadata":{"labels":{"app":"shared","instance":"pair-instance"}},
            "spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}})");
  api::ObjectPtr expr = Create(
      Deployments(), "default",
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"expr"},
          "spec":{"replicas":1,"selector":{"matchExpressions":
            [{"key":"tier","operator":"In","values":["cache"]}]},
          "template":{"metadata":{"labels":{"tier":"cache"}},
            "spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}})");
  CreateDeployment("other", 1);
  Settle();
  const auto orphan = [&](const std::string& name, const std::string& labels) {
    Create(
        ReplicaSets(), "default",
        R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":")" +
            name + R"(","labels":)" + labels +
            R"(},"spec":{"replicas":0,"selector":{"matchLabels":)" + labels +
            R"(},"template":{"metadata":{"labels":)" + labels +
            R"(},"spec":{"containers":[{"name":"c","image":"old"}]}}}})");
  };
  const auto controller = [&](const std::string& name) {
    auto ref = Get(ReplicaSets(), "default", name)->controller_reference();
    return ref.has_value() ? std::string(ref->uid) : "<none>";
  };
  uint64_t before = dc_.keys_synced();
  // One of pair's labels: no Deployment selects it.
  orphan("half", R"({"app":"shared"})");
  dc_.Sync();
  EXPECT_EQ(dc_.keys_synced(), before);
  EXPECT_EQ(controller("half"), "<none>");
  // Both: pair alone.
  orphan("pair-old", R"({"app":"shared","instance":"pair-instance"})");
  dc_.Sync();
  EXPECT_EQ(dc_.keys_synced(), before + 1);
  EXPECT_EQ(controller("pair-old"), pair->uid());
  Settle();
  before = dc_.keys_synced();
  // A selector without matchLabels.
  orphan("expr-old", R"({"tier":"cache"})");
  dc_.Sync();
  EXPECT_EQ(dc_.keys_synced(), before + 1);
  EXPECT_EQ(controller("expr-old"), expr->uid());
}

TEST(PodTemplateHashTest, StableAndIgnoresItsOwnLabel) {
  rapidjson::Document a, b;
  a.Parse(R"({"metadata":{"labels":{"app":"x"}},"spec":{"containers":[]}})");
  b.Parse(R"({"spec":{"containers":[]},
              "metadata":{"labels":{"pod-template-hash":"zz","app":"x"}}})");
  const std::string h = PodTemplateHash(a, std::nullopt);
  EXPECT_EQ(h, PodTemplateHash(b, std::nullopt));
  EXPECT_NE(h, PodTemplateHash(a, 1));
  EXPECT_FALSE(h.empty());
  EXPECT_EQ(h.find_first_not_of("bcdfghjklmnpqrstvwxz2456789"),
            std::string::npos);
}

// What EqualIgnoreHash compared before it stopped copying: both templates
// copied, the hash label removed, an emptied labels map dropped.
rapidjson::Document CopiedWithoutHash(const rapidjson::Value* t) {
  rapidjson::Document d;
  if (t == nullptr) {
    d.SetObject();
    return d;
  }
  d.CopyFrom(*t, d.GetAllocator());
  if (!d.IsObject()) return d;
  auto meta = d.FindMember("metadata");
  if (meta == d.MemberEnd() || !meta->value.IsObject()) return d;
  auto labels = meta->value.FindMember("labels");
  if (labels == meta->value.MemberEnd() || !labels->value.IsObject()) return d;
  labels->value.RemoveMember(kPodTemplateHashLabel);
  if (labels->value.ObjectEmpty()) meta->value.RemoveMember("labels");
  return d;
}

TEST(PodTemplatesEqualIgnoringHashTest, AgreesWithComparingCopies) {
  const std::vector<std::string> templates = {
      R"({})",
      R"([])",
      R"("x")",
      R"({"spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":{},"spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":{"labels":{}},"spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":{"labels":{"pod-template-hash":"h1"}},"spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":{"labels":{"pod-template-hash":"h2"}},"spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":{"labels":{"app":"w","pod-template-hash":"h1"}},"spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":{"labels":{"pod-template-hash":"h9","app":"w"}},"spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":{"labels":{"app":"w"}},"spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":{"labels":{"app":"v"}},"spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":{"labels":{"app":"w"},"annotations":{"a":"b"}},"spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":{"annotations":{"a":"b"},"labels":{"app":"w"}},"spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":{"labels":"odd"},"spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":"odd","spec":{"containers":[{"name":"a"}]}})",
      R"({"metadata":{"labels":{"app":"w"}},"spec":{"containers":[{"name":"b"}]}})",
      R"({"metadata":{"labels":{"app":"w"}}})",
  };
  std::vector<rapidjson::Document> docs(templates.size());
  for (size_t i = 0; i < templates.size(); ++i) {
    docs[i].Parse(templates[i].c_str());
    ASSERT_FALSE(docs[i].HasParseError()) << templates[i];
  }
  for (size_t i = 0; i <= docs.size(); ++i) {
    for (size_t j = 0; j <= docs.size(); ++j) {
      // Index size() stands for a missing template.
      const rapidjson::Value* a = i < docs.size() ? &docs[i] : nullptr;
      const rapidjson::Value* b = j < docs.size() ? &docs[j] : nullptr;
      EXPECT_EQ(PodTemplatesEqualIgnoringHash(a, b),
                json::JsonDeepEqual(CopiedWithoutHash(a), CopiedWithoutHash(b)))
          << (a ? templates[i] : "null") << " vs "
          << (b ? templates[j] : "null");
    }
  }
}

}  // namespace
}  // namespace kcr::apiserver
