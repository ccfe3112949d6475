#include "apiserver/kube_controllers/control_plane_leases.h"

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

std::string At(const api::ObjectPtr& o, const char* pointer) {
  if (o == nullptr) return "<no object>";
  const rapidjson::Value* v = o->Find(pointer);
  if (v == nullptr) return "<absent>";
  if (v->IsString()) return v->GetString();
  if (v->IsInt64()) return std::to_string(v->GetInt64());
  return "<other>";
}

class ControlPlaneLeasesTest : public ControllerTest {
 protected:
  const ResourceInfo& Leases() {
    return Resource("coordination.k8s.io", "v1", "leases");
  }
  api::ObjectPtr Lease(const std::string& ns, const std::string& name) {
    return Get(Leases(), ns, name);
  }
  api::ObjectPtr CreateNode(const std::string& name) {
    return Create(Resource("", "v1", "nodes"), "",
                  R"({"metadata":{"name":")" + name + R"("}})");
  }

  ControlPlaneLeases leases_{&registry_, &clock_, {.host = "cp"}};
};

TEST_F(ControlPlaneLeasesTest, KeepsTheNodeAndControlPlaneLeases) {
  api::ObjectPtr node = CreateNode("n1");
  const absl::Time t0 = clock_.Now();
  EXPECT_EQ(leases_.Sync(), t0 + ControlPlaneLeases::kLeaderRenewInterval);

  api::ObjectPtr n1 = Lease("kube-node-lease", "n1");
  EXPECT_EQ(At(n1, "/spec/holderIdentity"), "n1");
  EXPECT_EQ(At(n1, "/spec/leaseDurationSeconds"), "40");
  EXPECT_EQ(At(n1, "/metadata/ownerReferences/0/kind"), "Node");
  EXPECT_EQ(At(n1, "/metadata/ownerReferences/0/uid"), node->uid());
  EXPECT_EQ(At(n1, "/spec/acquireTime"), "<absent>");
  const std::string first_renewal = At(n1, "/spec/renewTime");

  api::ObjectPtr kcm = Lease("kube-system", "kube-controller-manager");
  const std::string holder = At(kcm, "/spec/holderIdentity");
  EXPECT_EQ(holder.substr(0, 3), "cp_");
  EXPECT_EQ(At(kcm, "/spec/leaseDurationSeconds"), "15");
  EXPECT_EQ(At(kcm, "/spec/leaseTransitions"), "0");
  EXPECT_EQ(At(Lease("kube-system", "kube-scheduler"), "/spec/holderIdentity"),
            holder);

  int identities = 0;
  for (const api::ObjectPtr& l : storage_.Snapshot(Leases().StorageKey())) {
    if (l->Label("apiserver.kubernetes.io/identity") != "kube-apiserver") {
      continue;
    }
    ++identities;
    EXPECT_EQ(l->namespace_(), "kube-system");
    EXPECT_EQ(l->name().substr(0, 10), "apiserver-");
    EXPECT_EQ(l->Label("kubernetes.io/hostname"), "cp");
    EXPECT_EQ(At(l, "/spec/leaseDurationSeconds"), "3600");
  }
  EXPECT_EQ(identities, 1);

  // Leader leases every 2 s, the node's every 10 s.
  clock_.Advance(absl::Seconds(2));
  leases_.Sync();
  EXPECT_NE(At(Lease("kube-system", "kube-scheduler"), "/spec/renewTime"),
            At(kcm, "/spec/renewTime"));
  EXPECT_EQ(At(Lease("kube-node-lease", "n1"), "/spec/renewTime"),
            first_renewal);
  clock_.Advance(absl::Seconds(8));
  leases_.Sync();
  EXPECT_NE(At(Lease("kube-node-lease", "n1"), "/spec/renewTime"),
            first_renewal);
}

TEST_F(ControlPlaneLeasesTest, PutsBackWhatIsDeletedOrTaken) {
  CreateNode("n1");
  leases_.Sync();
  const std::string holder =
      At(Lease("kube-system", "kube-scheduler"), "/spec/holderIdentity");
  ASSERT_TRUE(registry_.Delete(Leases(), "kube-node-lease", "n1", {}).ok());
  api::ObjectBuilder b = Lease("kube-system", "kube-scheduler")->ToBuilder();
  ASSERT_TRUE(b.SetString("/spec/holderIdentity", "someone-else").ok());
  ASSERT_TRUE(
      registry_.Update(Leases(), "kube-system", "kube-scheduler", std::move(b))
          .ok());
  // At once, not at the next renewal.
  leases_.Sync();
  EXPECT_EQ(At(Lease("kube-node-lease", "n1"), "/spec/holderIdentity"), "n1");
  api::ObjectPtr scheduler = Lease("kube-system", "kube-scheduler");
  EXPECT_EQ(At(scheduler, "/spec/holderIdentity"), holder);
  EXPECT_EQ(At(scheduler, "/spec/leaseTransitions"), "1");
}

TEST_F(ControlPlaneLeasesTest, WantsNodesAndSystemLeasesOnly) {
  StoredEvent e;
  e.collection = "/nodes";
  EXPECT_TRUE(leases_.Wants(e));
  e.collection = "/configmaps";
  EXPECT_FALSE(leases_.Wants(e));
  e.collection = "coordination.k8s.io/leases";
  e.object = *api::Object::Parse(
      R"({"metadata":{"name":"mine","namespace":"default"}})");
  EXPECT_FALSE(leases_.Wants(e));
  e.object = *api::Object::Parse(
      R"({"metadata":{"name":"kube-scheduler","namespace":"kube-system"}})");
  EXPECT_TRUE(leases_.Wants(e));
}

}  // namespace
}  // namespace kcr::apiserver
