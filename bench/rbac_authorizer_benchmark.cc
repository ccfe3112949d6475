// RbacAuthorizer::Authorize against a store of many bindings: a request
// costs the bindings of its user and groups (found through the storage
// index by subject), not a scan, so the time per request stays flat as the
// bindings grow.
//
//   bazel run -c opt //bench:rbac_authorizer_benchmark
#include <memory>
#include <string>

#include "api/object_builder.h"
#include "apiserver/auth/bootstrap_policy.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "benchmark/benchmark.h"

namespace kcr::apiserver::auth {
namespace {

struct Cluster {
  Storage storage;
  ResourceRegistry resources;
  Registry registry{&storage, &resources};
  std::unique_ptr<RbacAuthorizer> authorizer;

  explicit Cluster(int bindings) {
    (void)registry.Bootstrap();
    (void)EnsureBootstrapPolicy(&registry);
    authorizer = std::make_unique<RbacAuthorizer>(&storage, &resources);
    ResourceInfoPtr roles =
        resources.Lookup("rbac.authorization.k8s.io", "v1", "roles");
    ResourceInfoPtr rbs =
        resources.Lookup("rbac.authorization.k8s.io", "v1", "rolebindings");
    auto role = api::ObjectBuilder::FromJson(
        R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"reader"},"rules":[{"apiGroups":["apps"],"resources":["deployments"],"verbs":["get"]},{"apiGroups":[""],"resources":["pods","configmaps"],"verbs":["get","list","watch"]}]})");
    (void)registry.Create(*roles, "default", std::move(*role));
    for (int i = 0; i < bindings; ++i) {
      auto b = api::ObjectBuilder::FromJson(
          R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"b)" +
          std::to_string(i) +
          R"("},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"reader"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"user)" +
          std::to_string(i) + R"("}]})");
      (void)registry.Create(*rbs, "default", std::move(*b));
    }
  }
};

void BM_AuthorizeAllowed(benchmark::State& state) {
  Cluster cluster(static_cast<int>(state.range(0)));
  Attributes a;
  a.user = UserInfo{"user7", "", {kAllAuthenticated}, {}};
  a.verb = "list";
  a.resource = "pods";
  a.ns = "default";
  for (auto _ : state) {
    benchmark::DoNotOptimize(cluster.authorizer->Authorize(a));
  }
}
BENCHMARK(BM_AuthorizeAllowed)->Arg(10)->Arg(1000)->Arg(10000);

void BM_AuthorizeDenied(benchmark::State& state) {
  Cluster cluster(static_cast<int>(state.range(0)));
  Attributes a;
  a.user = UserInfo{"nobody", "", {kAllAuthenticated}, {}};
  a.verb = "delete";
  a.resource = "pods";
  a.ns = "default";
  a.name = "p";
  for (auto _ : state) {
    benchmark::DoNotOptimize(cluster.authorizer->Authorize(a));
  }
}
BENCHMARK(BM_AuthorizeDenied)->Arg(10)->Arg(1000)->Arg(10000);

}  // namespace
}  // namespace kcr::apiserver::auth

BENCHMARK_MAIN();
