// Local API server throughput over loopback HTTP: a 50,000-pod list and a
// 100,000-event watch stream, each beside the cost of a client decoding the
// same bytes with RapidJSON (the server should outrun any decoder), one
// collection's writes fanned out to hundreds of concurrent watchers, and
// writes to one collection beside a thousand idle watchers of others, and
// the HTTP path's own cost: a small GET and a small POST on one keep-alive
// connection, as the process's CPU time per request (server and the lean
// client together; the client is a few syscalls).
//
//   bazel run -c opt //bench:apiserver_benchmark -- --benchmark_filter=Http
//
//   bazel run -c opt //bench:apiserver_benchmark
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/object_builder.h"
#include "apiserver/api_server.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "benchmark/benchmark.h"
#include "rapidjson/document.h"
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

// A lean HTTP reader (plain sockets, no HTTP library) so that the figures
// measure the server, not a client's parser: sends one GET and counts the
// body bytes (Content-Length) or the newline-terminated watch events.
int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void SendGet(int fd, const std::string& path) {
  std::string req = absl::StrCat(
      "GET ", path, " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  (void)!write(fd, req.data(), req.size());
}

// Bytes of a response (headers included), read until the server closes the
// connection (the request says Connection: close).
int64_t RawListBytes(int port, const std::string& path) {
  int fd = Connect(port);
  if (fd < 0) return -1;
  SendGet(fd, path);
  static thread_local std::vector<char> buf(1 << 20);
  int64_t bytes = 0;
  while (true) {
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n <= 0) break;
    bytes += n;
  }
  close(fd);
  return bytes;
}

// Reads a watch until `events` newline-terminated events arrived; returns
// the bytes read.
int64_t RawWatch(int port, const std::string& path, int events) {
  int fd = Connect(port);
  if (fd < 0) return -1;
  SendGet(fd, path);
  static thread_local std::vector<char> buf(1 << 20);
  int64_t bytes = 0;
  int seen = 0;
  while (seen < events) {
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n <= 0) break;
    bytes += n;
    for (ssize_t i = 0; i < n; ++i) seen += buf[static_cast<size_t>(i)] == '\n';
  }
  close(fd);
  // Each event line ends in "\n"; chunk framing adds "\r\n" lines too.
  return seen >= events ? bytes : -1;
}

// A server with the built-in controllers off, so that the figures are the
// server's alone.
ApiServerOptions ServerOptions(int history_size) {
  ApiServerOptions options;
  options.history_size = history_size;
  options.controllers.garbage_collector = false;
  options.controllers.namespace_controller = false;
  options.controllers.node_simulator = false;
  return options;
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
    fx->server = std::move(*ApiServer::Start(ServerOptions(kEvents + 1000)));
    Registry* reg = fx->server->registry();
    ResourceInfoPtr pods = fx->server->resources()->Lookup("", "v1", "pods");
    for (int i = 0; i < kPods; ++i) {
      auto b = api::ObjectBuilder::FromJson(PodJson(i));
      (void)reg->Create(*pods, "default", std::move(*b));
    }
    ResourceInfoPtr cms =
        fx->server->resources()->Lookup("", "v1", "configmaps");
    auto cm = api::ObjectBuilder::FromJson(
        R"({"metadata":{"name":"counter"},"data":{"n":"0"}})");
    auto created = reg->Create(*cms, "default", std::move(*cm));
    if (!created.ok()) {
      fprintf(stderr, "create failed: %s\n",
              created.status().ToString().c_str());
      abort();
    }
    fx->watch_from = fx->server->storage()->CurrentResourceVersion();
    for (int i = 0; i < kEvents; ++i) {
      auto patched =
          reg->Patch(*cms, "default", "counter", PatchType::kMerge,
                     absl::StrCat(R"({"data":{"n":")", i + 1, R"("}})"));
      if (!patched.ok()) {
        fprintf(stderr, "patch failed: %s\n",
                patched.status().ToString().c_str());
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

// The server alone: the same list read by a reader that only counts bytes.
void BM_ListPods50kRawReader(benchmark::State& state) {
  Fixture& f = Get();
  int64_t bytes = 0;
  for (auto _ : state) {
    int64_t n = RawListBytes(f.server->port(), "/api/v1/pods");
    if (n <= 0) state.SkipWithError("list failed");
    bytes += n;
  }
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_ListPods50kRawReader)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

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
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events),
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Watch100kEvents)->Unit(benchmark::kMillisecond)->UseRealTime();

// The server alone: the watch read by a reader that only counts newlines.
// Chunk framing adds a "<size>\r\n" line per chunk, so it stops a little
// early; the figure is a lower bound for the server.
void BM_Watch100kEventsRawReader(benchmark::State& state) {
  Fixture& f = Get();
  int64_t events = 0, bytes = 0;
  for (auto _ : state) {
    int64_t n = RawWatch(f.server->port(), f.watch_path, kEvents);
    if (n <= 0) state.SkipWithError("watch ended early");
    bytes += n;
    events += kEvents;
  }
  state.SetBytesProcessed(bytes);
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events),
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Watch100kEventsRawReader)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

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
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events),
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DecodeWatch100kEvents)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Many concurrent watchers: state.range(0) raw watch connections on one
// collection, then 1,000 writes per iteration, timed until every watcher
// has read every event. Reports the writes per second the server fans out
// and the events per second it delivers in total.
constexpr int kFanOutWrites = 1000;

// Counts event lines: a '\n' not preceded by '\r' (chunk sizes and HTTP
// headers end in "\r\n", watch events in "}\n"). Carries the last byte
// across reads.
struct EventCounter {
  int fd = -1;
  char last = 0;
  int64_t events = 0;
  bool ReadUntil(int64_t target, std::vector<char>& buf) {
    while (events < target) {
      ssize_t n = read(fd, buf.data(), buf.size());
      if (n <= 0) return false;
      for (ssize_t i = 0; i < n; ++i) {
        const char c = buf[static_cast<size_t>(i)];
        if (c == '\n' && last != '\r') ++events;
        last = c;
      }
    }
    return true;
  }
};

void BM_ConcurrentWatchers(benchmark::State& state) {
  const int watchers = static_cast<int>(state.range(0));
  auto started = ApiServer::Start(ServerOptions(100000));
  if (!started.ok()) {
    state.SkipWithError("server did not start");
    return;
  }
  std::unique_ptr<ApiServer> server = std::move(*started);
  Registry* reg = server->registry();
  ResourceInfoPtr cms = server->resources()->Lookup("", "v1", "configmaps");
  auto cm = api::ObjectBuilder::FromJson(
      R"({"metadata":{"name":"counter","labels":{"app":"bench"}},"data":{"n":"0"}})");
  if (!reg->Create(*cms, "default", std::move(*cm)).ok()) {
    state.SkipWithError("create failed");
    return;
  }
  const std::string path = absl::StrCat(
      "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=",
      server->storage()->CurrentResourceVersion());
  std::vector<EventCounter> conns(static_cast<size_t>(watchers));
  for (EventCounter& c : conns) {
    c.fd = Connect(server->port());
    if (c.fd < 0) {
      state.SkipWithError("connect failed");
      return;
    }
    SendGet(c.fd, path);
  }
  std::vector<char> buf(1 << 16);
  int64_t writes = 0;
  for (auto _ : state) {
    for (int i = 0; i < kFanOutWrites; ++i) {
      auto patched =
          reg->Patch(*cms, "default", "counter", PatchType::kMerge,
                     absl::StrCat(R"({"data":{"n":")", ++writes, R"("}})"));
      if (!patched.ok()) state.SkipWithError("patch failed");
    }
    for (EventCounter& c : conns) {
      if (!c.ReadUntil(writes, buf)) {
        state.SkipWithError("watch ended early");
        break;
      }
    }
  }
  for (EventCounter& c : conns) close(c.fd);
  server->Stop();
  state.counters["watchers"] = watchers;
  state.counters["writes/s"] = benchmark::Counter(static_cast<double>(writes),
                                                  benchmark::Counter::kIsRate);
  state.counters["events/s"] = benchmark::Counter(
      static_cast<double>(writes) * watchers, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ConcurrentWatchers)
    ->Arg(200)
    ->Arg(500)
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Writes to one collection beside watchers of other collections:
// kActiveWatchers raw watchers on the default namespace's ConfigMaps and
// state.range(0) idle raw watchers spread over five other resources (pods,
// secrets, services, serviceaccounts, leases), which no write touches. Each
// iteration makes 1,000 merge patches of one ConfigMap in process, then
// waits until every ConfigMap watcher has read all of them. "writes/s"
// times the writes alone; "events/s" is the events delivered to the
// ConfigMap watchers over the whole iteration. Idle watchers should cost
// nothing: the two figures should not move between /0 and /1000.
//
// BM_WritesBesideIdleConnections is the same with idle keep-alive
// connections that watch nothing (one health check each), to tell the cost
// of a watcher from the cost of a connection's thread.
constexpr int kActiveWatchers = 10;

void WritesBeside(benchmark::State& state, bool idle_watch) {
  const int idle = static_cast<int>(state.range(0));
  auto started = ApiServer::Start(ServerOptions(100000));
  if (!started.ok()) {
    state.SkipWithError("server did not start");
    return;
  }
  std::unique_ptr<ApiServer> server = std::move(*started);
  Registry* reg = server->registry();
  ResourceInfoPtr cms = server->resources()->Lookup("", "v1", "configmaps");
  auto cm = api::ObjectBuilder::FromJson(
      R"({"metadata":{"name":"counter"},"data":{"n":"0"}})");
  if (!reg->Create(*cms, "default", std::move(*cm)).ok()) {
    state.SkipWithError("create failed");
    return;
  }
  static const char* const kOtherResources[] = {
      "/api/v1/pods", "/api/v1/secrets", "/api/v1/services",
      "/api/v1/serviceaccounts", "/apis/coordination.k8s.io/v1/leases"};
  std::vector<char> buf(1 << 16);
  std::vector<int> idle_fds;
  for (int i = 0; i < idle; ++i) {
    int fd = Connect(server->port());
    if (fd < 0) {
      state.SkipWithError("connect failed");
      break;
    }
    if (idle_watch) {
      SendGet(fd, absl::StrCat(kOtherResources[i % 5], "?watch=1"));
    } else {
      // Kept alive: its thread then waits for a next request.
      const std::string req = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
      (void)!write(fd, req.data(), req.size());
      (void)!read(fd, buf.data(), buf.size());
    }
    idle_fds.push_back(fd);
  }
  const std::string path = absl::StrCat(
      "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=",
      server->storage()->CurrentResourceVersion());
  std::vector<EventCounter> conns(kActiveWatchers);
  for (EventCounter& c : conns) {
    c.fd = Connect(server->port());
    if (c.fd >= 0) SendGet(c.fd, path);
  }
  // Every watch streaming before the clock starts.
  const int watches = (idle_watch ? idle : 0) + kActiveWatchers;
  const absl::Time give_up = absl::Now() + absl::Seconds(120);
  while (server->handler()->active_watches() < watches &&
         absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  if (server->handler()->active_watches() < watches) {
    state.SkipWithError("watches did not start");
  }
  int64_t writes = 0;
  absl::Duration writing;
  for (auto _ : state) {
    const absl::Time t0 = absl::Now();
    for (int i = 0; i < kFanOutWrites; ++i) {
      auto patched =
          reg->Patch(*cms, "default", "counter", PatchType::kMerge,
                     absl::StrCat(R"({"data":{"n":")", ++writes, R"("}})"));
      if (!patched.ok()) state.SkipWithError("patch failed");
    }
    writing += absl::Now() - t0;
    for (EventCounter& c : conns) {
      if (!c.ReadUntil(writes, buf)) {
        state.SkipWithError("watch ended early");
        break;
      }
    }
  }
  for (EventCounter& c : conns) close(c.fd);
  for (int fd : idle_fds) close(fd);
  server->Stop();
  state.counters["idle"] = idle;
  state.counters["writes/s"] =
      static_cast<double>(writes) / absl::ToDoubleSeconds(writing);
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(writes) * kActiveWatchers,
                         benchmark::Counter::kIsRate);
}

void BM_WritesBesideIdleWatchers(benchmark::State& state) {
  WritesBeside(state, /*idle_watch=*/true);
}
BENCHMARK(BM_WritesBesideIdleWatchers)
    ->Arg(0)
    ->Arg(1000)
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_WritesBesideIdleConnections(benchmark::State& state) {
  WritesBeside(state, /*idle_watch=*/false);
}
BENCHMARK(BM_WritesBesideIdleConnections)
    ->Arg(1000)
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The writes the server makes for each pod of a rollout, in process
// (Registry over Storage: no HTTP, no built-in controllers): the
// ReplicaSet's pod create, the binding (spec.nodeName), the simulated
// node's two status writes (Pending, then Running), and five Events (the
// scheduler's and the kubelet's). Each request body is built from the
// stored object, as the built-in controllers do. CPU time per pod
// ("writes/s" = 9 writes per pod); the per-write figures below split it.
// A/B with `bazel run -c opt //bench:apiserver_benchmark --
// --benchmark_filter='Pod|Event'`.
std::string RolloutPodJson(int i) {
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"web-7d4b9c-",)"
      R"("labels":{"app":"web-)",
      i,
      R"(","pod-template-hash":"7d4b9c"},"ownerReferences":[{"apiVersion":"apps/v1",)"
      R"("kind":"ReplicaSet","name":"web-7d4b9c","uid":"4f7c8d2e-0b1a-4c3d-9e8f-)",
      "0123456789ab",
      R"(","controller":true,"blockOwnerDeletion":true}]},"spec":{"containers":[{)"
      R"("name":"nginx","image":"nginx:1.7.9","ports":[{"containerPort":80,)"
      R"("protocol":"TCP"}],"resources":{},"terminationMessagePath":)"
      R"("/dev/termination-log","terminationMessagePolicy":"File",)"
      R"("imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always",)"
      R"("terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",)"
      R"("securityContext":{},"schedulerName":"default-scheduler"}})");
}

const char kPendingStatus[] =
    R"({"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True",)"
    R"("lastProbeTime":null,"lastTransitionTime":"2026-11-28T20:00:00Z"}],)"
    R"("hostIP":"10.0.0.1","hostIPs":[{"ip":"10.0.0.1"}],)"
    R"("startTime":"2026-11-28T20:00:00Z","containerStatuses":[{"name":"nginx",)"
    R"("state":{"waiting":{"reason":"ContainerCreating"}},"lastState":{},)"
    R"("ready":false,"restartCount":0,"image":"nginx:1.7.9","imageID":"",)"
    R"("started":false}],"qosClass":"BestEffort"})";

std::string RunningStatus(int i) {
  return absl::StrCat(
      R"({"phase":"Running","conditions":[)"
      R"({"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-28T20:00:01Z"},)"
      R"({"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-28T20:00:01Z"},)"
      R"({"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-28T20:00:01Z"},)"
      R"({"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-28T20:00:00Z"}],)"
      R"("hostIP":"10.0.0.1","hostIPs":[{"ip":"10.0.0.1"}],"podIP":"10.244.)",
      i / 250 % 250, ".", i % 250, R"(","podIPs":[{"ip":"10.244.)",
      i / 250 % 250, ".", i % 250,
      R"("}],"startTime":"2026-11-28T20:00:00Z","containerStatuses":[{"name":"nginx",)"
      R"("state":{"running":{"startedAt":"2026-11-28T20:00:01Z"}},"lastState":{},)"
      R"("ready":true,"restartCount":0,"image":"nginx:1.7.9","imageID":)"
      R"("docker-pullable://nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31",)"
      R"("containerID":"containerd://)",
      i, R"(","started":true}],"qosClass":"BestEffort"})");
}

std::string EventJson(const api::Object& pod, int n, const char* reason) {
  const std::string name(pod.name());
  const std::string uid(pod.uid());
  const std::string rv(pod.resource_version());
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Event","metadata":{"name":")", name, ".",
      absl::Hex(0x187c0000000000 + n),
      R"(","namespace":"default"},)"
      R"("involvedObject":{"kind":"Pod","namespace":"default","name":")",
      name, R"(","uid":")", uid, R"(","apiVersion":"v1","resourceVersion":")",
      rv, R"(","fieldPath":"spec.containers{nginx}"},"reason":")", reason,
      R"(","message":"Started container nginx","source":{"component":"kubelet",)"
      R"("host":"kcr-node"},"firstTimestamp":"2026-11-28T20:00:01Z",)"
      R"("lastTimestamp":"2026-11-28T20:00:01Z","count":1,"type":"Normal",)"
      R"("eventTime":null,"reportingComponent":"kubelet","reportingInstance":"kcr-node"})");
}

struct WriteFixture {
  Storage storage;
  ResourceRegistry resources;
  Registry registry{&storage, &resources};
  ResourceInfoPtr pods = resources.Lookup("", "v1", "pods");
  ResourceInfoPtr events = resources.Lookup("", "v1", "events");
  int next = 0;

  WriteFixture() {
    if (!registry.Bootstrap().ok()) abort();
  }
  api::ObjectPtr CreatePod() {
    auto b = api::ObjectBuilder::FromJson(RolloutPodJson(next++));
    auto w = registry.Create(*pods, "default", std::move(*b));
    if (!w.ok()) abort();
    return w->object;
  }
  api::ObjectPtr Bind(const api::ObjectPtr& pod) {
    api::ObjectBuilder b = pod->ToBuilder();
    (void)b.SetString("/spec/nodeName", "kcr-node");
    auto w = registry.Update(*pods, "default", std::string(pod->name()),
                             std::move(b));
    if (!w.ok()) abort();
    return w->object;
  }
  api::ObjectPtr WriteStatus(const api::ObjectPtr& pod, std::string_view st) {
    api::ObjectBuilder b = pod->ToBuilder();
    (void)b.SetJson("/status", st);
    WriteOptions w;
    w.subresource = "status";
    auto r = registry.Update(*pods, "default", pod->name(), std::move(b), w);
    if (!r.ok()) abort();
    return r->object;
  }
  void CreateEvent(const api::Object& pod, const char* reason) {
    auto b = api::ObjectBuilder::FromJson(EventJson(pod, next++, reason));
    if (!registry.Create(*events, "default", std::move(*b)).ok()) abort();
  }
};

void BM_PodRolloutWrites(benchmark::State& state) {
  WriteFixture f;
  int64_t writes = 0;
  for (auto _ : state) {
    api::ObjectPtr pod = f.CreatePod();
    pod = f.Bind(pod);
    f.CreateEvent(*pod, "Scheduled");
    pod = f.WriteStatus(pod, kPendingStatus);
    pod = f.WriteStatus(pod, RunningStatus(f.next));
    for (const char* reason : {"Pulling", "Pulled", "Created", "Started"}) {
      f.CreateEvent(*pod, reason);
    }
    writes += 9;
  }
  state.SetItemsProcessed(writes);
  state.counters["us/write"] = benchmark::Counter(
      static_cast<double>(writes),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert,
      benchmark::Counter::OneK::kIs1000);
}
BENCHMARK(BM_PodRolloutWrites)->Unit(benchmark::kMicrosecond);

void BM_CreatePod(benchmark::State& state) {
  WriteFixture f;
  for (auto _ : state) benchmark::DoNotOptimize(f.CreatePod());
}
BENCHMARK(BM_CreatePod)->Unit(benchmark::kMicrosecond);

// Two status writes per iteration (Pending, Running) on a bound pod.
void BM_PodStatusUpdate(benchmark::State& state) {
  WriteFixture f;
  api::ObjectPtr pod = f.Bind(f.CreatePod());
  const std::string running = RunningStatus(1);
  for (auto _ : state) {
    pod = f.WriteStatus(pod, kPendingStatus);
    pod = f.WriteStatus(pod, running);
  }
  state.SetItemsProcessed(2 * state.iterations());
}
BENCHMARK(BM_PodStatusUpdate)->Unit(benchmark::kMicrosecond);

void BM_CreateEvent(benchmark::State& state) {
  WriteFixture f;
  api::ObjectPtr pod = f.Bind(f.CreatePod());
  for (auto _ : state) f.CreateEvent(*pod, "Started");
}
BENCHMARK(BM_CreateEvent)->Unit(benchmark::kMicrosecond);

// One keep-alive connection sending requests one at a time and reading
// each response whole (Content-Length), with no HTTP library.
class KeepAliveClient {
 public:
  explicit KeepAliveClient(int port) : fd_(Connect(port)) {
    if (fd_ < 0) abort();
  }
  ~KeepAliveClient() { close(fd_); }

  // Sends `request` and returns the response's status code.
  int RoundTrip(const std::string& request) {
    if (write(fd_, request.data(), request.size()) !=
        static_cast<ssize_t>(request.size())) {
      abort();
    }
    in_.clear();
    size_t head_end = std::string::npos;
    while ((head_end = in_.find("\r\n\r\n")) == std::string::npos) Fill();
    size_t cl = in_.find("Content-Length: ");
    if (cl == std::string::npos || cl > head_end) abort();
    const size_t length = strtoul(in_.c_str() + cl + 16, nullptr, 10);
    while (in_.size() < head_end + 4 + length) Fill();
    return atoi(in_.c_str() + 9);
  }

 private:
  void Fill() {
    char buf[64 << 10];
    ssize_t n = read(fd_, buf, sizeof(buf));
    if (n <= 0) abort();
    in_.append(buf, static_cast<size_t>(n));
  }

  const int fd_;
  std::string in_;
};

// The process's CPU seconds: user time alone, and user plus system.
struct CpuSeconds {
  double user = 0;
  double total = 0;
};

CpuSeconds ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return {seconds(u.ru_utime), seconds(u.ru_utime) + seconds(u.ru_stime)};
}

// A server with one small ConfigMap, shared by the HTTP benchmarks.
ApiServer& SmallServer() {
  static ApiServer* server = [] {
    ApiServer* s = ApiServer::Start(ServerOptions(1000))->release();
    ResourceInfoPtr cms = s->resources()->Lookup("", "v1", "configmaps");
    auto cm = api::ObjectBuilder::FromJson(
        R"({"metadata":{"name":"small","labels":{"app":"web"}},)"
        R"("data":{"mode":"production","replicas":"3"}})");
    if (!s->registry()->Create(*cms, "default", std::move(*cm)).ok()) abort();
    return s;
  }();
  return *server;
}

// Runs `request` over one keep-alive connection each iteration and reports
// the process's CPU microseconds per request (all, and user time alone).
void RunHttp(benchmark::State& state, const std::string& request,
             int want_status) {
  KeepAliveClient client(SmallServer().port());
  const CpuSeconds cpu0 = ProcessCpuSeconds();
  for (auto _ : state) {
    if (client.RoundTrip(request) != want_status) abort();
  }
  const CpuSeconds cpu1 = ProcessCpuSeconds();
  const double n = static_cast<double>(state.iterations());
  state.counters["cpu_us/req"] = (cpu1.total - cpu0.total) * 1e6 / n;
  // The kernel's loopback work is most of the total and no server change
  // touches it; user time shows the server's own code more clearly.
  state.counters["user_us/req"] = (cpu1.user - cpu0.user) * 1e6 / n;
  state.SetItemsProcessed(state.iterations());
}

// What a client-go GET sends (the headers kubectl and client-go add).
void BM_HttpGetConfigMap(benchmark::State& state) {
  RunHttp(state,
          "GET /api/v1/namespaces/default/configmaps/small HTTP/1.1\r\n"
          "Host: 127.0.0.1\r\nUser-Agent: kcr-bench/v0.0.0\r\n"
          "Accept: application/json, */*\r\n"
          "Accept-Encoding: identity\r\n\r\n",
          200);
}
BENCHMARK(BM_HttpGetConfigMap)->Unit(benchmark::kMicrosecond)->UseRealTime();

// A small create (generateName, so each is new).
void BM_HttpPostConfigMap(benchmark::State& state) {
  const std::string body =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"cm-",)"
      R"("labels":{"app":"web"}},"data":{"mode":"production"}})";
  RunHttp(state,
          absl::StrCat("POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
                       "Host: 127.0.0.1\r\nUser-Agent: kcr-bench/v0.0.0\r\n"
                       "Accept: application/json, */*\r\n"
                       "Content-Type: application/json\r\n"
                       "Content-Length: ",
                       body.size(), "\r\n\r\n", body),
          201);
}
BENCHMARK(BM_HttpPostConfigMap)->Unit(benchmark::kMicrosecond)->UseRealTime();

// What the built-in controllers cost per Deployment of one replica, the
// server's share of one Nginx in `make bench-e2e` without HTTP: N
// Deployments (the manager's, with its field manager) created in process
// on a server with every built-in controller, timed until each reports
// availableReplicas 1: the deployment controller's ReplicaSet and status
// writes, the replicaset controller's pod and status writes, the simulated
// node's binding, two pod status writes and five Events. `cpu_ms/deploy`
// is the process's CPU (utime + stime) per Deployment. A/B with
// `bazel run -c opt //bench:apiserver_benchmark --
// --benchmark_filter=DeploymentRollout`.
std::string DeploymentJson(int i) {
  return absl::StrCat(
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web-)",
      i,
      R"(-deploy","labels":{"app":"underneathall","underneathall-app":"nginx-web-)",
      i,
      R"("}},"spec":{"replicas":1,"selector":{"matchLabels":{"underneathall-app":"nginx-web-)",
      i,
      R"("}},"template":{"metadata":{"labels":{"app":"underneathall","underneathall-app":"nginx-web-)",
      i,
      R"("}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.7.9",)"
      R"("ports":[{"containerPort":80}]}]}}}})");
}

void BM_DeploymentRollout(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  for (auto _ : state) {
    ApiServerOptions options;
    options.event_ttl = absl::ZeroDuration();
    auto server = ApiServer::Start(options);
    if (!server.ok()) abort();
    Registry* registry = (*server)->registry();
    ResourceInfoPtr deployments =
        (*server)->resources()->Lookup("apps", "v1", "deployments");
    const int64_t rv0 = (*server)->storage()->CurrentResourceVersion();
    const CpuSeconds cpu0 = ProcessCpuSeconds();
    const absl::Time start = absl::Now();
    WriteOptions w;
    w.field_manager = "controller-manager";
    for (int i = 0; i < n; ++i) {
      auto b = api::ObjectBuilder::FromJson(DeploymentJson(i));
      if (!registry->Create(*deployments, "default", std::move(*b), w).ok()) {
        abort();
      }
    }
    int ready = 0;
    while (ready < n && absl::Now() - start < absl::Minutes(5)) {
      absl::SleepFor(absl::Milliseconds(100));
      ready = 0;
      for (const api::ObjectPtr& d :
           (*server)->storage()->Snapshot(deployments->StorageKey())) {
        const rapidjson::Value* a = d->Find("/status/availableReplicas");
        if (a != nullptr && a->IsInt64() && a->GetInt64() == 1) ++ready;
      }
    }
    const CpuSeconds cpu1 = ProcessCpuSeconds();
    if (ready < n) state.SkipWithError("not every Deployment became ready");
    state.SetIterationTime(absl::ToDoubleSeconds(absl::Now() - start));
    state.counters["cpu_ms/deploy"] = 1e3 * (cpu1.total - cpu0.total) / n;
    state.counters["user_ms/deploy"] = 1e3 * (cpu1.user - cpu0.user) / n;
    // Every write takes one resourceVersion.
    state.counters["writes/deploy"] =
        static_cast<double>((*server)->storage()->CurrentResourceVersion() -
                            rv0) /
        n;
    (*server)->Stop();
  }
}
BENCHMARK(BM_DeploymentRollout)
    ->Arg(2000)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace apiserver
}  // namespace kcr

BENCHMARK_MAIN();
