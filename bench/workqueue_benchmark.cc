// Work-queue throughput, the scenarios client-go's queue is compared on
// (docs/benchmarks.md has the baseline and the results):
//
//  (a) 1 producer adds 1,000,000 distinct keys "ns/name-<i>" (built before
//      timing) while 1 consumer does Get+Done until drained.
//  (b) as (a) with 4 consumers.
//  (c) 1,000,000 Adds over 1,000 distinct keys, 2 workers draining.
//  (d) ItemExponentialFailureRateLimiter When()+Forget(), per pair.
//  (e) DelayingQueue AddAfter(key, 1 ms) for 100,000 distinct keys, then
//      drain with 1 consumer.
//
// (a), (b) and (c) also run on bench/reference_queue.h, client-go's
// algorithm in C++ (BM_*_Reference), and on a named queue that records
// client-go's metrics in a Prometheus registry (BM_*_Metered), the way every
// controller's queue runs, in the same process.
//
// "Drained" means the producer has added everything, called ShutDown, and
// every consumer has seen Get report shutdown (ShutDown still hands out the
// items that are waiting). Each run reports items_per_second and
// peak_rss_MiB (the process's peak so far: run one scenario alone with
// --benchmark_filter to read its own peak).
//
//   bazel run -c opt //bench:workqueue_benchmark
#include <sys/resource.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/reference_queue.h"
#include "benchmark/benchmark.h"
#include "prometheus/registry.h"
#include "runtime/metrics/workqueue_metrics.h"
#include "runtime/workqueue/default_rate_limiters.h"
#include "runtime/workqueue/delaying_queue.h"
#include "runtime/workqueue/queue.h"

namespace kcr::workqueue {
namespace {

std::vector<std::string> MakeKeys(int n) {
  std::vector<std::string> keys;
  keys.reserve(n);
  for (int i = 0; i < n; ++i) keys.push_back(absl::StrCat("ns/name-", i));
  return keys;
}

// The CPU time (user + system) of every thread of the process so far, in
// milliseconds: a loaded machine stretches the wall time of a run but much
// less the CPU it takes.
double ProcessCpuMs() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

double PeakRssMiB() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Options of a queue that records client-go's metrics in a Prometheus
// registry, as a controller's queue does.
QueueOptions MeteredOptions() {
  static auto* registry = new prometheus::Registry();
  static auto* provider = new metrics::PrometheusWorkqueueMetrics(*registry);
  QueueOptions options;
  options.name = "bench";
  options.metrics_provider = provider;
  return options;
}

template <typename Q>
std::unique_ptr<Q> NewQueue(bool metered) {
  if constexpr (std::is_same_v<Q, bench::ReferenceQueue>) {
    return std::make_unique<Q>();
  } else {
    return std::make_unique<Q>(metered ? MeteredOptions() : QueueOptions{});
  }
}

// Drains `queue` until it reports shutdown; returns the items processed.
template <typename Q>
int64_t Drain(Q& queue) {
  int64_t n = 0;
  while (auto item = queue.Get()) {
    benchmark::DoNotOptimize(item->data());
    queue.Done(*item);
    ++n;
  }
  return n;
}

// One producer adding `adds` keys (cycling through `keys`) while `consumers`
// threads drain; returns the wall time and checks the processed count.
template <typename Q = Queue<std::string>>
absl::Duration ProduceAndDrain(const std::vector<std::string>& keys,
                               int64_t adds, int consumers, int64_t* processed,
                               bool metered = false) {
  std::unique_ptr<Q> owned = NewQueue<Q>(metered);
  Q& queue = *owned;
  std::atomic<int64_t> total{0};
  const absl::Time start = absl::Now();
  std::vector<std::thread> workers;
  for (int c = 0; c < consumers; ++c) {
    workers.emplace_back([&] { total += Drain(queue); });
  }
  const int64_t distinct = static_cast<int64_t>(keys.size());
  for (int64_t i = 0; i < adds; ++i) queue.Add(keys[i % distinct]);
  queue.ShutDown();
  for (auto& w : workers) w.join();
  const absl::Duration elapsed = absl::Now() - start;
  *processed = total.load();
  return elapsed;
}

void ReportRss(benchmark::State& state) {
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

// (a) and (b): 1,000,000 distinct keys, `consumers` workers.
template <typename Q = Queue<std::string>>
void DistinctKeys(benchmark::State& state, int consumers,
                  bool metered = false) {
  const auto keys = MakeKeys(1'000'000);
  double cpu_ms = 0;
  for (auto _ : state) {
    int64_t processed;
    const double cpu_before = ProcessCpuMs();
    state.SetIterationTime(absl::ToDoubleSeconds(
        ProduceAndDrain<Q>(keys, keys.size(), consumers, &processed, metered)));
    cpu_ms += ProcessCpuMs() - cpu_before;
    if (processed != static_cast<int64_t>(keys.size())) {
      state.SkipWithError("lost or duplicated items");
    }
  }
  state.SetItemsProcessed(state.iterations() * keys.size());
  // CPU of all threads per run (the queue's and the benchmark's), which a
  // loaded machine disturbs much less than the wall time.
  state.counters["cpu_ms"] = cpu_ms / state.iterations();
  ReportRss(state);
}

void BM_A_DistinctKeys_1Consumer(benchmark::State& state) {
  DistinctKeys(state, 1);
}
void BM_B_DistinctKeys_4Consumers(benchmark::State& state) {
  DistinctKeys(state, 4);
}
void BM_A_Metered(benchmark::State& state) { DistinctKeys(state, 1, true); }
void BM_B_Metered(benchmark::State& state) { DistinctKeys(state, 4, true); }
void BM_A_Reference(benchmark::State& state) {
  DistinctKeys<bench::ReferenceQueue>(state, 1);
}
void BM_B_Reference(benchmark::State& state) {
  DistinctKeys<bench::ReferenceQueue>(state, 4);
}

template <typename Q = Queue<std::string>>
void AddsOver1000Keys(benchmark::State& state, bool metered = false) {
  const auto keys = MakeKeys(1'000);
  constexpr int64_t kAdds = 1'000'000;
  int64_t processed_total = 0;
  for (auto _ : state) {
    int64_t processed;
    state.SetIterationTime(absl::ToDoubleSeconds(
        ProduceAndDrain<Q>(keys, kAdds, 2, &processed, metered)));
    processed_total += processed;
  }
  // Adds per second; the items actually processed after deduplication are
  // reported separately.
  state.SetItemsProcessed(state.iterations() * kAdds);
  state.counters["processed_per_run"] =
      static_cast<double>(processed_total) / state.iterations();
  ReportRss(state);
}
void BM_C_1MAddsOver1000Keys_2Workers(benchmark::State& state) {
  AddsOver1000Keys(state);
}
void BM_C_Metered(benchmark::State& state) { AddsOver1000Keys(state, true); }
void BM_C_Reference(benchmark::State& state) {
  AddsOver1000Keys<bench::ReferenceQueue>(state);
}

void BM_D_ExponentialWhenForget(benchmark::State& state) {
  const auto keys = MakeKeys(1'024);
  ItemExponentialFailureRateLimiter<std::string> limiter(absl::Milliseconds(5),
                                                         absl::Seconds(1000));
  size_t i = 0;
  for (auto _ : state) {
    const std::string& key = keys[i++ & 1023];
    benchmark::DoNotOptimize(limiter.When(key));
    limiter.Forget(key);
  }
  state.SetItemsProcessed(state.iterations());
  ReportRss(state);
}

void BM_E_DelayingAddAfter1ms_Drain(benchmark::State& state) {
  const auto keys = MakeKeys(100'000);
  for (auto _ : state) {
    DelayingQueue<std::string> queue;
    const absl::Time start = absl::Now();
    for (const auto& key : keys) queue.AddAfter(key, absl::Milliseconds(1));
    int64_t n = 0;
    while (n < static_cast<int64_t>(keys.size())) {
      auto item = queue.Get();
      if (!item) break;
      queue.Done(*item);
      ++n;
    }
    state.SetIterationTime(absl::ToDoubleSeconds(absl::Now() - start));
    if (n != static_cast<int64_t>(keys.size())) {
      state.SkipWithError("lost items");
    }
  }
  state.SetItemsProcessed(state.iterations() * keys.size());
  ReportRss(state);
}

// One timed run per repetition: each run measures its own wall time.
void OneTimedRun(benchmark::internal::Benchmark* b) {
  b->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1)
      ->Repetitions(3);
}

BENCHMARK(BM_A_DistinctKeys_1Consumer)->Apply(OneTimedRun);
BENCHMARK(BM_B_DistinctKeys_4Consumers)->Apply(OneTimedRun);
BENCHMARK(BM_C_1MAddsOver1000Keys_2Workers)->Apply(OneTimedRun);
BENCHMARK(BM_D_ExponentialWhenForget)->Repetitions(3);
BENCHMARK(BM_E_DelayingAddAfter1ms_Drain)->Apply(OneTimedRun);
BENCHMARK(BM_A_Metered)->Apply(OneTimedRun);
BENCHMARK(BM_B_Metered)->Apply(OneTimedRun);
BENCHMARK(BM_C_Metered)->Apply(OneTimedRun);
BENCHMARK(BM_A_Reference)->Apply(OneTimedRun);
BENCHMARK(BM_B_Reference)->Apply(OneTimedRun);
BENCHMARK(BM_C_Reference)->Apply(OneTimedRun);

}  // namespace
}  // namespace kcr::workqueue

BENCHMARK_MAIN();
