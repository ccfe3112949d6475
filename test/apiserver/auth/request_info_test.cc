// RequestAttributes: kube-apiserver's RequestInfoFactory on the paths and
// methods the server serves.
#include "apiserver/auth/request_info.h"

#include "gtest/gtest.h"

namespace kcr::apiserver::auth {
namespace {

struct Case {
  const char* method;
  const char* path;
  bool watch;
  bool resource;
  const char* verb;
  const char* group;
  const char* resource_name;
  const char* sub;
  const char* ns;
  const char* name;
};

TEST(RequestInfoTest, KubesRequestInfo) {
  const Case cases[] = {
      {"GET", "/api/v1/namespaces/ns/pods", false, true, "list", "", "pods", "",
       "ns", ""},
      {"GET", "/api/v1/namespaces/ns/pods", true, true, "watch", "", "pods", "",
       "ns", ""},
      {"GET", "/api/v1/namespaces/ns/pods/p/log", false, true, "get", "",
       "pods", "log", "ns", "p"},
      {"POST", "/api/v1/namespaces/ns/serviceaccounts/sa/token", false, true,
       "create", "", "serviceaccounts", "token", "ns", "sa"},
      {"GET", "/api/v1/watch/namespaces/ns/pods", false, true, "watch", "",
       "pods", "", "ns", ""},
      {"GET", "/api/v1/namespaces/ns", false, true, "get", "", "namespaces", "",
       "ns", "ns"},
      {"PUT", "/api/v1/namespaces/ns/finalize", false, true, "update", "",
       "namespaces", "finalize", "ns", "ns"},
      {"GET", "/api/v1/namespaces", false, true, "list", "", "namespaces", "",
       "", ""},
      {"DELETE", "/apis/apps/v1/namespaces/ns/deployments", false, true,
       "deletecollection", "apps", "deployments", "", "ns", ""},
      {"DELETE", "/apis/apps/v1/namespaces/ns/deployments/d", false, true,
       "delete", "apps", "deployments", "", "ns", "d"},
      {"PATCH", "/apis/apps/v1/namespaces/ns/deployments/d/scale", false, true,
       "patch", "apps", "deployments", "scale", "ns", "d"},
      {"GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles", false, true,
       "list", "rbac.authorization.k8s.io", "clusterroles", "", "", ""},
      {"GET", "/api", false, false, "get", "", "", "", "", ""},
      {"GET", "/api/v1", false, false, "get", "", "", "", "", ""},
      {"GET", "/apis/apps/v1", false, false, "get", "", "", "", "", ""},
      {"POST", "/metrics", false, false, "post", "", "", "", "", ""},
  };
  for (const Case& c : cases) {
    Attributes a = RequestAttributes(c.method, c.path, c.watch, {});
    EXPECT_EQ(a.resource_request, c.resource) << c.path;
    EXPECT_EQ(a.verb, c.verb) << c.path;
    EXPECT_EQ(a.api_group, c.group) << c.path;
    EXPECT_EQ(a.resource, c.resource_name) << c.path;
    EXPECT_EQ(a.subresource, c.sub) << c.path;
    EXPECT_EQ(a.ns, c.ns) << c.path;
    EXPECT_EQ(a.name, c.name) << c.path;
    EXPECT_EQ(a.path, c.path);
  }
}

}  // namespace
}  // namespace kcr::apiserver::auth
