// The restart storm: how long fresh changes wait behind a controller's
// initial list, with the FIFO queue (RateLimitingQueue) and with the
// priority queue (PriorityQueue, the list at the handlers' low priority).
//
// Each run: 4 workers take items and spend 20 µs of busy work on each; the
// producer adds 50,000 listed objects (the informer's initial list; at
// priority -100 on the priority queue, as the handlers add them), then at
// once 100 fresh changes (at the default priority). Reported: how long the
// fresh changes waited, from the start of their Add to a worker taking them
// (p50, p99, max, in µs), and how long the whole queue took to drain (ms).
//
// Two kinds of fresh change: new objects (keys not in the list), and
// changes to listed objects spread from the 10,000th to the end of the
// list (which, on the FIFO queue, collapse into the waiting entry and keep
// its place in line).
//
// BM_AddGetDone measures the queues' own cost, without work per item.
//
//   bazel run -c opt //bench:priority_queue_benchmark
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "runtime/workqueue/priority_queue.h"
#include "runtime/workqueue/rate_limiting_queue.h"

namespace kcr::workqueue {
namespace {

constexpr int kListed = 50'000;
constexpr int kFresh = 100;
constexpr int kWorkers = 4;
constexpr std::chrono::microseconds kWorkCost{20};
// Where the changed listed objects start, and how far apart they are.
constexpr int kFirstChanged = 10'000;
constexpr int kChangedStride = (kListed - kFirstChanged) / kFresh;
// controller::kLowPriority (the benchmark stays below the controller layer).
constexpr int kLowPriority = -100;

enum QueueKind { kFifo = 0, kPriority = 1 };
enum FreshKind { kNewObjects = 0, kChangedObjects = 1 };

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void BusyWork() {
  const auto until = std::chrono::steady_clock::now() + kWorkCost;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// The value at `q` (0..1) of sorted `v`, nearest rank.
double Quantile(const std::vector<double>& v, double q) {
  size_t rank = static_cast<size_t>(q * v.size() + 0.999999);
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

void BM_RestartStorm(benchmark::State& state) {
  const auto queue_kind = static_cast<QueueKind>(state.range(0));
  const auto fresh_kind = static_cast<FreshKind>(state.range(1));

  std::vector<std::string> listed;
  listed.reserve(kListed);
  for (int i = 0; i < kListed; ++i) {
    listed.push_back(absl::StrCat("default/listed-", i));
  }
  std::vector<std::string> fresh;
  absl::flat_hash_map<std::string, int> fresh_index;
  for (int j = 0; j < kFresh; ++j) {
    fresh.push_back(fresh_kind == kNewObjects
                        ? absl::StrCat("default/fresh-", j)
                        : listed[kFirstChanged + j * kChangedStride]);
    fresh_index[fresh.back()] = j;
  }

  std::vector<double> waits_us;
  double drain_ms = 0;
  for (auto _ : state) {
    std::unique_ptr<RateLimitingInterface<std::string>> queue;
    PriorityQueue<std::string>* pq = nullptr;
    if (queue_kind == kPriority) {
      auto p = std::make_unique<PriorityQueue<std::string>>();
      pq = p.get();
      queue = std::move(p);
    } else {
      queue = std::make_unique<RateLimitingQueue<std::string>>();
    }
    std::vector<std::atomic<int64_t>> added(kFresh);
    std::vector<std::atomic<int64_t>> taken(kFresh);
    for (int j = 0; j < kFresh; ++j) {
      added[j].store(0);
      taken[j].store(0);
    }
    std::atomic<int> handed_out{0};

    const int64_t start = NowNanos();
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.emplace_back([&] {
        while (std::optional<std::string> item = queue->Get()) {
          const int64_t now = NowNanos();
          auto it = fresh_index.find(*item);
          if (it != fresh_index.end()) {
            const int j = it->second;
            const int64_t a = added[j].load(std::memory_order_acquire);
            int64_t expected = 0;
            if (a != 0) taken[j].compare_exchange_strong(expected, now);
          }
          BusyWork();
          queue->Done(*item);
          handed_out.fetch_add(1, std::memory_order_relaxed);
        }
      });
    }
    AddOpts low;
    low.priority = kLowPriority;
    for (const std::string& key : listed) {
      // One add per informer event, as the handlers make them.
      if (pq != nullptr) {
        pq->AddWithOpts(low, key);
      } else {
        queue->Add(key);
      }
    }
    for (int j = 0; j < kFresh; ++j) {
      added[j].store(NowNanos(), std::memory_order_release);
      queue->Add(fresh[j]);
    }
    const int expected_total =
        kListed + (fresh_kind == kNewObjects ? kFresh : 0);
    while (handed_out.load(std::memory_order_relaxed) < expected_total ||
           queue->Len() > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    queue->ShutDownWithDrain();
    for (std::thread& t : workers) t.join();
    drain_ms = (NowNanos() - start) / 1e6;

    waits_us.clear();
    for (int j = 0; j < kFresh; ++j) {
      const int64_t t = taken[j].load();
      if (t == 0) {
        state.SkipWithError("a fresh change was never handed out");
        return;
      }
      waits_us.push_back((t - added[j].load()) / 1e3);
    }
    std::sort(waits_us.begin(), waits_us.end());
  }
  state.counters["fresh_p50_us"] = Quantile(waits_us, 0.50);
  state.counters["fresh_p99_us"] = Quantile(waits_us, 0.99);
  state.counters["fresh_max_us"] = waits_us.back();
  state.counters["drain_ms"] = drain_ms;
  state.SetLabel(absl::StrCat(queue_kind == kFifo ? "fifo" : "priority", "/",
                              fresh_kind == kNewObjects ? "new" : "changed"));
}

BENCHMARK(BM_RestartStorm)
    ->ArgNames({"queue", "fresh"})
    ->Args({kFifo, kNewObjects})
    ->Args({kPriority, kNewObjects})
    ->Args({kFifo, kChangedObjects})
    ->Args({kPriority, kChangedObjects})
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The queue's own cost, without work: 1 producer adds kItems distinct keys
// (at two priorities on the priority queue) while `workers` take and finish
// them; items per second.
void BM_AddGetDone(benchmark::State& state) {
  constexpr int kItems = 200'000;
  const auto queue_kind = static_cast<QueueKind>(state.range(0));
  const int workers_count = static_cast<int>(state.range(1));
  std::vector<std::string> keys;
  keys.reserve(kItems);
  for (int i = 0; i < kItems; ++i) {
    keys.push_back(absl::StrCat("default/name-", i));
  }
  for (auto _ : state) {
    std::unique_ptr<RateLimitingInterface<std::string>> queue;
    PriorityQueue<std::string>* pq = nullptr;
    if (queue_kind == kPriority) {
      auto p = std::make_unique<PriorityQueue<std::string>>();
      pq = p.get();
      queue = std::move(p);
    } else {
      queue = std::make_unique<RateLimitingQueue<std::string>>();
    }
    std::atomic<int> done{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < workers_count; ++w) {
      workers.emplace_back([&] {
        while (std::optional<std::string> item = queue->Get()) {
          queue->Done(*item);
          if (done.fetch_add(1, std::memory_order_relaxed) + 1 == kItems) {
            queue->ShutDown();
          }
        }
      });
    }
    AddOpts opts;
    for (int i = 0; i < kItems; ++i) {
      if (pq != nullptr) {
        opts.priority = (i & 1) != 0 ? kLowPriority : 0;
        pq->AddWithOpts(opts, keys[i]);
      } else {
        queue->Add(keys[i]);
      }
    }
    for (std::thread& t : workers) t.join();
  }
  state.SetItemsProcessed(state.iterations() * kItems);
  state.SetLabel(queue_kind == kFifo ? "fifo" : "priority");
}

BENCHMARK(BM_AddGetDone)
    ->ArgNames({"queue", "workers"})
    ->Args({kFifo, 1})
    ->Args({kPriority, 1})
    ->Args({kFifo, 4})
    ->Args({kPriority, 4})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The same on one thread: all the adds, then every Get and Done. Its CPU
// time is the queue's cost per item, little disturbed by other processes.
void BM_AddThenDrainOneThread(benchmark::State& state) {
  constexpr int kItems = 200'000;
  const auto queue_kind = static_cast<QueueKind>(state.range(0));
  std::vector<std::string> keys;
  keys.reserve(kItems);
  for (int i = 0; i < kItems; ++i) {
    keys.push_back(absl::StrCat("default/name-", i));
  }
  for (auto _ : state) {
    std::unique_ptr<RateLimitingInterface<std::string>> queue;
    PriorityQueue<std::string>* pq = nullptr;
    if (queue_kind == kPriority) {
      auto p = std::make_unique<PriorityQueue<std::string>>();
      pq = p.get();
      queue = std::move(p);
    } else {
      queue = std::make_unique<RateLimitingQueue<std::string>>();
    }
    AddOpts opts;
    for (int i = 0; i < kItems; ++i) {
      if (pq != nullptr) {
        opts.priority = (i & 1) != 0 ? kLowPriority : 0;
        pq->AddWithOpts(opts, keys[i]);
      } else {
        queue->Add(keys[i]);
      }
    }
    for (int i = 0; i < kItems; ++i) {
      std::optional<std::string> item = queue->Get();
      queue->Done(*item);
    }
  }
  state.SetItemsProcessed(state.iterations() * kItems);
  state.SetLabel(queue_kind == kFifo ? "fifo" : "priority");
}

BENCHMARK(BM_AddThenDrainOneThread)
    ->ArgNames({"queue"})
    ->Arg(kFifo)
    ->Arg(kPriority)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kcr::workqueue

BENCHMARK_MAIN();
