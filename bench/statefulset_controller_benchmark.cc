// What one pod's write costs the statefulset controller, beside a full pass
// over every StatefulSet (the full resync): N StatefulSets of two Parallel
// replicas, run by the simulated node on a fake clock until settled. Times
// are the CPU time of the pass on its thread, so that other processes on a
// busy machine do not inflate them.
//
//   bazel run -c opt //bench:statefulset_controller_benchmark
#include <time.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/object_builder.h"
#include "apiserver/kube_controllers/node_simulator.h"
#include "apiserver/kube_controllers/statefulset_controller.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "benchmark/benchmark.h"
#include "glog/logging.h"
#include "test/fakes/fake_clock.h"

namespace kcr {
namespace apiserver {
namespace {

double ThreadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

RegistryOptions Options(const Clock* clock) {
  RegistryOptions o;
  o.clock = clock;
  return o;
}

// `n` StatefulSets s<i> of two Parallel replicas, settled.
struct Cluster {
  explicit Cluster(int n) : registry(&storage, &resources, Options(&clock)) {
    CHECK(registry.Bootstrap().ok());
    pods = resources.Lookup("", "v1", "pods");
    ResourceInfoPtr sets = resources.Lookup("apps", "v1", "statefulsets");
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<api::ObjectBuilder> b =
          api::ObjectBuilder::FromJson(absl::StrCat(
              R"({"metadata":{"name":"s)", i,
              R"("},"spec":{"replicas":2,"podManagementPolicy":"Parallel",)",
              R"("serviceName":"s","selector":{"matchLabels":{"app":"s)", i,
              R"("}},"template":{"metadata":{"labels":{"app":"s)", i,
              R"("}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}})"));
      CHECK(registry.Create(*sets, "default", std::move(*b)).ok());
    }
    for (int round = 0; round < 20; ++round) {
      const uint64_t before = controller.keys_synced() + sim.keys_synced();
      controller.Sync();
      sim.Sync();
      clock.Advance(absl::Seconds(1));
      if (controller.keys_synced() + sim.keys_synced() == before) break;
    }
  }

  // Annotates pod s<i>-0.
  void Touch(int i, int round) {
    const std::string name = absl::StrCat("s", i, "-0");
    api::ObjectPtr pod = storage.Get(pods->StorageKey(), "default", name);
    CHECK(pod != nullptr) << name;
    api::ObjectBuilder b = pod->ToBuilder();
    b.SetAnnotation("round", absl::StrCat(round));
    CHECK(registry.Update(*pods, "default", name, std::move(b)).ok());
  }

  static NodeSimulatorOptions SimOptions() {
    NodeSimulatorOptions o;
    o.record_events = false;
    o.simulate_deployments = false;
    o.incremental.pass_budget = absl::InfiniteDuration();
    return o;
  }
  static IncrementalControllerOptions ControllerOptions() {
    IncrementalControllerOptions o;
    o.pass_budget = absl::InfiniteDuration();
    return o;
  }

  testing::FakeClock clock;
  Storage storage;
  ResourceRegistry resources;
  Registry registry;
  ResourceInfoPtr pods;
  StatefulSetController controller{&registry, &clock, ControllerOptions()};
  NodeSimulator sim{&registry, &clock, SimOptions()};
};

// One pod of N settled StatefulSets written, then one pass.
void BM_StatefulSetPassAfterOnePodWrite(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Cluster c(n);
  int round = 0;
  for (auto _ : state) {
    c.Touch(round % n, round);
    ++round;
    const double start = ThreadSeconds();
    c.controller.Sync();
    state.SetIterationTime(ThreadSeconds() - start);
  }
}
BENCHMARK(BM_StatefulSetPassAfterOnePodWrite)
    ->Arg(100)
    ->Arg(1000)
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime();

// A pass over every StatefulSet (the full resync).
void BM_StatefulSetFullPass(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Cluster c(n);
  for (auto _ : state) {
    c.clock.Advance(absl::Minutes(11));
    const double start = ThreadSeconds();
    c.controller.Sync();
    state.SetIterationTime(ThreadSeconds() - start);
  }
}
BENCHMARK(BM_StatefulSetFullPass)
    ->Arg(100)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

}  // namespace
}  // namespace apiserver
}  // namespace kcr

BENCHMARK_MAIN();
