// The local API server's daemonset controller at scale: D DaemonSets over N
// Nodes (Node objects written directly; no simulated kubelet, so pods stay
// Pending, which placement does not need). Times the controller's passes
// until every DaemonSet has its N pods, then, settled, the pass after
//   - one pod's write (its DaemonSet alone: the sync reads the Nodes, so it
//     grows with N as kube's does, not with D);
//   - a Node write that leaves labels and taints alone (no DaemonSet);
//   - a Node label that changes one DaemonSet's placement (every
//     DaemonSet's placement on that node is evaluated, kube's updateNode,
//     and one is synced).
//
//   bazel run -c opt //bench:daemonset_controller_benchmark
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/object_builder.h"
#include "apiserver/kube_controllers/daemonset_controller.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "benchmark/benchmark.h"
#include "glog/logging.h"
#include "test/fakes/fake_clock.h"

namespace kcr {
namespace apiserver {
namespace {

api::ObjectBuilder FromJson(const std::string& json) {
  absl::StatusOr<api::ObjectBuilder> b = api::ObjectBuilder::FromJson(json);
  CHECK(b.ok()) << b.status();
  return std::move(*b);
}

std::string DaemonSetJson(const std::string& name,
                          const std::string& node_selector) {
  return absl::StrCat(
      R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":")",
      name, R"("},"spec":{"selector":{"matchLabels":{"app":")", name,
      R"("}},"template":{"metadata":{"labels":{"app":")", name,
      R"("}},"spec":{)", node_selector,
      R"("containers":[{"name":"c","image":"agent:1"}]}}}})");
}

void BM_DaemonSets(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int daemonsets = static_cast<int>(state.range(1));
  double pod_write_us = 0, node_write_us = 0, label_write_us = 0;
  for (auto _ : state) {
    testing::FakeClock clock;
    Storage storage;
    ResourceRegistry resources;
    RegistryOptions options;
    options.clock = &clock;
    Registry registry(&storage, &resources, options);
    CHECK(registry.Bootstrap().ok());
    ResourceInfoPtr node_info = resources.Lookup("", "v1", "nodes");
    ResourceInfoPtr ds_info = resources.Lookup("apps", "v1", "daemonsets");
    ResourceInfoPtr pod_info = resources.Lookup("", "v1", "pods");
    DaemonSetController dsc(&registry, &clock);
    for (int i = 0; i < nodes; ++i) {
      CHECK(registry
                .Create(*node_info, "",
                        FromJson(absl::StrCat(
                            R"({"apiVersion":"v1","kind":"Node",)",
                            R"("metadata":{"name":"n)", i, R"("}})")))
                .ok());
    }
    for (int i = 0; i < daemonsets; ++i) {
      CHECK(registry
                .Create(*ds_info, "default",
                        FromJson(DaemonSetJson(absl::StrCat("ds", i), "")))
                .ok());
    }
    CHECK(registry
              .Create(*ds_info, "default",
                      FromJson(DaemonSetJson(
                          "gpu", R"("nodeSelector":{"gpu":"yes"},)")))
              .ok());
    const absl::Time start = absl::Now();
    for (int i = 0; i < 5; ++i) dsc.Sync();
    state.SetIterationTime(absl::ToDoubleSeconds(absl::Now() - start));
    CHECK_EQ(storage.Count(pod_info->StorageKey()),
             static_cast<size_t>(nodes) * daemonsets);

    const auto timed = [&] {
      const absl::Time t = absl::Now();
      dsc.Sync();
      return absl::ToDoubleMicroseconds(absl::Now() - t);
    };
    api::ObjectPtr pod = storage.Snapshot(pod_info->StorageKey())[0];
    api::ObjectBuilder b = pod->ToBuilder();
    b.SetAnnotation("touched", "yes");
    CHECK(
        registry.Update(*pod_info, "default", pod->name(), std::move(b)).ok());
    pod_write_us = timed();

    b = storage.Get(node_info->StorageKey(), "", "n1")->ToBuilder();
    b.SetAnnotation("note", "x");
    CHECK(registry.Update(*node_info, "", "n1", std::move(b)).ok());
    node_write_us = timed();

    b = storage.Get(node_info->StorageKey(), "", "n1")->ToBuilder();
    b.SetLabel("gpu", "yes");
    CHECK(registry.Update(*node_info, "", "n1", std::move(b)).ok());
    label_write_us = timed();
  }
  state.counters["pod_write_pass_us"] = pod_write_us;
  state.counters["node_write_pass_us"] = node_write_us;
  state.counters["label_write_pass_us"] = label_write_us;
}
BENCHMARK(BM_DaemonSets)
    ->Args({10, 10})
    ->Args({10, 300})
    ->Args({300, 10})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace apiserver
}  // namespace kcr

BENCHMARK_MAIN();
