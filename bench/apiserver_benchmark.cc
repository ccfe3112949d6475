// Local API server throughput over loopback HTTP: a 50,000-pod list and a
// 100,000-event watch stream, each beside the cost of a client decoding the
// same bytes with RapidJSON (the server should outrun any decoder).
//
//   bazel run -c opt //bench:apiserver_benchmark
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "rapidjson/document.h"
#include "test/apiserver/api_server.h"
#include "test/apiserver/test_client.h"

namespace kcr {
namespace apiserver {
namespace {

constexpr int kPods = 50000;
constexpr int kEvents = 100000;

std::string PodJson(int i) {
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-)", i,
      R"(","labels":{"app":"web","tier":"frontend","shard":")", i % 16,
      R"("},"annotations":{"kcr.io/owner":"bench"}},"spec":{"nodeName":"node-)",
      i % 100,
      R"(","containers":[{"name":"app","image":"nginx:1.25.3","ports":[{"containerPort":80,"protocol":"TCP"}],"env":[{"name":"MODE","value":"production"},{"name":"REPLICA","value":")",
      i, R"("}],"resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}]}})");
}

struct Fixture {
  std::unique_ptr<ApiServer> server;
  std::string list_body;
  int64_t watch_from = 0;
  std::string watch_path;
};

Fixture& Get() {
  static Fixture* f = [] {
    auto* fx = new Fixture();
    ApiServerOptions options;
    options.history_size = kEvents + 1000;
    options.controllers.garbage_collector = false;
    options.controllers.namespace_controller = false;
    options.controllers.node_simulator = false;
    fx->server = std::move(*ApiServer::Start(options));
    Registry* reg = fx->server->registry();
    ResourceInfoPtr pods = fx->server->resources()->Lookup("", "v1", "pods");
    for (int i = 0; i < kPods; ++i) {
      auto b = api::ObjectBuilder::FromJson(PodJson(i));
      (void)reg->Create(*pods, "default", std::move(*b));
    }
    ResourceInfoPtr cms = fx->server->resources()->Lookup("", "v1", "configmaps");
    auto cm = api::ObjectBuilder::FromJson(
        R"({"metadata":{"name":"counter"},"data":{"n":"0"}})");
    auto created = reg->Create(*cms, "default", std::move(*cm));
    if (!created.ok()) {
      fprintf(stderr, "create failed: %s\n", created.status().ToString().c_str());
      abort();
    }
    fx->watch_from = fx->server->storage()->CurrentResourceVersion();
    for (int i = 0; i < kEvents; ++i) {
      auto patched = reg->Patch(*cms, "default", "counter", PatchType::kMerge,
                                absl::StrCat(R"({"data":{"n":")", i, R"("}})"));
      if (!patched.ok()) {
        fprintf(stderr, "patch failed: %s\n", patched.status().ToString().c_str());
        abort();
      }
    }
    fx->watch_path = absl::StrCat(
        "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=",
        fx->watch_from);
    return fx;
  }();
  return *f;
}

void BM_ListPods50k(benchmark::State& state) {
  Fixture& f = Get();
  TestClient client("127.0.0.1", f.server->port(), absl::Seconds(120));
  int64_t bytes = 0;
  for (auto _ : state) {
    TestResponse r = client.Get("/api/v1/pods");
    if (r.status != 200) state.SkipWithError("list failed");
    bytes += static_cast<int64_t>(r.body.size());
    f.list_body = std::move(r.body);
  }
  state.SetBytesProcessed(bytes);
  state.counters["items"] = kPods;
  state.counters["MB"] = static_cast<double>(f.list_body.size()) / 1e6;
}
BENCHMARK(BM_ListPods50k)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DecodeListPods50k(benchmark::State& state) {
  Fixture& f = Get();
  if (f.list_body.empty()) {
    TestClient client("127.0.0.1", f.server->port(), absl::Seconds(120));
    f.list_body = client.Get("/api/v1/pods").body;
  }
  for (auto _ : state) {
    rapidjson::Document d;
    d.Parse(f.list_body.data(), f.list_body.size());
    benchmark::DoNotOptimize(d["items"].Size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(f.list_body.size()));
}
BENCHMARK(BM_DecodeListPods50k)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Watch100kEvents(benchmark::State& state) {
  Fixture& f = Get();
  TestClient client("127.0.0.1", f.server->port(), absl::Seconds(120));
  int64_t events = 0;
  for (auto _ : state) {
    auto w = client.Watch(f.watch_path);
    int n = 0;
    while (n < kEvents) {
      auto line = w->Next();
      if (!line.has_value()) break;
      ++n;
    }
    if (n != kEvents) state.SkipWithError("watch ended early");
    events += n;
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Watch100kEvents)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DecodeWatch100kEvents(benchmark::State& state) {
  Fixture& f = Get();
  TestClient client("127.0.0.1", f.server->port(), absl::Seconds(120));
  std::vector<std::string> lines;
  auto w = client.Watch(f.watch_path);
  while (static_cast<int>(lines.size()) < kEvents) {
    auto line = w->Next();
    if (!line.has_value()) break;
    lines.push_back(std::move(*line));
  }
  int64_t events = 0;
  for (auto _ : state) {
    for (const std::string& l : lines) {
      rapidjson::Document d;
      d.Parse(l.data(), l.size());
      benchmark::DoNotOptimize(d.IsObject());
    }
    events += static_cast<int64_t>(lines.size());
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DecodeWatch100kEvents)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace apiserver
}  // namespace kcr

BENCHMARK_MAIN();
