// The informer's cache: ThreadSafeStore and listers over 100,000 pods.
//
//   bazel run -c opt //bench:cache_benchmark
//
// Pods are the 4.7 KB fixture the object benchmarks use
// (test/api/testdata/pod.json), decoded as the informer does (ObjectDecoder,
// managedFields stripped), each with its own name, namespace (100 of them,
// 1,000 pods each), uid, resourceVersion and a "shard" label (1,000 values,
// 100 pods each). The store has the namespace index informers always add.
//
//   BM_IndexerAdd            Upsert of 100,000 new keys into an empty store
//   BM_IndexerUpdate         Upsert of a new version of a cached pod
//   BM_IndexerGet            GetByKey, keys in random order
//   BM_IndexerByIndex        ByIndex(namespace) returning 1,000 pods
//   BM_IndexerList           List() of all 100,000
//   BM_ListerMatch           Lister::List(shard=7) over 100,000, 100 match
//                            (client-go's BenchmarkLister_Match_100k_100)
//   BM_ReadsBesideWriter     reader threads (Get, or ByIndex) while one
//                            more thread updates pods without pause
//   BM_WriteLatency          the writer's own latency, alone, beside a
//                            thread that Lists all 100,000 without pause,
//                            or beside one that copies them under the lock
//   BM_BytesPerCachedPod     heap bytes per cached pod (mallinfo2 deltas):
//                            the object, and the store's own share
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "api/object.h"
#include "api/selector/label_selector.h"
#include "api/transform.h"
#include "benchmark/benchmark.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "runtime/cache/index.h"
#include "runtime/cache/lister.h"
#include "runtime/cache/thread_safe_store.h"

namespace kcr::cache {
namespace {

constexpr int kPods = 100000;
constexpr int kNamespaces = 100;
constexpr int kShards = 1000;
// Pods that get a second version, for updates: every 10th.
constexpr int kUpdateStride = 10;

std::string ReadFixture() {
  std::ifstream in("test/api/testdata/pod.json", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (text.empty()) {
    std::fprintf(stderr, "cannot read test/api/testdata/pod.json\n");
    std::abort();
  }
  return text;
}

std::string NamespaceOf(int i) {
  return "ns-" + std::to_string(i % kNamespaces);
}

// Pods i = first, first + stride, ... (n of them), at resourceVersion
// base_rv + i.
std::vector<api::ObjectPtr> MakePods(int first, int n, int stride,
                                     int64_t base_rv) {
  rapidjson::Document doc;
  const std::string text = ReadFixture();
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError()) {
    std::fprintf(stderr, "cannot parse the pod fixture\n");
    std::abort();
  }
  rapidjson::Value& metadata = doc["metadata"];
  metadata["labels"].AddMember("shard", "", doc.GetAllocator());
  const api::ObjectDecoder decoder;
  std::vector<api::ObjectPtr> pods;
  pods.reserve(n);
  for (int k = 0; k < n; ++k) {
    const int i = first + k * stride;
    const std::string name = "web-frontend-7c5ddbdf54-" + std::to_string(i);
    const std::string ns = NamespaceOf(i);
    char uid_buffer[40];
    std::snprintf(uid_buffer, sizeof(uid_buffer),
                  "3f2b8c1e-9a4d-4e7b-b1c2-%012d", i);
    const std::string uid = uid_buffer;
    const std::string rv = std::to_string(base_rv + i);
    const std::string shard = std::to_string(i % kShards);
    auto set = [](rapidjson::Value& v, const std::string& s) {
      v.SetString(rapidjson::StringRef(s.data(), s.size()));
    };
    set(metadata["name"], name);
    set(metadata["namespace"], ns);
    set(metadata["uid"], uid);
    set(metadata["resourceVersion"], rv);
    set(metadata["labels"]["shard"], shard);
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    doc.Accept(writer);
    absl::StatusOr<api::ObjectPtr> pod =
        decoder.Decode(std::string_view(buffer.GetString(), buffer.GetSize()));
    if (!pod.ok()) {
      std::fprintf(stderr, "decode failed: %s\n",
                   std::string(pod.status().message()).c_str());
      std::abort();
    }
    pods.push_back(*std::move(pod));
  }
  return pods;
}

struct Pool {
  std::vector<api::ObjectPtr> pods;
  // New versions of every kUpdateStride-th pod.
  std::vector<api::ObjectPtr> updates;
  // Every key, shuffled.
  std::vector<std::string> keys;
};

const Pool& GetPool() {
  static const Pool* const kPool = [] {
    auto* pool = new Pool;
    pool->pods = MakePods(0, kPods, 1, 1000000);
    pool->updates = MakePods(0, kPods / kUpdateStride, kUpdateStride, 2000000);
    for (const auto& pod : pool->pods) pool->keys.push_back(pod->Key());
    std::shuffle(pool->keys.begin(), pool->keys.end(), std::mt19937(1));
    return pool;
  }();
  return *kPool;
}

Indexers NamespaceIndexers() {
  Indexers indexers;
  indexers.emplace(std::string(kNamespaceIndex), MetaNamespaceIndexFunc());
  return indexers;
}

std::unique_ptr<ThreadSafeStore> FilledStore() {
  auto store = std::make_unique<ThreadSafeStore>(NamespaceIndexers());
  store->ReplaceAll(GetPool().pods);
  return store;
}

// The i-th update: alternates between the two versions of a pod, so every
// write changes the object under its key.
const api::ObjectPtr& UpdateAt(size_t i) {
  const Pool& pool = GetPool();
  const size_t j = i % pool.updates.size();
  if ((i / pool.updates.size()) % 2 == 0) return pool.updates[j];
  return pool.pods[j * kUpdateStride];
}

void BM_IndexerAdd(benchmark::State& state) {
  const Pool& pool = GetPool();
  ThreadSafeStore store(NamespaceIndexers());
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(store.Upsert(pool.pods[i++]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_IndexerAdd)->Iterations(kPods);

void BM_IndexerUpdate(benchmark::State& state) {
  auto store = FilledStore();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(store->Upsert(UpdateAt(i++)));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_IndexerUpdate);

void BM_IndexerGet(benchmark::State& state) {
  const Pool& pool = GetPool();
  auto store = FilledStore();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(store->GetByKey(pool.keys[i++ % kPods]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_IndexerGet);

void BM_IndexerByIndex(benchmark::State& state) {
  auto store = FilledStore();
  std::vector<std::string> namespaces;
  for (int i = 0; i < kNamespaces; ++i) namespaces.push_back(NamespaceOf(i));
  size_t i = 0;
  int64_t objects = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<api::ObjectPtr>> in_ns =
        store->ByIndex(kNamespaceIndex, namespaces[i++ % kNamespaces]);
    objects += static_cast<int64_t>(in_ns->size());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["objects_per_s"] = benchmark::Counter(
      static_cast<double>(objects), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_IndexerByIndex);

void BM_IndexerList(benchmark::State& state) {
  auto store = FilledStore();
  for (auto _ : state) {
    std::vector<api::ObjectPtr> all = store->List();
    benchmark::DoNotOptimize(all.data());
  }
  state.SetItemsProcessed(state.iterations() * kPods);
}
BENCHMARK(BM_IndexerList)->Unit(benchmark::kMillisecond);

void BM_ListerMatch(benchmark::State& state) {
  auto store = FilledStore();
  Lister lister(store.get(), {"", "pods"});
  const api::LabelSelector selector = *api::LabelSelector::Parse("shard=7");
  size_t matched = 0;
  for (auto _ : state) {
    matched = lister.List(selector).size();
  }
  if (matched != kPods / kShards) state.SkipWithError("wrong match count");
  state.SetItemsProcessed(state.iterations() * kPods);
}
BENCHMARK(BM_ListerMatch)->Unit(benchmark::kMillisecond);

// A writer thread that updates pods as fast as it can until stopped.
class Writer {
 public:
  explicit Writer(ThreadSafeStore* store)
      : thread_([this, store] {
          size_t i = 0;
          while (!stop_.load(std::memory_order_relaxed)) {
            store->Upsert(UpdateAt(i++));
          }
          writes_ = i;
        }) {}
  // Returns the number of writes.
  size_t Stop() {
    stop_.store(true);
    thread_.join();
    return writes_;
  }

 private:
  std::atomic<bool> stop_{false};
  size_t writes_ = 0;
  std::thread thread_;
};

// Readers on benchmark threads; one more thread writes throughout.
// Arg 0: GetByKey; arg 1: ByIndex(namespace) (1,000 pods each).
std::unique_ptr<ThreadSafeStore> shared_store;
std::unique_ptr<Writer> shared_writer;

void BM_ReadsBesideWriter(benchmark::State& state) {
  const Pool& pool = GetPool();
  if (state.thread_index() == 0) {
    shared_store = FilledStore();
    shared_writer = std::make_unique<Writer>(shared_store.get());
  }
  const bool by_index = state.range(0) == 1;
  const std::string ns = NamespaceOf(state.thread_index());
  size_t i = static_cast<size_t>(state.thread_index()) * 7919;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (by_index) {
      benchmark::DoNotOptimize(shared_store->ByIndex(kNamespaceIndex, ns));
    } else {
      benchmark::DoNotOptimize(shared_store->GetByKey(pool.keys[i++ % kPods]));
    }
  }
  state.counters["reads_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  if (state.thread_index() == 0) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    const size_t writes = shared_writer->Stop();
    // Computed here: the writer is not a benchmark thread.
    state.counters["writes_per_s"] = static_cast<double>(writes) / seconds;
    shared_writer.reset();
    shared_store.reset();
  }
}
BENCHMARK(BM_ReadsBesideWriter)
    ->ArgName("by_index")
    ->Arg(0)
    ->Arg(1)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

// The writer's latency per Upsert (p50, p99, max) while another thread
// reads all 100,000 pods in a loop. Arg 0: no reader. Arg 1: the reader
// calls List(), which holds the lock only to copy the chunk table. Arg 2:
// the reader calls ByIndex on an index with one value for every pod, which
// copies all 100,000 under the read lock, as a List that held the lock
// throughout (client-go's) would. Every mode has that index, so the
// writer does the same work in each. `stalls` counts writes that took
// 250 us or more, `stalled_ms` their total time.
void BM_WriteLatency(benchmark::State& state) {
  Indexers indexers = NamespaceIndexers();
  indexers.emplace("all", [](const api::Object&) {
    return std::vector<std::string>{"all"};
  });
  ThreadSafeStore store(std::move(indexers));
  store.ReplaceAll(GetPool().pods);
  const int64_t mode = state.range(0);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> reads{0};
  std::thread reader;
  if (mode != 0) {
    reader = std::thread([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        if (mode == 1) {
          benchmark::DoNotOptimize(store.List().size());
        } else {
          benchmark::DoNotOptimize(store.ByIndex("all", "all")->size());
        }
        reads.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::vector<double> micros;
  micros.reserve(1 << 20);
  size_t i = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(store.Upsert(UpdateAt(i++)));
    micros.push_back(std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now() - t0)
                         .count());
  }
  stop = true;
  if (reader.joinable()) reader.join();
  // A write that took this long waited for the lock (or lost its core:
  // arg 0 shows how often that alone happens on the machine).
  constexpr double kStallMicros = 250;
  double stalls = 0, stalled_micros = 0;
  for (double us : micros) {
    if (us >= kStallMicros) {
      ++stalls;
      stalled_micros += us;
    }
  }
  state.counters["stalls"] = stalls;
  state.counters["stalled_ms"] = stalled_micros / 1000;
  std::sort(micros.begin(), micros.end());
  state.counters["p50_us"] = micros[micros.size() / 2];
  state.counters["p99_us"] = micros[micros.size() * 99 / 100];
  state.counters["p999_us"] = micros[micros.size() * 999 / 1000];
  state.counters["max_us"] = micros.back();
  state.counters["full_reads"] = static_cast<double>(reads.load());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WriteLatency)
    ->ArgName("reader")
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime();

size_t HeapInUse() {
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

// One pass: decode 100,000 pods, then Upsert them one by one (the
// informer's path), measuring the heap after each step.
void BM_BytesPerCachedPod(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<api::ObjectPtr> pods;
    pods.reserve(kPods);
    const size_t before_pods = HeapInUse();
    {
      std::vector<api::ObjectPtr> made = MakePods(0, kPods, 1, 3000000);
      pods.insert(pods.end(), made.begin(), made.end());
    }
    malloc_trim(0);
    const size_t after_pods = HeapInUse();
    auto store = std::make_unique<ThreadSafeStore>(NamespaceIndexers());
    for (const auto& pod : pods) store->Upsert(pod);
    const size_t after_store = HeapInUse();
    size_t space_used = 0;
    for (const auto& pod : pods) space_used += pod->SpaceUsed();
    const double n = kPods;
    state.counters["object_heap_bytes"] = (after_pods - before_pods) / n;
    state.counters["object_space_used"] = space_used / n;
    state.counters["store_bytes"] = (after_store - after_pods) / n;
    state.counters["total_bytes"] = (after_store - before_pods) / n;
  }
}
BENCHMARK(BM_BytesPerCachedPod)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kcr::cache

BENCHMARK_MAIN();
