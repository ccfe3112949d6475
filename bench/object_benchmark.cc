// Object parsing and memory: what a cache pays per Pod.
//
//   bazel run -c opt //bench:object_benchmark
//
// BM_ObjectDecode parses a ~4.7 KB Pod (with managedFields, minified) the
// way the cache does: Object::Parse with managedFields stripped at parse,
// metadata indexed, then reads the hot metadata. BM_RapidJsonInsitu is the
// speed limit: RapidJSON's own in-situ parse of the same bytes into a
// document whose buffers are reused, with nothing validated or kept.
// Counters:
//   bytes_per_object       SpaceUsed() of the object the cache keeps
//   json_bytes_per_object  its minified JSON size (after the transform)
//   node_bytes_per_object  RapidJSON's 16 bytes per value and per key for
//                          the same JSON: what any RapidJSON tree of it
//                          holds before a single string byte
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "api/object.h"
#include "api/transform.h"
#include "benchmark/benchmark.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace api {
namespace {

// The fixture shared with the tests, minified as the API server sends it.
const std::string& PodJson() {
  static const std::string* const kJson = [] {
    std::ifstream in("test/api/testdata/pod.json", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    rapidjson::Document doc;
    doc.Parse(text.c_str(), text.size());
    if (doc.HasParseError() || text.empty()) {
      std::fprintf(stderr, "cannot read test/api/testdata/pod.json\n");
      std::abort();
    }
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    doc.Accept(writer);
    return new std::string(buffer.GetString(), buffer.GetSize());
  }();
  return *kJson;
}

// 16 bytes for every value and every object key under `v`.
size_t NodeBytes(const rapidjson::Value& v) {
  size_t bytes = sizeof(rapidjson::Value);
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      bytes += sizeof(rapidjson::Value) + NodeBytes(m.value);
    }
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray()) bytes += NodeBytes(e);
  }
  return bytes;
}

void SetCounters(benchmark::State& state, const Object& object) {
  state.counters["node_bytes_per_object"] =
      static_cast<double>(NodeBytes(object.json()));
  state.counters["bytes_per_object"] = static_cast<double>(object.SpaceUsed());
  state.counters["json_bytes_per_object"] =
      static_cast<double>(object.ToJson().size());
  state.counters["wire_bytes_per_object"] =
      static_cast<double>(PodJson().size());
}

void Finish(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(PodJson().size()));
}

// Parse + default transform (strip at parse) + metadata reads.
void BM_ObjectDecode(benchmark::State& state) {
  const std::string& json = PodJson();
  ObjectDecoder decoder;
  ObjectPtr last;
  for (auto _ : state) {
    absl::StatusOr<ObjectPtr> obj = decoder.Decode(json);
    if (!obj.ok()) {
      state.SkipWithError("decode failed");
      return;
    }
    benchmark::DoNotOptimize((*obj)->name().size());
    benchmark::DoNotOptimize((*obj)->namespace_().size());
    benchmark::DoNotOptimize((*obj)->resource_version().size());
    benchmark::DoNotOptimize((*obj)->Label("app"));
    last = *std::move(obj);
  }
  Finish(state);
  SetCounters(state, *last);
}
BENCHMARK(BM_ObjectDecode);

// The same without the default transform: managedFields kept.
void BM_ObjectParseKeepManagedFields(benchmark::State& state) {
  const std::string& json = PodJson();
  ObjectPtr last;
  for (auto _ : state) {
    absl::StatusOr<ObjectPtr> obj = Object::Parse(json);
    if (!obj.ok()) {
      state.SkipWithError("parse failed");
      return;
    }
    benchmark::DoNotOptimize((*obj)->name().size());
    last = *std::move(obj);
  }
  Finish(state);
  SetCounters(state, *last);
}
BENCHMARK(BM_ObjectParseKeepManagedFields);

// The limit: RapidJSON's in-situ parse (default flags) of the same bytes,
// copied into a reused buffer, into a document on a reused pool.
void BM_RapidJsonInsitu(benchmark::State& state) {
  const std::string& json = PodJson();
  std::string buffer;
  constexpr size_t kPool = 64 * 1024;
  std::unique_ptr<char[]> pool_buffer(new char[kPool]);
  rapidjson::MemoryPoolAllocator<> pool(pool_buffer.get(), kPool);
  size_t pool_used = 0;
  for (auto _ : state) {
    buffer.assign(json);
    pool.Clear();
    rapidjson::Document doc(&pool);
    doc.ParseInsitu(buffer.data());
    if (doc.HasParseError()) {
      state.SkipWithError("parse failed");
      return;
    }
    benchmark::DoNotOptimize(doc["metadata"]["name"].GetString());
    pool_used = pool.Size();
  }
  Finish(state);
  // An in-situ document keeps the text buffer as well as its nodes.
  state.counters["bytes_per_object"] =
      static_cast<double>(pool_used + json.size() + 1);
  state.counters["json_bytes_per_object"] = static_cast<double>(json.size());
}
BENCHMARK(BM_RapidJsonInsitu);

}  // namespace
}  // namespace api
}  // namespace kcr

BENCHMARK_MAIN();
