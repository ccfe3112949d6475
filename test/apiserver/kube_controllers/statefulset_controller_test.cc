#include "apiserver/kube_controllers/statefulset_controller.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/object_builder.h"
#include "apiserver/kube_controllers/garbage_collector.h"
#include "apiserver/kube_controllers/node_simulator.h"
#include "apiserver/kube_controllers/statefulset_internal.h"
#include "base/str_cat.h"
#include "gtest/gtest.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

int64_t Int(const api::Object& o, const char* pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
}

std::string Str(const api::Object& o, const char* pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsString() ? v->GetString() : "";
}

class StatefulSetControllerTest : public ControllerTest {
 protected:
  const ResourceInfo& Sets() { return Resource("apps", "v1", "statefulsets"); }
  const ResourceInfo& Claims() {
    return Resource("", "v1", "persistentvolumeclaims");
  }

  // `extra_spec` is added to the spec ("\"podManagementPolicy\":...,").
  api::ObjectPtr CreateSet(const std::string& name, int replicas,
                           const std::string& extra_spec = "") {
    return Create(
        Sets(), "default",
        Cat(R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":")",
            name, R"("},"spec":{)", extra_spec, R"("replicas":)", replicas,
            R"(,"serviceName":"nginx","selector":{"matchLabels":{"app":")",
            name, R"("}},"template":{"metadata":{"labels":{"app":")", name,
            R"("}},"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}})"));
  }

  api::ObjectPtr Set(const std::string& name) {
    return Get(Sets(), "default", name);
  }
  api::ObjectPtr Pod(const std::string& name) {
    return Get(Pods(), "default", name);
  }

  void Update(const std::string& name, const char* pointer,
              const std::string& json) {
    api::ObjectBuilder b = Set(name)->ToBuilder();
    ASSERT_TRUE(b.SetJson(pointer, json).ok());
    ASSERT_TRUE(registry_.Update(Sets(), "default", name, std::move(b)).ok());
  }

  // The names of the pods in `default`, sorted.
  std::vector<std::string> PodNames() {
    std::vector<std::string> out;
    for (const api::ObjectPtr& p : storage_.Snapshot("/pods")) {
      out.emplace_back(p->name());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // Every Event's "reason: message" about `name`, in order of creation.
  std::vector<std::string> Events(const std::string& name) {
    std::vector<std::string> out;
    std::vector<api::ObjectPtr> events = storage_.Snapshot("/events");
    std::sort(events.begin(), events.end(),
              [](const api::ObjectPtr& a, const api::ObjectPtr& b) {
                return std::stoll(std::string(a->resource_version())) <
                       std::stoll(std::string(b->resource_version()));
              });
    for (const api::ObjectPtr& e : events) {
      if (Str(*e, "/involvedObject/name") != name) continue;
      out.push_back(Cat(Str(*e, "/reason"), ": ", Str(*e, "/message")));
    }
    return out;
  }

  // Runs the pods to Running and Ready (the simulated node's 500ms).
  void RunPods() {
    node_.Sync();
    node_.Sync();
    clock_.Advance(absl::Seconds(1));
    node_.Sync();
  }

  // Syncs the controller and the node until nothing changes.
  void Settle() {
    for (int i = 0; i < 50; ++i) {
      const uint64_t before = sc_.keys_synced();
      sc_.Sync();
      RunPods();
      sc_.Sync();
      if (sc_.keys_synced() == before) return;
    }
    FAIL() << "the statefulset controller does not settle";
  }

  StatefulSetController sc_{&registry_, &clock_};
  NodeSimulator node_{&registry_, &clock_};
};

TEST_F(StatefulSetControllerTest,
       CreatesOrdinalsInOrderEachAfterTheLastIsReady) {
  api::ObjectPtr set = CreateSet("web", 3);
  sc_.Sync();
  EXPECT_EQ(PodNames(), std::vector<std::string>{"web-0"});
  sc_.Sync();  // web-0 is not ready: nothing more
  EXPECT_EQ(PodNames(), std::vector<std::string>{"web-0"});

  api::ObjectPtr pod = Pod("web-0");
  EXPECT_EQ(pod->Label("app"), "web");
  EXPECT_EQ(pod->Label(kStatefulSetPodNameLabel), "web-0");
  EXPECT_EQ(pod->Label(kPodIndexLabel), "0");
  EXPECT_EQ(pod->Label(kControllerRevisionHashLabel),
            Str(*Set("web"), "/status/updateRevision"));
  EXPECT_EQ(pod->Label(kControllerRevisionHashLabel)->substr(0, 4), "web-");
  EXPECT_EQ(Str(*pod, "/spec/hostname"), "web-0");
  EXPECT_EQ(Str(*pod, "/spec/subdomain"), "nginx");
  ASSERT_TRUE(pod->controller_reference().has_value());
  EXPECT_EQ(pod->controller_reference()->kind, "StatefulSet");
  EXPECT_EQ(pod->controller_reference()->uid, set->uid());
  EXPECT_TRUE(pod->controller_reference()->block_owner_deletion);

  RunPods();
  sc_.Sync();
  EXPECT_EQ(PodNames(), (std::vector<std::string>{"web-0", "web-1"}));
  RunPods();
  sc_.Sync();
  EXPECT_EQ(PodNames(), (std::vector<std::string>{"web-0", "web-1", "web-2"}));
  Settle();
  set = Set("web");
  EXPECT_EQ(Int(*set, "/status/replicas"), 3);
  EXPECT_EQ(Int(*set, "/status/readyReplicas"), 3);
  EXPECT_EQ(Int(*set, "/status/availableReplicas"), 3);
  EXPECT_EQ(Int(*set, "/status/currentReplicas"), 3);
  EXPECT_EQ(Int(*set, "/status/updatedReplicas"), 3);
  EXPECT_EQ(Int(*set, "/status/observedGeneration"), 1);
  EXPECT_EQ(Str(*set, "/status/currentRevision"),
            Str(*set, "/status/updateRevision"));
  ASSERT_NE(set->Find("/status/collisionCount"), nullptr);
  EXPECT_EQ(Int(*set, "/status/collisionCount"), 0);
  std::vector<std::string> events = Events("web");
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[0],
            "SuccessfulCreate: create Pod web-0 in StatefulSet web successful");
  EXPECT_EQ(events[2],
            "SuccessfulCreate: create Pod web-2 in StatefulSet web successful");
}

// OrderedReady waits for each pod to be available (ready for
// minReadySeconds), and a pass asks to run again when one will be.
TEST_F(StatefulSetControllerTest, MinReadySecondsGatesTheNextOrdinal) {
  CreateSet("web", 2, R"("minReadySeconds":10,)");
  sc_.Sync();
  RunPods();
  const absl::Time ready_at = clock_.Now();
  const absl::Time next = sc_.Sync();
  EXPECT_EQ(PodNames(), std::vector<std::string>{"web-0"});
  EXPECT_LE(next, ready_at + absl::Seconds(10));
  EXPECT_GT(next, ready_at);
  api::ObjectPtr set = Set("web");
  EXPECT_EQ(Int(*set, "/status/readyReplicas"), 1);
  EXPECT_EQ(Int(*set, "/status/availableReplicas"), 0);
  clock_.Advance(absl::Seconds(11));
  sc_.Sync();
  EXPECT_EQ(PodNames(), (std::vector<std::string>{"web-0", "web-1"}));
  EXPECT_EQ(Int(*Set("web"), "/status/availableReplicas"), 1);
}

TEST_F(StatefulSetControllerTest, ParallelCreatesEveryOrdinalAtOnce) {
  CreateSet("web", 3, R"("podManagementPolicy":"Parallel",)");
  sc_.Sync();
  EXPECT_EQ(PodNames(), (std::vector<std::string>{"web-0", "web-1", "web-2"}));
  // And scales down all at once.
  Settle();
  Update("web", "/spec/replicas", "0");
  sc_.Sync();
  EXPECT_TRUE(PodNames().empty());
}

// A pass creates at most 500 pods (kube's MaxBatchSize) and asks for the
// next at once.
TEST_F(StatefulSetControllerTest, ParallelCreatesAtMost500PerPass) {
  CreateSet("web", 600, R"("podManagementPolicy":"Parallel",)");
  sc_.Sync();
  EXPECT_EQ(PodNames().size(), 500u);
  sc_.Sync();
  EXPECT_EQ(PodNames().size(), 600u);
}

TEST_F(StatefulSetControllerTest, OrdinalsStartAtSpecOrdinalsStart) {
  CreateSet("web", 2, R"("ordinals":{"start":5},)");
  Settle();
  EXPECT_EQ(PodNames(), (std::vector<std::string>{"web-5", "web-6"}));
  EXPECT_EQ(Pod("web-6")->Label(kPodIndexLabel), "6");
}

TEST_F(StatefulSetControllerTest, ScalesDownFromTheHighestOneAtATime) {
  CreateSet("web", 3);
  Settle();
  ASSERT_EQ(PodNames().size(), 3u);
  Update("web", "/spec/replicas", "1");
  sc_.Sync();
  EXPECT_EQ(PodNames(), (std::vector<std::string>{"web-0", "web-1"}));
  sc_.Sync();
  EXPECT_EQ(PodNames(), std::vector<std::string>{"web-0"});
  std::vector<std::string> events = Events("web");
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[events.size() - 2],
            "SuccessfulDelete: delete Pod web-2 in StatefulSet web successful");
  EXPECT_EQ(events.back(),
            "SuccessfulDelete: delete Pod web-1 in StatefulSet web successful");
}

TEST_F(StatefulSetControllerTest, ScaleDownWaitsWhileALowerPodIsNotReady) {
  CreateSet("web", 3);
  Settle();
  // web-0 fails its readiness: OrderedReady stops scaling down web-2.
  api::ObjectBuilder b = Pod("web-0")->ToBuilder();
  ASSERT_TRUE(
      b.SetJson("/status/conditions", R"([{"type":"Ready","status":"False"}])")
          .ok());
  WriteOptions w;
  w.subresource = "status";
  ASSERT_TRUE(
      registry_.Update(Pods(), "default", "web-0", std::move(b), w).ok());
  Update("web", "/spec/replicas", "2");
  sc_.Sync();
  sc_.Sync();
  EXPECT_EQ(PodNames().size(), 3u);
}

TEST_F(StatefulSetControllerTest, CreatesClaimsBeforePodsAndKeepsThem) {
  CreateSet("web", 2, R"("volumeClaimTemplates":[{"metadata":{"name":"www"},
      "spec":{"accessModes":["ReadWriteOnce"],
              "resources":{"requests":{"storage":"1Gi"}}}}],)");
  sc_.Sync();
  api::ObjectPtr claim = Get(Claims(), "default", "www-web-0");
  ASSERT_NE(claim, nullptr);
  EXPECT_EQ(claim->Label("app"), "web");
  EXPECT_TRUE(claim->owner_references().empty());  // Retain
  EXPECT_EQ(Str(*claim, "/spec/resources/requests/storage"), "1Gi");
  api::ObjectPtr pod = Pod("web-0");
  EXPECT_EQ(Str(*pod, "/spec/volumes/0/name"), "www");
  EXPECT_EQ(Str(*pod, "/spec/volumes/0/persistentVolumeClaim/claimName"),
            "www-web-0");
  std::vector<std::string> events = Events("web");
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0],
            "SuccessfulCreate: create Claim www-web-0 Pod web-0 in "
            "StatefulSet web success");
  EXPECT_EQ(events[1],
            "SuccessfulCreate: create Pod web-0 in StatefulSet web successful");
  Settle();
  EXPECT_NE(Get(Claims(), "default", "www-web-1"), nullptr);
  Update("web", "/spec/replicas", "0");
  Settle();
  EXPECT_TRUE(PodNames().empty());
  EXPECT_NE(Get(Claims(), "default", "www-web-0"), nullptr);
  EXPECT_NE(Get(Claims(), "default", "www-web-1"), nullptr);
}

TEST_F(StatefulSetControllerTest, RetentionPolicyDeleteOwnsTheClaims) {
  api::ObjectPtr set = CreateSet(
      "web", 2,
      R"("persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete",
          "whenScaled":"Delete"},
          "volumeClaimTemplates":[{"metadata":{"name":"www"},
          "spec":{"accessModes":["ReadWriteOnce"],
                  "resources":{"requests":{"storage":"1Gi"}}}}],)");
  Settle();
  api::ObjectPtr claim = Get(Claims(), "default", "www-web-1");
  ASSERT_NE(claim, nullptr);
  ASSERT_TRUE(claim->controller_reference().has_value());
  EXPECT_EQ(claim->controller_reference()->uid, set->uid());
  api::ObjectPtr pod1 = Pod("web-1");
  Update("web", "/spec/replicas", "1");
  sc_.Sync();
  // The condemned ordinal's claim is its pod's now, for the garbage
  // collector to delete with it.
  claim = Get(Claims(), "default", "www-web-1");
  ASSERT_NE(claim, nullptr);
  std::vector<api::OwnerReferenceView> refs = claim->owner_references();
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0].kind, "Pod");
  EXPECT_EQ(refs[0].uid, pod1->uid());
  EXPECT_TRUE(refs[0].controller);
  EXPECT_TRUE(refs[0].block_owner_deletion);
  EXPECT_EQ(Pod("web-1"), nullptr);
  // web-0's claim stays the set's.
  EXPECT_EQ(Get(Claims(), "default", "www-web-0")->controller_reference()->uid,
            set->uid());
}

// With the garbage collector: whenScaled Delete removes a condemned
// ordinal's claim with its pod, whenDeleted Delete the rest with the set;
// Retain keeps them.
TEST_F(StatefulSetControllerTest, RetentionPolicyDeleteRemovesClaims) {
  GarbageCollector gc(&registry_, &clock_);
  constexpr char kClaims[] =
      R"("volumeClaimTemplates":[{"metadata":{"name":"www"},
          "spec":{"accessModes":["ReadWriteOnce"],
                  "resources":{"requests":{"storage":"1Gi"}}}}],)";
  CreateSet("web", 2,
            Cat(R"("persistentVolumeClaimRetentionPolicy":{)",
                R"("whenDeleted":"Delete","whenScaled":"Delete"},)", kClaims));
  CreateSet("kept", 1, kClaims);
  Settle();
  Update("web", "/spec/replicas", "1");
  for (int i = 0; i < 3; ++i) {
    sc_.Sync();
    gc.Sync();
  }
  EXPECT_EQ(Get(Claims(), "default", "www-web-1"), nullptr);
  EXPECT_NE(Get(Claims(), "default", "www-web-0"), nullptr);
  ASSERT_TRUE(registry_.Delete(Sets(), "default", "web").ok());
  ASSERT_TRUE(registry_.Delete(Sets(), "default", "kept").ok());
  for (int i = 0; i < 3; ++i) gc.Sync();
  EXPECT_EQ(Get(Claims(), "default", "www-web-0"), nullptr);
  EXPECT_NE(Get(Claims(), "default", "www-kept-0"), nullptr);
  EXPECT_EQ(Pod("web-0"), nullptr);
  EXPECT_EQ(Pod("kept-0"), nullptr);
}

TEST_F(StatefulSetControllerTest, RecreatesAFailedPod) {
  CreateSet("web", 2);
  Settle();
  const std::string uid(Pod("web-1")->uid());
  api::ObjectBuilder b = Pod("web-1")->ToBuilder();
  ASSERT_TRUE(b.SetString("/status/phase", "Failed").ok());
  WriteOptions w;
  w.subresource = "status";
  ASSERT_TRUE(
      registry_.Update(Pods(), "default", "web-1", std::move(b), w).ok());
  sc_.Sync();
  EXPECT_EQ(Events("web").back(),
            "SuccessfulDelete: delete Pod web-1 in StatefulSet web successful");
  sc_.Sync();
  ASSERT_NE(Pod("web-1"), nullptr);
  EXPECT_NE(Pod("web-1")->uid(), uid);
}

TEST_F(StatefulSetControllerTest, AdoptsAnOrphanNamedForIt) {
  Create(Pods(), "default",
         R"({"metadata":{"name":"web-0","labels":{"app":"web"}},
             "spec":{"containers":[{"name":"c","image":"nginx"}]}})");
  Create(Pods(), "default",
         R"({"metadata":{"name":"other-0","labels":{"app":"web"}},
             "spec":{"containers":[{"name":"c","image":"nginx"}]}})");
  // OnDelete: RollingUpdate would replace it, as it has no revision.
  api::ObjectPtr set =
      CreateSet("web", 1, R"("updateStrategy":{"type":"OnDelete"},)");
  sc_.Sync();
  api::ObjectPtr pod = Pod("web-0");
  const std::string uid(pod->uid());
  ASSERT_TRUE(pod->controller_reference().has_value());
  EXPECT_EQ(pod->controller_reference()->uid, set->uid());
  EXPECT_FALSE(Pod("other-0")->controller_reference().has_value());
  // Once it runs, it gets the identity labels it lacks.
  Settle();
  EXPECT_EQ(Pod("web-0")->Label(kStatefulSetPodNameLabel), "web-0");
  EXPECT_EQ(Pod("web-0")->Label(kPodIndexLabel), "0");
  EXPECT_EQ(Pod("web-0")->uid(), uid);
  EXPECT_EQ(Events("web").back(),
            "SuccessfulUpdate: update Pod web-0 in StatefulSet web successful");
}

// A pod's write syncs its own set, not every set.
TEST_F(StatefulSetControllerTest, APodWriteCostsOnlyItsSet) {
  for (int i = 0; i < 5; ++i) CreateSet(Cat("s", i), 1);
  Settle();
  const uint64_t before = sc_.keys_synced();
  api::ObjectBuilder b = Pod("s3-0")->ToBuilder();
  b.SetAnnotation("touched", "yes");
  ASSERT_TRUE(registry_.Update(Pods(), "default", "s3-0", std::move(b)).ok());
  sc_.Sync();
  EXPECT_EQ(sc_.keys_synced() - before, 1u);
}

std::string Image(const api::Object& pod) {
  return Str(pod, "/spec/containers/0/image");
}

// A partitioned rolling update replaces the pods at and above the
// partition, highest first, one at a time, each after the one before is
// Running and Ready; below it the pods keep the current revision.
TEST_F(StatefulSetControllerTest, RollingUpdateWithPartition) {
  CreateSet("web", 3);
  Settle();
  const std::string first = Str(*Set("web"), "/status/currentRevision");
  ASSERT_FALSE(first.empty());
  Update("web", "/spec/updateStrategy",
         R"({"type":"RollingUpdate","rollingUpdate":{"partition":1}})");
  Update("web", "/spec/template/spec/containers/0/image", R"("nginx:2")");
  sc_.Sync();
  // web-2 goes first; web-1 waits for its replacement.
  EXPECT_EQ(Pod("web-2"), nullptr);
  EXPECT_EQ(Image(*Pod("web-1")), "nginx:1");
  sc_.Sync();
  ASSERT_NE(Pod("web-2"), nullptr);
  EXPECT_EQ(Image(*Pod("web-2")), "nginx:2");
  sc_.Sync();
  EXPECT_EQ(Image(*Pod("web-1")), "nginx:1");  // web-2 is not ready yet
  api::ObjectPtr set = Set("web");
  const std::string second = Str(*set, "/status/updateRevision");
  EXPECT_NE(second, first);
  EXPECT_EQ(Str(*set, "/status/currentRevision"), first);
  EXPECT_EQ(Pod("web-2")->Label(kControllerRevisionHashLabel), second);
  Settle();
  EXPECT_EQ(Image(*Pod("web-2")), "nginx:2");
  EXPECT_EQ(Image(*Pod("web-1")), "nginx:2");
  EXPECT_EQ(Image(*Pod("web-0")), "nginx:1");
  set = Set("web");
  EXPECT_EQ(Int(*set, "/status/currentReplicas"), 1);
  EXPECT_EQ(Int(*set, "/status/updatedReplicas"), 2);
  EXPECT_EQ(Str(*set, "/status/currentRevision"), first);
  EXPECT_EQ(Str(*set, "/status/updateRevision"), second);
  // Partition 0: web-0 too, and the update completes.
  Update("web", "/spec/updateStrategy/rollingUpdate/partition", "0");
  Settle();
  EXPECT_EQ(Image(*Pod("web-0")), "nginx:2");
  set = Set("web");
  EXPECT_EQ(Str(*set, "/status/currentRevision"), second);
  EXPECT_EQ(Int(*set, "/status/currentReplicas"), 3);
  EXPECT_EQ(Int(*set, "/status/updatedReplicas"), 3);
  EXPECT_EQ(Int(*set, "/status/observedGeneration"), set->generation());
  // The deletions went from the highest ordinal down.
  std::vector<std::string> deletes;
  for (const std::string& e : Events("web")) {
    if (e.rfind("SuccessfulDelete", 0) == 0) deletes.push_back(e);
  }
  ASSERT_EQ(deletes.size(), 3u);
  EXPECT_EQ(deletes[0],
            "SuccessfulDelete: delete Pod web-2 in StatefulSet web successful");
  EXPECT_EQ(deletes[1],
            "SuccessfulDelete: delete Pod web-1 in StatefulSet web successful");
  EXPECT_EQ(deletes[2],
            "SuccessfulDelete: delete Pod web-0 in StatefulSet web successful");
}

// A pod created below the partition (here: a scale up) takes the current
// revision.
TEST_F(StatefulSetControllerTest, NewPodsBelowThePartitionAreCurrent) {
  CreateSet("web", 1,
            R"("updateStrategy":{"type":"RollingUpdate",
                "rollingUpdate":{"partition":2}},)");
  Settle();
  Update("web", "/spec/template/spec/containers/0/image", R"("nginx:2")");
  Update("web", "/spec/replicas", "3");
  Settle();
  EXPECT_EQ(Image(*Pod("web-0")), "nginx:1");
  EXPECT_EQ(Image(*Pod("web-1")), "nginx:1");
  EXPECT_EQ(Image(*Pod("web-2")), "nginx:2");
}

TEST_F(StatefulSetControllerTest, OnDeleteUpdatesOnlyDeletedPods) {
  CreateSet("web", 2, R"("updateStrategy":{"type":"OnDelete"},)");
  Settle();
  Update("web", "/spec/template/spec/containers/0/image", R"("nginx:2")");
  Settle();
  EXPECT_EQ(Image(*Pod("web-0")), "nginx:1");
  EXPECT_EQ(Image(*Pod("web-1")), "nginx:1");
  EXPECT_EQ(Int(*Set("web"), "/status/updatedReplicas"), 0);
  ASSERT_TRUE(registry_.Delete(Pods(), "default", "web-1").ok());
  Settle();
  EXPECT_EQ(Image(*Pod("web-1")), "nginx:2");
  EXPECT_EQ(Image(*Pod("web-0")), "nginx:1");
  api::ObjectPtr set = Set("web");
  EXPECT_EQ(Int(*set, "/status/updatedReplicas"), 1);
  EXPECT_EQ(Int(*set, "/status/currentReplicas"), 1);
  EXPECT_NE(Str(*set, "/status/currentRevision"),
            Str(*set, "/status/updateRevision"));
}

// Revisions no pod uses are deleted, oldest first, past
// revisionHistoryLimit.
TEST_F(StatefulSetControllerTest, KeepsRevisionHistoryLimit) {
  api::ObjectPtr set = CreateSet("web", 1, R"("revisionHistoryLimit":1,)");
  Settle();
  for (int i = 2; i <= 5; ++i) {
    Update("web", "/spec/template/spec/containers/0/image",
           Cat("\"nginx:", i, "\""));
    Settle();
  }
  std::vector<std::string> names;
  for (const api::ObjectPtr& r :
       storage_.Snapshot("apps/controllerrevisions")) {
    auto ref = r->controller_reference();
    if (ref.has_value() && ref->uid == set->uid()) {
      names.emplace_back(r->name());
    }
  }
  // The live one plus one of history.
  EXPECT_EQ(names.size(), 2u);
  EXPECT_EQ(Image(*Pod("web-0")), "nginx:5");
  EXPECT_NE(std::find(names.begin(), names.end(),
                      Str(*Set("web"), "/status/updateRevision")),
            names.end());
}

api::ObjectPtr Parse(const std::string& json) {
  absl::StatusOr<api::ObjectBuilder> b = api::ObjectBuilder::FromJson(json);
  EXPECT_TRUE(b.ok()) << b.status();
  absl::StatusOr<api::ObjectPtr> o = b->Build();
  EXPECT_TRUE(o.ok()) << o.status();
  return *o;
}

// kube's isClaimOwnerUpToDate / updateClaimOwnerRefForSetAndPod.
TEST(StatefulSetInternalTest, ClaimOwners) {
  using statefulset_internal::ClaimOwners;
  api::ObjectPtr set = Parse(
      R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web",
          "uid":"set-uid"},"spec":{"persistentVolumeClaimRetentionPolicy":{
          "whenDeleted":"Delete","whenScaled":"Retain"}}})");
  api::ObjectPtr pod = Parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0",
          "uid":"pod-uid"}})");
  auto claim = [](const std::string& refs) {
    return Parse(Cat(R"({"apiVersion":"v1","kind":"PersistentVolumeClaim",)",
                     R"("metadata":{"name":"www-web-0","ownerReferences":)",
                     refs, "}}"));
  };
  // The views ClaimOwners returns point into the claim: keep it alive.
  api::ObjectPtr c;
  // The set is added as controller; another (non-controller) owner stays.
  c = claim(R"([{"apiVersion":"v1","kind":"ConfigMap",
          "name":"x","uid":"x-uid"}])");
  std::vector<api::OwnerReferenceView> refs =
      ClaimOwners(*c, *set, *pod, false);
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0].uid, "x-uid");
  EXPECT_EQ(refs[1].uid, "set-uid");
  EXPECT_TRUE(refs[1].controller);
  // A plain reference to the set becomes a controller reference.
  c = claim(R"([{"apiVersion":"apps/v1","kind":"StatefulSet",
          "name":"web","uid":"set-uid"}])");
  refs = ClaimOwners(*c, *set, *pod, false);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_TRUE(refs[0].controller);
  // Another controller: nothing of ours is added.
  c = claim(R"([{"apiVersion":"example.com/v1","kind":"Db",
          "name":"db","uid":"db-uid","controller":true}])");
  refs = ClaimOwners(*c, *set, *pod, false);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0].uid, "db-uid");
  // An earlier set of the same name: left alone.
  c = claim(R"([{"apiVersion":"apps/v1","kind":"StatefulSet",
          "name":"web","uid":"old-uid","controller":true}])");
  refs = ClaimOwners(*c, *set, *pod, false);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0].uid, "old-uid");
}

TEST(StatefulSetInternalTest, ParentAndOrdinal) {
  using statefulset_internal::ParentAndOrdinal;
  auto p = ParentAndOrdinal("web-12");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->first, "web");
  EXPECT_EQ(p->second, 12);
  EXPECT_EQ(ParentAndOrdinal("a-b-3")->first, "a-b");
  EXPECT_FALSE(ParentAndOrdinal("web").has_value());
  EXPECT_FALSE(ParentAndOrdinal("web-").has_value());
  EXPECT_FALSE(ParentAndOrdinal("web-x1").has_value());
  EXPECT_FALSE(ParentAndOrdinal("web-99999999999").has_value());
}

}  // namespace
}  // namespace kcr::apiserver
