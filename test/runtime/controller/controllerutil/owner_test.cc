#include "runtime/controller/controllerutil/owner.h"

#include <string>

#include "api/object_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr::controller::controllerutil {
namespace {

using ::testing::HasSubstr;

api::ObjectPtr Make(std::string api_version, std::string kind, std::string ns,
                    std::string name) {
  api::ObjectBuilder b(api_version, kind);
  b.SetName(name).SetUid("uid-" + name);
  if (!ns.empty()) b.SetNamespace(ns);
  return *b.Build();
}

api::ObjectPtr Nginx(std::string name, std::string ns = "default") {
  return Make("example.org/v1", "Nginx", ns, name);
}
api::ObjectPtr Deployment(std::string ns = "default") {
  return Make("apps/v1", "Deployment", ns, "web-deploy");
}

TEST(OwnerTest, SetControllerReference) {
  auto owned = SetControllerReference(*Nginx("web"), *Deployment());
  ASSERT_TRUE(owned.ok()) << owned.status();
  auto ref = GetControllerOf(**owned);
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->api_version, "example.org/v1");
  EXPECT_EQ(ref->kind, "Nginx");
  EXPECT_EQ(ref->name, "web");
  EXPECT_EQ(ref->uid, "uid-web");
  EXPECT_TRUE(ref->controller);
  EXPECT_TRUE(ref->block_owner_deletion);
  EXPECT_TRUE(HasControllerReference(**owned));
  EXPECT_FALSE(HasControllerReference(*Deployment()));

  // Again, or with another version of the owner's API: one reference.
  auto again = SetControllerReference(
      *Make("example.org/v2", "Nginx", "default", "web"), **owned);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ((*again)->owner_references().size(), 1u);
  EXPECT_EQ((*again)->owner_references()[0].api_version, "example.org/v2");
}

TEST(OwnerTest, AnotherControllerIsRefused) {
  auto owned = SetControllerReference(*Nginx("web"), *Deployment());
  ASSERT_TRUE(owned.ok());
  auto other = SetControllerReference(*Nginx("other"), **owned);
  EXPECT_TRUE(IsAlreadyOwned(other.status())) << other.status();
  EXPECT_EQ(other.status().message(),
            "Object default/web-deploy is already owned by another Nginx "
            "controller web");
  EXPECT_FALSE(IsAlreadyOwned(absl::FailedPreconditionError("x")));
}

TEST(OwnerTest, ScopeRules) {
  // A namespaced owner cannot own a cluster-scoped object...
  auto cluster = SetControllerReference(*Nginx("web"),
                                        *Make("v1", "Namespace", "", "team-a"));
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cluster.status().message(),
              HasSubstr("cluster-scoped resource must not have a "
                        "namespace-scoped owner"));
  // ... nor one in another namespace.
  auto cross = SetOwnerReference(*Nginx("web"), *Deployment("other"));
  EXPECT_THAT(cross.status().message(),
              HasSubstr("cross-namespace owner references are disallowed"));
  // A cluster-scoped owner can own anything.
  EXPECT_TRUE(SetControllerReference(*Make("v1", "Namespace", "", "team-a"),
                                     *Deployment())
                  .ok());
  // An owner without a uid cannot be referenced.
  api::ObjectBuilder no_uid("example.org/v1", "Nginx");
  no_uid.SetName("web").SetNamespace("default");
  EXPECT_EQ(
      SetControllerReference(**no_uid.Build(), *Deployment()).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(OwnerTest, SetOwnerReferenceAddsPlainReferences) {
  auto a = SetOwnerReference(*Nginx("a"), *Deployment());
  ASSERT_TRUE(a.ok());
  auto ab = SetOwnerReference(*Nginx("b"), **a);
  ASSERT_TRUE(ab.ok());
  ASSERT_EQ((*ab)->owner_references().size(), 2u);
  EXPECT_FALSE((*ab)->owner_references()[0].controller);
  EXPECT_FALSE((*ab)->owner_references()[1].block_owner_deletion);
  EXPECT_FALSE(HasControllerReference(**ab));
  // A controller beside plain owners.
  auto controlled = SetControllerReference(*Nginx("c"), **ab);
  ASSERT_TRUE(controlled.ok());
  EXPECT_EQ((*controlled)->owner_references().size(), 3u);
  EXPECT_EQ(GetControllerOf(**controlled)->name, "c");
}

TEST(OwnerTest, BuilderForm) {
  api::ObjectBuilder b(*Deployment());
  ASSERT_TRUE(SetControllerReference(*Nginx("web"), b).ok());
  EXPECT_TRUE(HasControllerReference(**b.Build()));
}

}  // namespace
}  // namespace kcr::controller::controllerutil
