#include "apiserver/kube_controllers/garbage_collector.h"

#include <string>
#include <vector>

#include "api/object_builder.h"
#include "apiserver/kube_controllers/replicaset_controller.h"
#include "base/str_cat.h"
#include "gtest/gtest.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

class GarbageCollectorTest : public ControllerTest {
 protected:
  // A ConfigMap owned by `owners` (each "name:uid[:block]").
  api::ObjectPtr Dependent(const std::string& ns, const std::string& name,
                           const std::vector<api::ObjectPtr>& owners,
                           bool block = false,
                           const std::string& finalizer = "") {
    std::string refs;
    for (const api::ObjectPtr& o : owners) {
      if (!refs.empty()) refs += ",";
      refs += Cat(R"({"apiVersion":"v1","kind":"ConfigMap","name":")",
                  o->name(), R"(","uid":")", o->uid(), R"(")",
                  block ? R"(,"blockOwnerDeletion":true)" : "", "}");
    }
    return Create(
        ConfigMaps(), ns,
        Cat(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")",
            name, R"(","ownerReferences":[)", refs, "]",
            finalizer.empty() ? std::string()
                              : Cat(R"(,"finalizers":[")", finalizer, R"("])"),
            "}}"));
  }

  api::ObjectPtr Owner(const std::string& ns, const std::string& name) {
    return Create(
        ConfigMaps(), ns,
        Cat(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")",
            name, R"("}})"));
  }

  void DeleteOwner(const std::string& name, const std::string& policy) {
    DeleteOptions o;
    o.propagation_policy = policy;
    ASSERT_TRUE(registry_.Delete(ConfigMaps(), "default", name, o).ok());
  }

  api::ObjectPtr Cm(const std::string& name) {
    return Get(ConfigMaps(), "default", name);
  }

  // Syncs until a pass has nothing to do.
  void Settle() {
    for (int i = 0; i < 10; ++i) {
      const uint64_t before = gc_.keys_synced();
      gc_.Sync();
      if (gc_.keys_synced() == before) return;
    }
    FAIL() << "the garbage collector does not settle";
  }

  GarbageCollector gc_{&registry_};
};

TEST_F(GarbageCollectorTest, BackgroundDeletesDependentsOfAGoneOwner) {
  api::ObjectPtr owner = Owner("default", "owner");
  Dependent("default", "dep", {owner});
  Dependent("default", "dep2", {owner});
  gc_.Sync();
  EXPECT_NE(Cm("dep"), nullptr) << "owner alive: nothing to collect";

  DeleteOwner("owner", "Background");
  EXPECT_EQ(Cm("owner"), nullptr);
  EXPECT_EQ(gc_.Sync(), absl::InfiniteFuture());
  EXPECT_EQ(Cm("dep"), nullptr);
  EXPECT_EQ(Cm("dep2"), nullptr);
}

TEST_F(GarbageCollectorTest, BackgroundFollowsChains) {
  api::ObjectPtr a = Owner("default", "a");
  api::ObjectPtr b = Dependent("default", "b", {a});
  Dependent("default", "c", {b});
  DeleteOwner("a", "Background");
  gc_.Sync();
  EXPECT_EQ(Cm("b"), nullptr);
  EXPECT_NE(Cm("c"), nullptr);
  gc_.Sync();
  EXPECT_EQ(Cm("c"), nullptr);
}

TEST_F(GarbageCollectorTest, LiveOwnerKeepsDependentWithoutDanglingReference) {
  api::ObjectPtr a = Owner("default", "a");
  api::ObjectPtr b = Owner("default", "b");
  Dependent("default", "dep", {a, b});
  DeleteOwner("a", "Background");
  gc_.Sync();
  api::ObjectPtr dep = Cm("dep");
  ASSERT_NE(dep, nullptr);
  ASSERT_EQ(dep->owner_references().size(), 1u);
  EXPECT_EQ(dep->owner_references()[0].uid, b->uid());
}

TEST_F(GarbageCollectorTest, DanglingAndCrossNamespaceReferences) {
  // An owner uid that never existed.
  Create(ConfigMaps(), "default", R"({"metadata":{"name":"orphaned",
      "ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"x",
                          "uid":"00000000-0000-4000-8000-000000000000"}]}})");
  // A namespaced owner in another namespace does not own it.
  api::ObjectPtr elsewhere = Owner("kube-system", "elsewhere");
  Dependent("default", "cross", {elsewhere});
  gc_.Sync();
  EXPECT_EQ(Cm("orphaned"), nullptr);
  EXPECT_EQ(Cm("cross"), nullptr);
  EXPECT_NE(Get(ConfigMaps(), "kube-system", "elsewhere"), nullptr);
}

TEST_F(GarbageCollectorTest, ForegroundWaitsForBlockingDependents) {
  api::ObjectPtr owner = Owner("default", "owner");
  Dependent("default", "held", {owner}, /*block=*/true, "example.com/hold");
  Dependent("default", "plain", {owner}, /*block=*/true);
  DeleteOwner("owner", "Foreground");
  api::ObjectPtr o = Cm("owner");
  ASSERT_NE(o, nullptr);
  EXPECT_TRUE(o->HasFinalizer("foregroundDeletion"));
  EXPECT_TRUE(o->being_deleted());

  gc_.Sync();
  gc_.Sync();
  EXPECT_EQ(Cm("plain"), nullptr);
  ASSERT_NE(Cm("held"), nullptr);
  EXPECT_TRUE(Cm("held")->being_deleted());
  EXPECT_NE(Cm("owner"), nullptr) << "a blocking dependent remains";

  // The dependent's own finalizer goes; then the owner can go.
  api::ObjectBuilder b = Cm("held")->ToBuilder();
  b.RemoveFinalizer("example.com/hold");
  ASSERT_TRUE(
      registry_.Update(ConfigMaps(), "default", "held", std::move(b)).ok());
  EXPECT_EQ(Cm("held"), nullptr);
  gc_.Sync();
  EXPECT_EQ(Cm("owner"), nullptr);
}

TEST_F(GarbageCollectorTest, ForegroundDoesNotWaitForNonBlockingDependents) {
  api::ObjectPtr owner = Owner("default", "owner");
  Dependent("default", "held", {owner}, /*block=*/false, "example.com/hold");
  DeleteOwner("owner", "Foreground");
  gc_.Sync();
  EXPECT_EQ(Cm("owner"), nullptr);
  ASSERT_NE(Cm("held"), nullptr);
  EXPECT_TRUE(Cm("held")->being_deleted());
}

TEST_F(GarbageCollectorTest, ForegroundDeletesGrandchildrenFirst) {
  api::ObjectPtr a = Owner("default", "a");
  api::ObjectPtr b = Dependent("default", "b", {a}, /*block=*/true);
  Dependent("default", "c", {b}, /*block=*/true, "example.com/hold");
  DeleteOwner("a", "Foreground");
  gc_.Sync();
  // b has a dependent, so it is deleted in the foreground too and waits.
  ASSERT_NE(Cm("b"), nullptr);
  EXPECT_TRUE(Cm("b")->HasFinalizer("foregroundDeletion"));
  gc_.Sync();
  ASSERT_NE(Cm("c"), nullptr);
  EXPECT_TRUE(Cm("c")->being_deleted());
  EXPECT_NE(Cm("a"), nullptr);
  api::ObjectBuilder c = Cm("c")->ToBuilder();
  c.RemoveFinalizer("example.com/hold");
  ASSERT_TRUE(
      registry_.Update(ConfigMaps(), "default", "c", std::move(c)).ok());
  gc_.Sync();
  EXPECT_EQ(Cm("b"), nullptr);
  gc_.Sync();
  EXPECT_EQ(Cm("a"), nullptr);
}

TEST_F(GarbageCollectorTest, OrphanRemovesReferencesThenTheFinalizer) {
  api::ObjectPtr owner = Owner("default", "owner");
  api::ObjectPtr other = Owner("default", "other");
  Dependent("default", "dep", {owner});
  Dependent("default", "shared", {owner, other});
  DeleteOwner("owner", "Orphan");
  ASSERT_NE(Cm("owner"), nullptr);
  EXPECT_TRUE(Cm("owner")->HasFinalizer("orphan"));
  gc_.Sync();
  EXPECT_EQ(Cm("owner"), nullptr);
  ASSERT_NE(Cm("dep"), nullptr);
  EXPECT_TRUE(Cm("dep")->owner_references().empty());
  EXPECT_EQ(Cm("dep")->Find("/metadata/ownerReferences"), nullptr);
  ASSERT_NE(Cm("shared"), nullptr);
  ASSERT_EQ(Cm("shared")->owner_references().size(), 1u);
  EXPECT_EQ(Cm("shared")->owner_references()[0].uid, other->uid());
  gc_.Sync();
  EXPECT_NE(Cm("dep"), nullptr);
}

TEST_F(GarbageCollectorTest, WantsOnlyWritesThatMatter) {
  api::ObjectPtr owner = Owner("default", "owner");
  api::ObjectPtr dep = Dependent("default", "dep", {owner});
  api::ObjectPtr other = Owner("default", "other");
  StoredEvent e;
  e.collection = "/configmaps";
  e.object = dep;
  EXPECT_TRUE(gc_.Wants(e));
  e.object = other;
  EXPECT_FALSE(gc_.Wants(e));
  e.type = EventType::kDeleted;
  e.object = owner;
  EXPECT_FALSE(gc_.Wants(e)) << "no pass has seen it own anything yet";
  gc_.Sync();
  EXPECT_TRUE(gc_.Wants(e));
  e.object = other;
  EXPECT_FALSE(gc_.Wants(e));
}

TEST_F(GarbageCollectorTest, AnOwnersDeletionSyncsOnlyItsDependents) {
  for (int i = 0; i < 50; ++i) {
    api::ObjectPtr owner = Owner("default", Cat("owner", i));
    Dependent("default", Cat("dep", i, "a"), {owner});
    Dependent("default", Cat("dep", i, "b"), {owner});
  }
  Settle();
  const uint64_t before = gc_.keys_synced();
  EXPECT_EQ(before, 0u) << "nothing dangles: the first pass queues nothing";

  // A write that leaves the references alone queues nothing.
  api::ObjectBuilder touched = Cm("dep3a")->ToBuilder();
  touched.SetAnnotation("touched", "yes");
  ASSERT_TRUE(
      registry_.Update(ConfigMaps(), "default", "dep3a", std::move(touched))
          .ok());
  gc_.Sync();
  EXPECT_EQ(gc_.keys_synced(), before);

  DeleteOwner("owner7", "Background");
  gc_.Sync();
  EXPECT_EQ(gc_.keys_synced(), before + 2) << "owner7's two dependents";
  EXPECT_EQ(Cm("dep7a"), nullptr);
  EXPECT_EQ(Cm("dep7b"), nullptr);
  // Their deletions own nothing and wait for nobody: nothing more.
  Settle();
  EXPECT_EQ(gc_.keys_synced(), before + 2);
  EXPECT_NE(Cm("dep6a"), nullptr);
  EXPECT_NE(Cm("dep8b"), nullptr);
}

TEST_F(GarbageCollectorTest, NewReferencesSyncTheDependent) {
  api::ObjectPtr owner = Owner("default", "owner");
  api::ObjectPtr dep = Dependent("default", "dep", {owner});
  Settle();
  const uint64_t before = gc_.keys_synced();
  // dep now also names an owner that does not exist: it is looked at and
  // loses that reference.
  api::ObjectBuilder b = Cm("dep")->ToBuilder();
  api::OwnerReferenceView ghost;
  ghost.api_version = "v1";
  ghost.kind = "ConfigMap";
  ghost.name = "ghost";
  ghost.uid = "00000000-0000-4000-8000-000000000001";
  b.AddOwnerReference(ghost);
  ASSERT_TRUE(
      registry_.Update(ConfigMaps(), "default", "dep", std::move(b)).ok());
  gc_.Sync();
  EXPECT_EQ(gc_.keys_synced(), before + 1);
  ASSERT_NE(Cm("dep"), nullptr);
  ASSERT_EQ(Cm("dep")->owner_references().size(), 1u);
  EXPECT_EQ(Cm("dep")->owner_references()[0].uid, owner->uid());
}

TEST_F(GarbageCollectorTest, MissedWritesAreFoundByTheFullPass) {
  api::ObjectPtr owner = Owner("default", "owner");
  Dependent("default", "dep", {owner});
  Settle();
  DeleteOwner("owner", "Background");
  // The deletion is no longer in the history: the pass looks at every
  // object and finds dep's reference dangling.
  storage_.Compact();
  gc_.Sync();
  EXPECT_EQ(Cm("dep"), nullptr);
}

TEST_F(GarbageCollectorTest, ForegroundKeepsADependentWithAnotherLiveOwner) {
  api::ObjectPtr owner = Owner("default", "owner");
  api::ObjectPtr other = Owner("default", "other");
  Dependent("default", "shared", {owner, other}, /*block=*/true);
  Settle();
  DeleteOwner("owner", "Foreground");
  Settle();
  EXPECT_EQ(Cm("owner"), nullptr);
  ASSERT_NE(Cm("shared"), nullptr);
  EXPECT_FALSE(Cm("shared")->being_deleted());
  ASSERT_EQ(Cm("shared")->owner_references().size(), 1u);
  EXPECT_EQ(Cm("shared")->owner_references()[0].uid, other->uid());
}

TEST_F(GarbageCollectorTest, ADependentThatStopsBlockingReleasesItsOwner) {
  api::ObjectPtr owner = Owner("default", "owner");
  Dependent("default", "held", {owner}, /*block=*/true, "example.com/hold");
  DeleteOwner("owner", "Foreground");
  Settle();
  ASSERT_NE(Cm("held"), nullptr);
  EXPECT_TRUE(Cm("held")->being_deleted());
  ASSERT_NE(Cm("owner"), nullptr);
  // held no longer blocks: the owner waits for nothing.
  api::ObjectBuilder b = Cm("held")->ToBuilder();
  ASSERT_TRUE(
      b.SetBool("/metadata/ownerReferences/0/blockOwnerDeletion", false).ok());
  ASSERT_TRUE(
      registry_.Update(ConfigMaps(), "default", "held", std::move(b)).ok());
  gc_.Sync();
  EXPECT_EQ(Cm("owner"), nullptr);
  EXPECT_NE(Cm("held"), nullptr) << "its own finalizer still holds it";
}

class GarbageCollectorCascadeTest : public GarbageCollectorTest {
 protected:
  const ResourceInfo& ReplicaSets() {
    return Resource("apps", "v1", "replicasets");
  }

  // A ReplicaSet of `replicas` pods owned by ConfigMap `owner`, its pods
  // created by the replicaset controller.
  api::ObjectPtr ReplicaSetOf(const api::Object& owner, const std::string& name,
                              int replicas) {
    api::ObjectPtr rs = Create(
        ReplicaSets(), "default",
        Cat(R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{)",
            R"("name":")", name, R"(","ownerReferences":[{"apiVersion":"v1",)",
            R"("kind":"ConfigMap","name":")", owner.name(), R"(","uid":")",
            owner.uid(), R"(","controller":true,"blockOwnerDeletion":true}]},)",
            R"("spec":{"replicas":)", replicas,
            R"(,"selector":{"matchLabels":{"app":")", name,
            R"("}},"template":{"metadata":{"labels":{"app":")", name,
            R"("}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}})"));
    rc_.Sync();
    return rs;
  }

  size_t PodsOf(const api::Object& rs) {
    size_t n = 0;
    for (const api::ObjectPtr& p : storage_.Snapshot("/pods")) {
      auto ref = p->controller_reference();
      if (ref.has_value() && ref->uid == rs.uid()) ++n;
    }
    return n;
  }

  ReplicaSetController rc_{&registry_, &clock_};
};

TEST_F(GarbageCollectorCascadeTest, BackgroundDeletesReplicaSetThenPods) {
  std::vector<api::ObjectPtr> replicasets;
  for (int i = 0; i < 50; ++i) {
    api::ObjectPtr app = Owner("default", Cat("app", i));
    replicasets.push_back(ReplicaSetOf(*app, Cat("rs", i), 2));
  }
  ASSERT_EQ(PodsOf(*replicasets[7]), 2u);
  Settle();
  const uint64_t before = gc_.keys_synced();
  DeleteOwner("app7", "Background");
  Settle();
  EXPECT_EQ(Get(ReplicaSets(), "default", "rs7"), nullptr);
  EXPECT_EQ(PodsOf(*replicasets[7]), 0u);
  // The ReplicaSet, then its two pods.
  EXPECT_EQ(gc_.keys_synced(), before + 3);
  EXPECT_EQ(PodsOf(*replicasets[6]), 2u);
  EXPECT_NE(Get(ReplicaSets(), "default", "rs8"), nullptr);
}

TEST_F(GarbageCollectorCascadeTest, ForegroundWaitsForReplicaSetAndPods) {
  api::ObjectPtr app = Owner("default", "app");
  api::ObjectPtr rs = ReplicaSetOf(*app, "rs", 3);
  ASSERT_EQ(PodsOf(*rs), 3u);
  Settle();
  DeleteOwner("app", "Foreground");
  gc_.Sync();
  // The ReplicaSet has pods: it goes in the foreground too, and app waits.
  api::ObjectPtr now = Get(ReplicaSets(), "default", "rs");
  ASSERT_NE(now, nullptr);
  EXPECT_TRUE(now->HasFinalizer("foregroundDeletion"));
  EXPECT_NE(Cm("app"), nullptr);
  Settle();
  EXPECT_EQ(PodsOf(*rs), 0u);
  EXPECT_EQ(Get(ReplicaSets(), "default", "rs"), nullptr);
  EXPECT_EQ(Cm("app"), nullptr);
}

}  // namespace
}  // namespace kcr::apiserver
