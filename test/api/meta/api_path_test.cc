#include "api/meta/api_path.h"

#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

TEST(ApiPathTest, GroupVersionPath) {
  EXPECT_EQ(GroupVersionPath({"", "v1"}), "/api/v1");
  EXPECT_EQ(GroupVersionPath({"apps", "v1"}), "/apis/apps/v1");
}

TEST(ApiPathTest, NamespacedCollectionAndItem) {
  GroupVersionResource pods("", "v1", "pods");
  EXPECT_EQ(*CollectionPath(pods, true, "default"),
            "/api/v1/namespaces/default/pods");
  EXPECT_EQ(*CollectionPath(pods, true, ""), "/api/v1/pods");
  EXPECT_EQ(*ItemPath(pods, true, "default", "web-0"),
            "/api/v1/namespaces/default/pods/web-0");
  EXPECT_EQ(*ItemPath(pods, true, "default", "web-0", "status"),
            "/api/v1/namespaces/default/pods/web-0/status");
  GroupVersionResource deploy("apps", "v1", "deployments");
  EXPECT_EQ(*ItemPath(deploy, true, "ns1", "d", "scale"),
            "/apis/apps/v1/namespaces/ns1/deployments/d/scale");
  EXPECT_EQ(*CollectionPath(deploy, true, ""), "/apis/apps/v1/deployments");
}

TEST(ApiPathTest, ClusterScoped) {
  GroupVersionResource ns("", "v1", "namespaces");
  EXPECT_EQ(*CollectionPath(ns, false, ""), "/api/v1/namespaces");
  EXPECT_EQ(*ItemPath(ns, false, "", "kube-system"),
            "/api/v1/namespaces/kube-system");
  EXPECT_EQ(*ItemPath(ns, false, "", "kube-system", "finalize"),
            "/api/v1/namespaces/kube-system/finalize");
  GroupVersionResource crd("apiextensions.k8s.io", "v1",
                           "customresourcedefinitions");
  EXPECT_EQ(*ItemPath(crd, false, "", "nginxes.example.org"),
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
            "nginxes.example.org");
  EXPECT_EQ(CollectionPath(ns, false, "default").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ItemPath(ns, false, "x", "y").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ApiPathTest, RejectsBadNames) {
  GroupVersionResource pods("", "v1", "pods");
  for (const char* bad : {"", ".", "..", "a/b", "a%2F"}) {
    EXPECT_EQ(ItemPath(pods, true, "default", bad).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
    if (*bad) {
      EXPECT_EQ(CollectionPath(pods, true, bad).status().code(),
                absl::StatusCode::kInvalidArgument)
          << bad;
    }
  }
  EXPECT_EQ(ItemPath(pods, true, "", "p").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ItemPath(pods, true, "d", "p", "a/b").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ApiPathTest, EscapesSegments) {
  EXPECT_EQ(EscapePathSegment("system:node:a@b"), "system:node:a@b");
  EXPECT_EQ(EscapePathSegment("a b?#"), "a%20b%3F%23");
  GroupVersionResource sa("", "v1", "serviceaccounts");
  EXPECT_EQ(*ItemPath(sa, true, "kube-system", "x y"),
            "/api/v1/namespaces/kube-system/serviceaccounts/x%20y");
}

TEST(ApiPathTest, FromMapping) {
  auto m = RESTMapper::NewDefault();
  auto deploy = m->Resolve("deploy");
  ASSERT_TRUE(deploy.ok());
  EXPECT_EQ(*ItemPath(*deploy, "default", "web", "status"),
            "/apis/apps/v1/namespaces/default/deployments/web/status");
  EXPECT_EQ(ItemPath(*deploy, "default", "web", "log").status().code(),
            absl::StatusCode::kNotFound);
  auto ns = m->Resolve("ns");
  EXPECT_EQ(*CollectionPath(*ns, ""), "/api/v1/namespaces");
  EXPECT_EQ(*CollectionPath(*m->Resolve("cm"), "kube-system"),
            "/api/v1/namespaces/kube-system/configmaps");
}

}  // namespace
}  // namespace api
}  // namespace kcr
