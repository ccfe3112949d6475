// Watch stream decoding speed: bytes of a recorded-style stream of Pod
// events per second through WatchDecoder, in 16 KiB chunks (about what a
// TLS record delivers) and in 64-byte chunks (the worst case for framing).
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/client/watch_decoder.h"

namespace {

std::string PodEvent(int i) {
  return R"({"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-)" +
         std::to_string(i) +
         R"(","namespace":"default","uid":"6a1f7a5e-1c1e-4f57-9a7c-2f0e3c1d0a11","resourceVersion":")" +
         std::to_string(1000 + i) +
         R"(","creationTimestamp":"2024-01-02T15:04:05Z","labels":{"app":"web","pod-template-hash":"5d8f7c9b6d"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d8f7c9b6d","uid":"0b7e0c1e-7c43-4b0c-9d4a-1f2e3d4c5b6a","controller":true,"blockOwnerDeletion":true}]},"spec":{"containers":[{"name":"nginx","image":"nginx:1.7.9","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","nodeName":"node-1","schedulerName":"default-scheduler"},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2024-01-02T15:04:10Z"}],"hostIP":"10.0.0.2","podIP":"10.244.1.7","startTime":"2024-01-02T15:04:05Z","containerStatuses":[{"name":"nginx","ready":true,"restartCount":0,"image":"nginx:1.7.9","imageID":"docker-pullable://nginx@sha256:e3456c851a152494c3e4ff5fcc26f240206abac0c9d794affb40e0714846c451","containerID":"containerd://4b1d","started":true,"state":{"running":{"startedAt":"2024-01-02T15:04:08Z"}}}]}}})"
         "\n";
}

void BM_WatchDecode(benchmark::State& state) {
  std::string stream;
  for (int i = 0; i < 1000; ++i) stream += PodEvent(i);
  const size_t chunk = static_cast<size_t>(state.range(0));
  std::vector<kcr::client::WatchEvent> events;
  events.reserve(1000);
  for (auto _ : state) {
    kcr::client::WatchDecoder decoder;
    events.clear();
    for (size_t i = 0; i < stream.size(); i += chunk) {
      benchmark::DoNotOptimize(
          decoder.Feed(std::string_view(stream).substr(i, chunk), &events));
    }
    benchmark::DoNotOptimize(decoder.Finish());
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * stream.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 1000));
}
BENCHMARK(BM_WatchDecode)->Arg(16 << 10)->Arg(64);

}  // namespace

BENCHMARK_MAIN();
