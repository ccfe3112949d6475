// What one write costs the incremental built-in controllers, beside a full
// pass over every key (the full resync, and what every pass cost before the
// controllers were incremental): the node simulator with N running pods,
// and the endpoints controller with N Services of one pod each, all pods
// sharing one label as well, which the Services' selectors name too in the
// "shared" runs (/1): then every Service is filed under that label. Times are
// the CPU time of the pass on its thread (everything a pass does runs there),
// so that other processes on a busy machine do not inflate them.
//
//   bazel run -c opt //bench:kube_controllers_benchmark
#include <time.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/object_builder.h"
#include "apiserver/kube_controllers/endpoints_controller.h"
#include "apiserver/kube_controllers/node_simulator.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "benchmark/benchmark.h"
#include "glog/logging.h"
#include "test/fakes/fake_clock.h"

namespace kcr {
namespace apiserver {
namespace {

// CPU time of this thread.
double ThreadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

// A store on a fake clock with `n` pods labelled app=s<i> and tier=web.
struct Cluster {
  explicit Cluster(int n) : registry(&storage, &resources, Options(&clock)) {
    CHECK(registry.Bootstrap().ok());
    pods = resources.Lookup("", "v1", "pods");
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<api::ObjectBuilder> b =
          api::ObjectBuilder::FromJson(absl::StrCat(
              R"({"metadata":{"name":"p)", i, R"(","labels":{"app":"s)", i,
              R"(","tier":"web"}},"spec":{"containers":[)",
              R"({"name":"c","image":"nginx"}]}})"));
      CHECK(registry.Create(*pods, "default", std::move(*b)).ok());
    }
  }
  static RegistryOptions Options(const Clock* clock) {
    RegistryOptions o;
    o.clock = clock;
    return o;
  }
  // Annotates pod p<i>: a write every controller here reads.
  void Touch(int i, int round) {
    const std::string name = absl::StrCat("p", i);
    api::ObjectBuilder b =
        storage.Get(pods->StorageKey(), "default", name)->ToBuilder();
    b.SetAnnotation("round", absl::StrCat(round));
    CHECK(registry.Update(*pods, "default", name, std::move(b)).ok());
  }

  testing::FakeClock clock;
  Storage storage;
  ResourceRegistry resources;
  Registry registry;
  ResourceInfoPtr pods;
};

NodeSimulatorOptions SimOptions() {
  NodeSimulatorOptions o;
  o.record_events = false;  // setup speed; a pass reads no Event
  o.simulate_deployments = false;
  o.incremental.pass_budget = absl::InfiniteDuration();
  return o;
}

// Runs every pod of `c` until a pass has nothing to do.
void Settle(Cluster& c, NodeSimulator& sim) {
  for (int i = 0; i < 20; ++i) {
    const uint64_t before = sim.keys_synced();
    sim.Sync();
    c.clock.Advance(absl::Seconds(1));
    if (sim.keys_synced() == before) return;
  }
}

// One pod of N running pods written, then one pass.
void BM_NodeSimulatorPassAfterOneWrite(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Cluster c(n);
  NodeSimulator sim(&c.registry, &c.clock, SimOptions());
  Settle(c, sim);
  int round = 0;
  for (auto _ : state) {
    c.Touch(round % n, round);
    ++round;
    const double start = ThreadSeconds();
    sim.Sync();
    state.SetIterationTime(ThreadSeconds() - start);
  }
}
BENCHMARK(BM_NodeSimulatorPassAfterOneWrite)
    ->Arg(1000)
    ->Arg(5000)
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime();

// A pass over every pod (the full resync), with N running pods.
void BM_NodeSimulatorFullPass(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Cluster c(n);
  NodeSimulator sim(&c.registry, &c.clock, SimOptions());
  Settle(c, sim);
  for (auto _ : state) {
    c.clock.Advance(absl::Minutes(11));
    const double start = ThreadSeconds();
    sim.Sync();
    state.SetIterationTime(ThreadSeconds() - start);
  }
}
BENCHMARK(BM_NodeSimulatorFullPass)
    ->Arg(1000)
    ->Arg(5000)
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime();

// N Services s<i> selecting app=s<i>, each with its running pod; the
// controller settled.
struct ServiceCluster : Cluster {
  ServiceCluster(int n, bool shared) : Cluster(n) {
    ResourceInfoPtr services = resources.Lookup("", "v1", "services");
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<api::ObjectBuilder> b = api::ObjectBuilder::FromJson(
          absl::StrCat(R"({"metadata":{"name":"s)", i,
                       R"("},"spec":{"selector":{"app":"s)", i,
                       shared ? R"(","tier":"web)" : "",
                       R"("},"ports":[{"port":80}]}})"));
      CHECK(registry.Create(*services, "default", std::move(*b)).ok());
    }
    NodeSimulator sim(&registry, &clock, SimOptions());
    Settle(*this, sim);
  }
};

IncrementalControllerOptions Unhurried() {
  IncrementalControllerOptions o;
  o.pass_budget = absl::InfiniteDuration();
  return o;
}

// One pod's readiness flipped, then one pass.
void BM_EndpointsPassAfterOnePodWrite(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  ServiceCluster c(n, state.range(1) != 0);
  EndpointsController ec(&c.registry, &c.clock, Unhurried());
  ec.Sync();
  ec.Sync();
  int round = 0;
  for (auto _ : state) {
    const std::string name = absl::StrCat("p", round % n);
    ++round;
    api::ObjectPtr pod = c.storage.Get(c.pods->StorageKey(), "default", name);
    api::ObjectBuilder b = pod->ToBuilder();
    const bool ready =
        pod->Find("/status/conditions/1/status") != nullptr &&
        std::string(pod->Find("/status/conditions/1/status")->GetString()) ==
            "True";
    CHECK(b.SetString("/status/conditions/1/status", ready ? "False" : "True")
              .ok());
    WriteOptions w;
    w.subresource = "status";
    CHECK(c.registry.Update(*c.pods, "default", name, std::move(b), w).ok());
    const double start = ThreadSeconds();
    ec.Sync();
    state.SetIterationTime(ThreadSeconds() - start);
  }
}
BENCHMARK(BM_EndpointsPassAfterOnePodWrite)
    ->Args({1000, 0})
    ->Args({5000, 0})
    ->Args({1000, 1})
    ->Args({5000, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime();

// A pass over every Service (the full resync).
void BM_EndpointsFullPass(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  ServiceCluster c(n, state.range(1) != 0);
  EndpointsController ec(&c.registry, &c.clock, Unhurried());
  ec.Sync();
  ec.Sync();
  for (auto _ : state) {
    c.clock.Advance(absl::Minutes(11));
    const double start = ThreadSeconds();
    ec.Sync();
    state.SetIterationTime(ThreadSeconds() - start);
  }
}
BENCHMARK(BM_EndpointsFullPass)
    ->Args({1000, 0})
    ->Args({5000, 0})
    ->Args({1000, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

}  // namespace
}  // namespace apiserver
}  // namespace kcr

BENCHMARK_MAIN();
