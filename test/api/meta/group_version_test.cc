#include "api/meta/group_version.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

TEST(GroupVersionTest, ParsesNamedGroup) {
  auto gv = ParseGroupVersion("apps/v1");
  ASSERT_TRUE(gv.ok()) << gv.status();
  EXPECT_EQ(gv->group, "apps");
  EXPECT_EQ(gv->version, "v1");
  EXPECT_EQ(gv->ToString(), "apps/v1");
}

TEST(GroupVersionTest, ParsesCoreGroup) {
  auto gv = ParseGroupVersion("v1");
  ASSERT_TRUE(gv.ok());
  EXPECT_EQ(gv->group, "");
  EXPECT_EQ(gv->version, "v1");
  EXPECT_EQ(gv->ToString(), "v1");
  EXPECT_EQ(gv->ApiVersion(), "v1");
}

TEST(GroupVersionTest, EmptyIsEmpty) {
  auto gv = ParseGroupVersion("");
  ASSERT_TRUE(gv.ok());
  EXPECT_TRUE(gv->Empty());
}

TEST(GroupVersionTest, RejectsExtraSlashesAndMissingVersion) {
  EXPECT_EQ(ParseGroupVersion("a/b/c").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseGroupVersion("apps/").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ParseGroupVersion("a/b/c").status().message().find("a/b/c"),
            std::string::npos);
}

TEST(GroupVersionTest, ComparableAndHashable) {
  GroupVersion a("apps", "v1"), b("apps", "v1"), c("", "v1");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_LT(c, a);
  absl::flat_hash_set<GroupVersion> set = {a, b, c};
  EXPECT_EQ(set.size(), 2u);
}

TEST(GroupVersionKindTest, StringForms) {
  GroupVersionKind d("apps", "v1", "Deployment");
  EXPECT_EQ(d.ApiVersion(), "apps/v1");
  EXPECT_EQ(d.ToString(), "apps/v1, Kind=Deployment");
  GroupVersionKind p("", "v1", "Pod");
  EXPECT_EQ(p.ApiVersion(), "v1");
  EXPECT_EQ(p.ToString(), "v1, Kind=Pod");
  EXPECT_EQ(p.GetGroupVersion(), GroupVersion("", "v1"));
}

TEST(GroupVersionKindTest, FromApiVersion) {
  auto gvk = GroupVersionKindFromApiVersion("example.org/v1", "Nginx");
  ASSERT_TRUE(gvk.ok());
  EXPECT_EQ(*gvk, GroupVersionKind("example.org", "v1", "Nginx"));
  EXPECT_FALSE(GroupVersionKindFromApiVersion("", "Pod").ok());
  EXPECT_FALSE(GroupVersionKindFromApiVersion("v1", "").ok());
  EXPECT_FALSE(GroupVersionKindFromApiVersion("a/b/c", "X").ok());
}

TEST(GroupVersionKindTest, HashableAndOrdered) {
  absl::flat_hash_set<GroupVersionKind> set = {{"apps", "v1", "Deployment"},
                                               {"apps", "v1", "Deployment"},
                                               {"", "v1", "Pod"}};
  EXPECT_EQ(set.size(), 2u);
  EXPECT_LT(GroupVersionKind("", "v1", "Pod"),
            GroupVersionKind("apps", "v1", "Deployment"));
}

TEST(GroupVersionResourceTest, StringFormAndHash) {
  GroupVersionResource r("apps", "v1", "deployments");
  EXPECT_EQ(r.ToString(), "apps/v1, Resource=deployments");
  EXPECT_EQ(GroupVersionResource("", "v1", "pods").ToString(),
            "v1, Resource=pods");
  absl::flat_hash_set<GroupVersionResource> set = {r, r, {"", "v1", "pods"}};
  EXPECT_EQ(set.size(), 2u);
}

TEST(GroupResourceTest, StringFormsAsErrorMessagesWriteThem) {
  EXPECT_EQ((GroupResource{"apps", "deployments"}).ToString(),
            "deployments.apps");
  EXPECT_EQ((GroupResource{"", "configmaps"}).ToString(), "configmaps");
  EXPECT_EQ((GroupKind{"apps", "Deployment"}).ToString(), "Deployment.apps");
  EXPECT_EQ((GroupKind{"", "ConfigMap"}).ToString(), "ConfigMap");
  EXPECT_EQ((GroupResource{"", "pods"}), (GroupResource{"", "pods"}));
  EXPECT_NE((GroupKind{"a", "K"}), (GroupKind{"b", "K"}));
}

TEST(KubeVersionLessTest, OrdersAsKubernetes) {
  std::vector<std::string> v = {"v1alpha1", "foo",      "v1",      "v2beta1",
                                "v1beta2",  "v2",       "v1beta1", "v10",
                                "bar",      "v11alpha2"};
  std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) {
    return KubeVersionLess(a, b);
  });
  EXPECT_EQ(v, (std::vector<std::string>{"v10", "v2", "v1", "v2beta1",
                                         "v1beta2", "v1beta1", "v11alpha2",
                                         "v1alpha1", "bar", "foo"}));
}

}  // namespace
}  // namespace api
}  // namespace kcr
