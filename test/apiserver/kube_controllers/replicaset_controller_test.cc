#include "apiserver/kube_controllers/replicaset_controller.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/object_builder.h"
#include "apiserver/kube_controllers/node_simulator.h"
#include "base/str_cat.h"
#include "gtest/gtest.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

int64_t Int(const api::Object& o, const char* pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
}

class ReplicaSetControllerTest : public ControllerTest {
 protected:
  const ResourceInfo& ReplicaSets() {
    return Resource("apps", "v1", "replicasets");
  }

  api::ObjectPtr CreateReplicaSet(const std::string& name, int replicas,
                                  int min_ready_seconds = 0) {
    return Create(
        ReplicaSets(), "default",
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{"
        "\"name\":\"" +
            name + "\"},\"spec\":{\"replicas\":" + std::to_string(replicas) +
            ",\"minReadySeconds\":" + std::to_string(min_ready_seconds) +
            ",\"selector\":{\"matchLabels\":{\"app\":\"" + name +
            "\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"" + name +
            "\",\"tier\":\"web\"},\"annotations\":{\"a\":\"b\"}},\"spec\":{"
            "\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}}}");
  }

  api::ObjectPtr ReplicaSet(const std::string& name) {
    return Get(ReplicaSets(), "default", name);
  }

  void Scale(const std::string& name, int replicas) {
    api::ObjectBuilder b = ReplicaSet(name)->ToBuilder();
    ASSERT_TRUE(b.SetInt("/spec/replicas", replicas).ok());
    ASSERT_TRUE(
        registry_.Update(ReplicaSets(), "default", name, std::move(b)).ok());
  }

  std::vector<api::ObjectPtr> PodsOf(const api::Object& rs) {
    std::vector<api::ObjectPtr> out;
    for (api::ObjectPtr& p : storage_.Snapshot("/pods")) {
      auto ref = p->controller_reference();
      if (ref.has_value() && ref->uid == rs.uid()) out.push_back(p);
    }
    return out;
  }

  // Syncs until a pass has nothing to do (a pass's own status writes queue
  // its ReplicaSets once more).
  void Settle() {
    for (int i = 0; i < 10; ++i) {
      const uint64_t before = rc_.keys_synced();
      rc_.Sync();
      if (rc_.keys_synced() == before) return;
    }
    FAIL() << "the replicaset controller does not settle";
  }

  ReplicaSetController rc_{&registry_, &clock_};
  NodeSimulator node_{&registry_, &clock_};
};

TEST_F(ReplicaSetControllerTest, CreatesPodsFromTheTemplate) {
  api::ObjectPtr rs = CreateReplicaSet("web", 3);
  EXPECT_EQ(Int(*rs, "/status/replicas"), 0);
  EXPECT_NE(rs->Find("/status/replicas"), nullptr);
  rc_.Sync();
  std::vector<api::ObjectPtr> pods = PodsOf(*rs);
  ASSERT_EQ(pods.size(), 3u);
  for (const api::ObjectPtr& p : pods) {
    EXPECT_EQ(p->name().substr(0, 4), "web-");
    EXPECT_EQ(p->name().size(), 9u);
    EXPECT_EQ(p->Label("tier"), "web");
    EXPECT_EQ(p->Annotation("a"), "b");
    EXPECT_EQ(p->controller_reference()->kind, "ReplicaSet");
    EXPECT_TRUE(p->controller_reference()->block_owner_deletion);
  }
  // Another pass sees them: no more pods.
  rc_.Sync();
  EXPECT_EQ(PodsOf(*rs).size(), 3u);
  rs = ReplicaSet("web");
  EXPECT_EQ(Int(*rs, "/status/replicas"), 3);
  EXPECT_EQ(Int(*rs, "/status/fullyLabeledReplicas"), 3);
  EXPECT_EQ(Int(*rs, "/status/readyReplicas"), 0);
  EXPECT_EQ(Int(*rs, "/status/observedGeneration"), 1);
}

// kube's replicaset controller records SuccessfulCreate and SuccessfulDelete
// on the ReplicaSet, one per pod, from "replicaset-controller".
TEST_F(ReplicaSetControllerTest, RecordsAnEventPerPodCreatedOrDeleted) {
  api::ObjectPtr rs = CreateReplicaSet("web", 2);
  rc_.Sync();
  Scale("web", 1);
  Settle();
  std::vector<std::string> messages;
  for (const api::ObjectPtr& e : storage_.Snapshot("/events")) {
    if (e->Find("/involvedObject/name") == nullptr ||
        std::string_view(e->Find("/involvedObject/name")->GetString()) !=
            "web") {
      continue;
    }
    EXPECT_EQ(std::string_view(e->Find("/involvedObject/kind")->GetString()),
              "ReplicaSet");
    EXPECT_EQ(std::string_view(e->Find("/involvedObject/uid")->GetString()),
              rs->uid());
    EXPECT_EQ(std::string_view(e->Find("/source/component")->GetString()),
              "replicaset-controller");
    EXPECT_EQ(std::string_view(e->Find("/type")->GetString()), "Normal");
    EXPECT_EQ(e->name().substr(0, 4), "web.");
    messages.push_back(Cat(e->Find("/reason")->GetString(), ": ",
                           e->Find("/message")->GetString()));
  }
  std::vector<api::ObjectPtr> left = PodsOf(*rs);
  ASSERT_EQ(left.size(), 1u);
  ASSERT_EQ(messages.size(), 3u);
  int created = 0, deleted = 0;
  for (const std::string& m : messages) {
    if (m.rfind("SuccessfulCreate: Created pod: web-", 0) == 0) ++created;
    if (m.rfind("SuccessfulDelete: Deleted pod: web-", 0) == 0) ++deleted;
    EXPECT_NE(m, Cat("SuccessfulDelete: Deleted pod: ", left[0]->name()));
  }
  EXPECT_EQ(created, 2);
  EXPECT_EQ(deleted, 1);
}

TEST_F(ReplicaSetControllerTest, ReportsReadyAndAvailableAfterMinReady) {
  CreateReplicaSet("web", 2, /*min_ready_seconds=*/10);
  rc_.Sync();
  node_.Sync();
  node_.Sync();
  clock_.Advance(absl::Seconds(1));
  node_.Sync();
  const absl::Time ready_at = clock_.Now();
  const absl::Time next = rc_.Sync();
  api::ObjectPtr rs = ReplicaSet("web");
  EXPECT_EQ(Int(*rs, "/status/readyReplicas"), 2);
  EXPECT_EQ(Int(*rs, "/status/availableReplicas"), 0);
  EXPECT_LE(next, ready_at + absl::Seconds(10));
  clock_.Advance(absl::Seconds(11));
  EXPECT_EQ(rc_.Sync(), absl::InfiniteFuture());
  EXPECT_EQ(Int(*ReplicaSet("web"), "/status/availableReplicas"), 2);
}

TEST_F(ReplicaSetControllerTest, ScalesDownNotReadyFirst) {
  CreateReplicaSet("web", 2);
  rc_.Sync();
  node_.Sync();
  node_.Sync();
  clock_.Advance(absl::Seconds(1));
  node_.Sync();  // both running and ready
  Scale("web", 3);
  rc_.Sync();  // a third, not yet ready
  api::ObjectPtr rs = ReplicaSet("web");
  std::vector<api::ObjectPtr> pods = PodsOf(*rs);
  ASSERT_EQ(pods.size(), 3u);
  Scale("web", 2);
  rc_.Sync();
  pods = PodsOf(*rs);
  ASSERT_EQ(pods.size(), 2u);
  for (const api::ObjectPtr& p : pods) {
    const rapidjson::Value* phase = p->Find("/status/phase");
    ASSERT_NE(phase, nullptr);
    EXPECT_STREQ(phase->GetString(), "Running");
  }
  Scale("web", 0);
  rc_.Sync();
  EXPECT_TRUE(PodsOf(*rs).empty());
}

TEST_F(ReplicaSetControllerTest, AdoptsOrphansAndReleasesStrays) {
  Create(Pods(), "default",
         R"({"metadata":{"name":"orphan","labels":{"app":"web"}},
             "spec":{"containers":[{"name":"c","image":"nginx"}]}})");
  api::ObjectPtr rs = CreateReplicaSet("web", 1);
  rc_.Sync();
  std::vector<api::ObjectPtr> pods = PodsOf(*rs);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]->name(), "orphan");
  // The label changes: the pod is released and replaced.
  api::ObjectBuilder b = pods[0]->ToBuilder();
  b.SetLabel("app", "other");
  ASSERT_TRUE(registry_.Update(Pods(), "default", "orphan", std::move(b)).ok());
  rc_.Sync();
  EXPECT_FALSE(Get(Pods(), "default", "orphan")->controller_reference());
  rc_.Sync();
  pods = PodsOf(*rs);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_NE(pods[0]->name(), "orphan");
}

TEST_F(ReplicaSetControllerTest, AWriteSyncsOnlyTheReplicaSetItTouches) {
  for (int i = 0; i < 50; ++i) CreateReplicaSet("rs" + std::to_string(i), 1);
  Settle();
  const uint64_t before = rc_.keys_synced();
  EXPECT_GE(before, 50u);
  // One pod of one ReplicaSet changes: that ReplicaSet alone is synced.
  std::vector<api::ObjectPtr> pods = PodsOf(*ReplicaSet("rs7"));
  ASSERT_EQ(pods.size(), 1u);
  api::ObjectBuilder b = pods[0]->ToBuilder();
  b.SetAnnotation("touched", "yes");
  ASSERT_TRUE(registry_
                  .Update(Resource("", "v1", "pods"), "default",
                          pods[0]->name(), std::move(b))
                  .ok());
  rc_.Sync();
  EXPECT_EQ(rc_.keys_synced(), before + 1);
  // A ReplicaSet's own write syncs it alone (then its new pod, then its
  // status write, once each).
  Scale("rs3", 2);
  rc_.Sync();
  EXPECT_EQ(rc_.keys_synced(), before + 2);
  Settle();
  EXPECT_LE(rc_.keys_synced(), before + 4);
  EXPECT_EQ(PodsOf(*ReplicaSet("rs3")).size(), 2u);
}

TEST_F(ReplicaSetControllerTest, AnOrphanQueuesTheReplicaSetsThatSelectIt) {
  api::ObjectPtr rs = CreateReplicaSet("web", 2);
  CreateReplicaSet("other", 1);
  Settle();
  const uint64_t before = rc_.keys_synced();
  // A bare pod with web's labels: web adopts it (and has one pod too many,
  // which it deletes), other is not looked at.
  Create(Resource("", "v1", "pods"), "default",
         R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"stray",)"
         R"("labels":{"app":"web"}},"spec":{"containers":[{"name":"c",)"
         R"("image":"nginx"}]}})");
  rc_.Sync();
  EXPECT_EQ(rc_.keys_synced(), before + 1);
  EXPECT_EQ(PodsOf(*ReplicaSet("web")).size(), 2u);
}

// The same controller for v1 ReplicationControllers: a map selector,
// ownerReferences of kind ReplicationController and Events from
// replication-controller.
class ReplicationManagerTest : public ControllerTest {
 protected:
  const ResourceInfo& Rcs() {
    return Resource("", "v1", "replicationcontrollers");
  }

  // Without a selector: the server defaults it from the template's labels.
  api::ObjectPtr CreateRc(const std::string& name, int replicas) {
    return Create(
        Rcs(), "default",
        "{\"apiVersion\":\"v1\",\"kind\":\"ReplicationController\","
        "\"metadata\":{\"name\":\"" +
            name + "\"},\"spec\":{\"replicas\":" + std::to_string(replicas) +
            ",\"template\":{\"metadata\":{\"labels\":{\"app\":\"" + name +
            "\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
            "\"nginx\"}]}}}}");
  }

  api::ObjectPtr Rc(const std::string& name) {
    return Get(Rcs(), "default", name);
  }

  void Scale(const std::string& name, int replicas) {
    api::ObjectBuilder b = Rc(name)->ToBuilder();
    ASSERT_TRUE(b.SetInt("/spec/replicas", replicas).ok());
    ASSERT_TRUE(registry_.Update(Rcs(), "default", name, std::move(b)).ok());
  }

  std::vector<api::ObjectPtr> PodsOf(const api::Object& rc) {
    std::vector<api::ObjectPtr> out;
    for (api::ObjectPtr& p : storage_.Snapshot("/pods")) {
      auto ref = p->controller_reference();
      if (ref.has_value() && ref->uid == rc.uid()) out.push_back(p);
    }
    return out;
  }

  void Settle() {
    for (int i = 0; i < 10; ++i) {
      const uint64_t before = rm_.keys_synced();
      rm_.Sync();
      if (rm_.keys_synced() == before) return;
    }
    FAIL() << "the replication manager does not settle";
  }

  ReplicationManager rm_{&registry_, &clock_};
  NodeSimulator node_{&registry_, &clock_};
};

TEST_F(ReplicationManagerTest, CreatesScalesAndReportsStatus) {
  EXPECT_EQ(rm_.Name(), "replicationcontroller-controller");
  api::ObjectPtr rc = CreateRc("web", 3);
  Settle();
  std::vector<api::ObjectPtr> pods = PodsOf(*rc);
  ASSERT_EQ(pods.size(), 3u);
  for (const api::ObjectPtr& p : pods) {
    EXPECT_EQ(p->name().substr(0, 4), "web-");
    EXPECT_EQ(p->name().size(), 9u);
    EXPECT_EQ(p->Label("app"), "web");
    EXPECT_EQ(p->controller_reference()->kind, "ReplicationController");
    EXPECT_EQ(p->controller_reference()->api_version, "v1");
    EXPECT_TRUE(p->controller_reference()->block_owner_deletion);
  }
  node_.Sync();
  node_.Sync();
  clock_.Advance(absl::Seconds(1));
  node_.Sync();
  Settle();
  rc = Rc("web");
  EXPECT_EQ(Int(*rc, "/status/replicas"), 3);
  EXPECT_EQ(Int(*rc, "/status/fullyLabeledReplicas"), 3);
  EXPECT_EQ(Int(*rc, "/status/readyReplicas"), 3);
  EXPECT_EQ(Int(*rc, "/status/availableReplicas"), 3);
  EXPECT_EQ(Int(*rc, "/status/observedGeneration"), 1);
  Scale("web", 1);
  Settle();
  EXPECT_EQ(PodsOf(*rc).size(), 1u);
  EXPECT_EQ(Int(*Rc("web"), "/status/replicas"), 1);
  EXPECT_EQ(Int(*Rc("web"), "/status/observedGeneration"), 2);
  int created = 0, deleted = 0;
  for (const api::ObjectPtr& e : storage_.Snapshot("/events")) {
    const rapidjson::Value* kind = e->Find("/involvedObject/kind");
    if (kind == nullptr ||
        std::string_view(kind->GetString()) != "ReplicationController") {
      continue;
    }
    EXPECT_STREQ(e->Find("/source/component")->GetString(),
                 "replication-controller");
    const std::string reason = e->Find("/reason")->GetString();
    const std::string message = e->Find("/message")->GetString();
    if (reason == "SuccessfulCreate" &&
        message.rfind("Created pod: web-", 0) == 0) {
      ++created;
    }
    if (reason == "SuccessfulDelete" &&
        message.rfind("Deleted pod: web-", 0) == 0) {
      ++deleted;
    }
  }
  EXPECT_EQ(created, 3);
  EXPECT_EQ(deleted, 2);
}

TEST_F(ReplicationManagerTest, AdoptsOrphansByItsMapSelector) {
  Create(Pods(), "default",
         R"({"metadata":{"name":"orphan","labels":{"app":"web"}},
             "spec":{"containers":[{"name":"c","image":"nginx"}]}})");
  Create(Pods(), "default",
         R"({"metadata":{"name":"unrelated","labels":{"app":"db"}},
             "spec":{"containers":[{"name":"c","image":"nginx"}]}})");
  api::ObjectPtr rc = CreateRc("web", 1);
  Settle();
  std::vector<api::ObjectPtr> pods = PodsOf(*rc);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]->name(), "orphan");
  EXPECT_FALSE(Get(Pods(), "default", "unrelated")->controller_reference());
  // Relabelled: released, and replaced by a new pod.
  api::ObjectBuilder b = pods[0]->ToBuilder();
  b.SetLabel("app", "other");
  ASSERT_TRUE(registry_.Update(Pods(), "default", "orphan", std::move(b)).ok());
  Settle();
  EXPECT_FALSE(Get(Pods(), "default", "orphan")->controller_reference());
  pods = PodsOf(*rc);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_NE(pods[0]->name(), "orphan");
  // A later orphan that the selector matches is adopted, and the surplus
  // deleted.
  Create(Pods(), "default",
         R"({"metadata":{"name":"late","labels":{"app":"web"}},
             "spec":{"containers":[{"name":"c","image":"nginx"}]}})");
  Settle();
  EXPECT_EQ(PodsOf(*rc).size(), 1u);
}

TEST_F(ReplicationManagerTest, APodWriteSyncsOnlyItsOwner) {
  for (int i = 0; i < 20; ++i) CreateRc("rc" + std::to_string(i), 1);
  Settle();
  const uint64_t before = rm_.keys_synced();
  std::vector<api::ObjectPtr> pods = PodsOf(*Rc("rc7"));
  ASSERT_EQ(pods.size(), 1u);
  api::ObjectBuilder b = pods[0]->ToBuilder();
  b.SetAnnotation("touched", "yes");
  ASSERT_TRUE(
      registry_.Update(Pods(), "default", pods[0]->name(), std::move(b)).ok());
  rm_.Sync();
  EXPECT_EQ(rm_.keys_synced(), before + 1);
}

TEST_F(ReplicationManagerTest, AnOrphanQueuesOnlyTheControllersThatSelectIt) {
  for (int i = 0; i < 20; ++i) CreateRc("rc" + std::to_string(i), 1);
  Settle();
  const uint64_t before = rm_.keys_synced();
  Create(Pods(), "default",
         R"({"metadata":{"name":"stray","labels":{"app":"rc3"}},
             "spec":{"containers":[{"name":"c","image":"nginx"}]}})");
  rm_.Sync();
  EXPECT_EQ(rm_.keys_synced(), before + 1);
  // Adopted, and one of the two deleted.
  EXPECT_EQ(PodsOf(*Rc("rc3")).size(), 1u);
}

}  // namespace
}  // namespace kcr::apiserver
