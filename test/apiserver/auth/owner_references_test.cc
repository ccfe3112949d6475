// The OwnerReferencesPermissionEnforcement admission plugin: changing
// ownerReferences needs delete on the object; a newly blocking reference
// needs update on the owner's finalizers; pods/status is exempt.
#include "apiserver/auth/owner_references.h"

#include <set>
#include <string>

#include "api/errors/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/apiserver/registry_fixture.h"

namespace kcr::apiserver::auth {
namespace {

using ::testing::HasSubstr;

// Allows "<verb> <resource>[/<subresource>] <namespace>/<name>" entries.
class ListAuthorizer : public Authorizer {
 public:
  Decision Authorize(const Attributes& a) const override {
    std::string key = a.verb + " " + a.resource;
    if (!a.subresource.empty()) key += "/" + a.subresource;
    key += " " + a.ns + "/" + a.name;
    asked.push_back(key);
    return {allowed.count(key) > 0, ""};
  }
  RuleSet RulesFor(const UserInfo&, const std::string&) const override {
    return {};
  }
  bool enforcing() const override { return true; }

  std::set<std::string> allowed;
  mutable std::vector<std::string> asked;
};

rapidjson::Document Json(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str());
  return d;
}

std::string WithOwner(bool block, const std::string& uid = "u1") {
  return R"({"metadata":{"name":"c","ownerReferences":[{"apiVersion":"apps/v1",)"
         R"("kind":"Deployment","name":"web","uid":")" +
         uid + R"(","controller":true,"blockOwnerDeletion":)" +
         (block ? "true" : "false") + "}]}}";
}

class OwnerReferencesTest : public RegistryFixture {
 protected:
  absl::Status Check(const std::string& object, const std::string* old,
                     const std::string& plural = "configmaps",
                     const std::string& sub = "") {
    rapidjson::Document now = Json(object);
    rapidjson::Document before;
    if (old != nullptr) before = Json(*old);
    return ConfirmOwnerReferencePermissions(
        authorizer_, resources_, *Resource("", "v1", plural), sub, "ns", "c",
        now, old != nullptr ? &before : nullptr, user_, &denied_);
  }

  ListAuthorizer authorizer_;
  const UserInfo user_{"bob", "", {"system:authenticated"}, {}};
  Attributes denied_;
};

TEST_F(OwnerReferencesTest, AnObjectWithoutOwnersNeedsNothing) {
  EXPECT_TRUE(Check(R"({"metadata":{"name":"c"}})", nullptr).ok());
  const std::string same = WithOwner(true);
  EXPECT_TRUE(Check(same, &same).ok());
  EXPECT_TRUE(authorizer_.asked.empty());
}

TEST_F(OwnerReferencesTest, SettingOwnersNeedsDeleteOnTheObject) {
  absl::Status s = Check(WithOwner(false), nullptr);
  ASSERT_TRUE(api::IsForbidden(s)) << s;
  EXPECT_EQ(s.message(),
            "configmaps \"c\" is forbidden: cannot set an ownerRef on a "
            "resource you can't delete: , <nil>");
  EXPECT_EQ(denied_.verb, "delete");
  authorizer_.allowed.insert("delete configmaps ns/c");
  EXPECT_TRUE(Check(WithOwner(false), nullptr).ok());
}

TEST_F(OwnerReferencesTest, BlockingNeedsUpdateOnTheOwnersFinalizers) {
  authorizer_.allowed.insert("delete configmaps ns/c");
  absl::Status s = Check(WithOwner(true), nullptr);
  ASSERT_TRUE(api::IsForbidden(s)) << s;
  EXPECT_EQ(s.message(),
            "configmaps \"c\" is forbidden: cannot set blockOwnerDeletion if "
            "an ownerReference refers to a resource you can't set finalizers "
            "on: , <nil>");
  EXPECT_EQ(denied_.api_group, "apps");
  EXPECT_EQ(denied_.resource, "deployments");
  EXPECT_EQ(denied_.subresource, "finalizers");
  EXPECT_EQ(denied_.name, "web");
  authorizer_.allowed.insert("update deployments/finalizers ns/web");
  EXPECT_TRUE(Check(WithOwner(true), nullptr).ok());
}

TEST_F(OwnerReferencesTest, OnlyNewlyBlockingReferencesAreChecked) {
  authorizer_.allowed.insert("delete configmaps ns/c");
  // Turned on: checked.
  const std::string not_blocking = WithOwner(false);
  EXPECT_TRUE(api::IsForbidden(Check(WithOwner(true), &not_blocking)));
  // Already blocking, another field changed: only delete is needed.
  const std::string blocking = WithOwner(true);
  std::string renamed = WithOwner(true);
  renamed.replace(renamed.find("\"web\""), 5, "\"web2\"");
  EXPECT_TRUE(Check(renamed, &blocking).ok());
  // A new uid is a new reference.
  EXPECT_TRUE(api::IsForbidden(Check(WithOwner(true, "u2"), &blocking)));
}

TEST_F(OwnerReferencesTest, AnUnknownOwnerKindIsForbidden) {
  authorizer_.allowed.insert("delete configmaps ns/c");
  absl::Status s = Check(
      R"({"metadata":{"name":"c","ownerReferences":[{"apiVersion":"x.io/v1",)"
      R"("kind":"Nope","name":"n","uid":"u","blockOwnerDeletion":true}]}})",
      nullptr);
  ASSERT_TRUE(api::IsForbidden(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("cannot find RESTMapping for APIVersion "
                                     "x.io/v1 Kind Nope"));
}

TEST_F(OwnerReferencesTest, PodStatusIsExempt) {
  EXPECT_TRUE(Check(WithOwner(true), nullptr, "pods", "status").ok());
  EXPECT_TRUE(api::IsForbidden(Check(WithOwner(true), nullptr, "pods")));
}

}  // namespace
}  // namespace kcr::apiserver::auth
