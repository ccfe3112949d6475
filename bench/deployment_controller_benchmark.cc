// The local API server's deployment controller at scale: N Deployments of
// one replica each rolled out by the deployment controller, the
// ReplicaSet controller and the simulated node in lock step on a fake
// clock, timing the deployment controller's passes alone; then, settled,
// the pass that follows one Deployment's write (a per-write cost that must
// not grow with N).
//
//   bazel run -c opt //bench:deployment_controller_benchmark
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/object_builder.h"
#include "apiserver/kube_controllers/deployment_controller.h"
#include "apiserver/kube_controllers/node_simulator.h"
#include "apiserver/kube_controllers/replicaset_controller.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "benchmark/benchmark.h"
#include "glog/logging.h"
#include "test/fakes/fake_clock.h"

namespace kcr {
namespace apiserver {
namespace {

std::string DeploymentJson(const std::string& name) {
  return absl::StrCat(
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":")",
      name, R"("},"spec":{"replicas":1,"selector":{"matchLabels":{"app":")",
      name, R"("}},"template":{"metadata":{"labels":{"app":")", name,
      R"("}},"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}})");
}

bool AllAvailable(Storage* storage, int n) {
  int done = 0;
  for (const api::ObjectPtr& d : storage->Snapshot("apps/deployments")) {
    const rapidjson::Value* v = d->Find("/status/availableReplicas");
    if (v != nullptr && v->IsInt64() && v->GetInt64() == 1) ++done;
  }
  return done == n;
}

void BM_DeploymentRollout(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  double one_write_us = 0;
  for (auto _ : state) {
    testing::FakeClock clock;
    Storage storage;
    ResourceRegistry resources;
    RegistryOptions options;
    options.clock = &clock;
    Registry registry(&storage, &resources, options);
    CHECK(registry.Bootstrap().ok());
    ResourceInfoPtr deployments = resources.Lookup("apps", "v1", "deployments");
    DeploymentController dc(&registry, &clock);
    ReplicaSetController rc(&registry, &clock);
    NodeSimulatorOptions node_options;
    node_options.simulate_deployments = false;
    NodeSimulator node(&registry, &clock, node_options);
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<api::ObjectBuilder> b =
          api::ObjectBuilder::FromJson(DeploymentJson(absl::StrCat("d", i)));
      CHECK(b.ok());
      CHECK(registry.Create(*deployments, "default", std::move(*b)).ok());
    }
    absl::Duration dc_time;
    const auto timed_sync = [&] {
      const absl::Time start = absl::Now();
      dc.Sync();
      dc_time += absl::Now() - start;
    };
    for (int round = 0; round < 200 && !AllAvailable(&storage, n); ++round) {
      timed_sync();
      rc.Sync();
      node.Sync();
      node.Sync();
      rc.Sync();
      clock.Advance(absl::Seconds(1));
      timed_sync();
    }
    CHECK(AllAvailable(&storage, n));
    for (int i = 0; i < 5; ++i) timed_sync();
    state.SetIterationTime(absl::ToDoubleSeconds(dc_time));

    api::ObjectBuilder b =
        storage.Get(deployments->StorageKey(), "default", "d7")->ToBuilder();
    CHECK(b.SetJson("/spec/replicas", "2").ok());
    CHECK(registry.Update(*deployments, "default", "d7", std::move(b)).ok());
    const absl::Time start = absl::Now();
    dc.Sync();
    one_write_us = absl::ToDoubleMicroseconds(absl::Now() - start);
  }
  state.counters["one_write_pass_us"] = one_write_us;
  state.counters["deployments"] = n;
}
BENCHMARK(BM_DeploymentRollout)
    ->Arg(1000)
    ->Arg(3000)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace apiserver
}  // namespace kcr

BENCHMARK_MAIN();
