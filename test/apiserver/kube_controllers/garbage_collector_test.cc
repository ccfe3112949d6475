#include "apiserver/kube_controllers/garbage_collector.h"

#include <string>

#include "api/object_builder.h"
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

}  // namespace
}  // namespace kcr::apiserver
