// kcr_informer_bench: kcr's shared informer on pods against the replay
// server, timed as bench/peers/client-node/informer.mjs times
// client-node's:
//   sync_ms      factory.Start -> WaitForCacheSync (HasSynced)
//   handler_ms   factory.Start -> the handler has seen every initial add
//   updates_ms   POST /start-updates -> the last update reaches the handler
//                (after the cache: an informer updates its indexer first)
//   peak_rss_mib VmHWM of this process once all of that is done
//   cpu_s        CPU time (user + system) of this process by then
//
//   kcr_informer_bench --port=P --pods=N --updates=U
//
// Prints one JSON line. The client is configured as a controller's would
// be: client-go's default QPS and burst, managedFields stripped at parse.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/context.h"
#include "base/mutex.h"
#include "bench/informer/harness_util.h"
#include "bench/informer/replay_client.h"
#include "runtime/cache/shared_informer.h"
#include "runtime/cache/shared_informer_factory.h"
#include "runtime/client/rest_client.h"

namespace kcr::bench {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "kcr_informer_bench: %s\n", status.ToString().c_str());
  return 1;
}

int Main(int argc, char** argv) {
  absl::StatusOr<ClientFlags> flags = ClientFlags::Parse(argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "kcr_informer_bench: %s\n",
                 std::string(flags.status().message()).c_str());
    return 2;
  }
  const int64_t port = flags->port;
  const int64_t pods = flags->pods;
  const int64_t updates = flags->updates;

  absl::StatusOr<std::unique_ptr<client::RestClient>> client =
      NewReplayClient(port);
  if (!client.ok()) return Fail(client.status());

  const int64_t want_adds = pods;
  const int64_t want_updates = updates;
  std::atomic<int64_t> adds{0};
  std::atomic<int64_t> updated{0};
  Notification all_added;
  Notification all_updated;
  auto handler = std::make_shared<cache::ResourceEventHandlerFuncs>();
  handler->add_func = [&](const api::ObjectPtr&, bool) {
    if (adds.fetch_add(1, std::memory_order_relaxed) + 1 == want_adds) {
      all_added.Notify();
    }
  };
  handler->update_func = [&](const api::ObjectPtr&, const api::ObjectPtr&) {
    if (updated.fetch_add(1, std::memory_order_relaxed) + 1 == want_updates) {
      all_updated.Notify();
    }
  };

  cache::SharedInformerFactory factory(client->get());
  cache::SharedIndexInformer* informer =
      factory.InformerFor(client::Resource::Namespaced({"", "v1", "pods"}));
  if (auto registration = informer->AddEventHandler(handler);
      !registration.ok()) {
    return Fail(registration.status());
  }

  auto [ctx, cancel] = WithCancel(Context::Background());
  const auto start = SteadyClock::now();
  factory.Start(ctx);
  absl::Status synced = factory.WaitForCacheSync(ctx);
  const double sync_ms = MillisSince(start);
  if (!synced.ok() || !informer->HasSynced()) {
    cancel();
    factory.Shutdown();
    return Fail(synced.ok() ? absl::UnavailableError("not synced") : synced);
  }
  if (!all_added.WaitForNotificationWithTimeout(absl::Seconds(300))) {
    cancel();
    factory.Shutdown();
    return Fail(absl::DeadlineExceededError(absl::StrCat(
        "only ", adds.load(), " of ", want_adds, " adds after 300 s")));
  }
  const double handler_ms = MillisSince(start);

  double updates_ms = 0;
  if (want_updates > 0) {
    const auto t0 = SteadyClock::now();
    if (absl::Status s = StartUpdates(static_cast<int>(port)); !s.ok()) {
      cancel();
      factory.Shutdown();
      return Fail(s);
    }
    if (!all_updated.WaitForNotificationWithTimeout(absl::Seconds(300))) {
      cancel();
      factory.Shutdown();
      return Fail(absl::DeadlineExceededError(
          absl::StrCat("only ", updated.load(), " of ", want_updates,
                       " updates after 300 s")));
    }
    updates_ms = MillisSince(t0);
  }
  const double rss = PeakRssMiB();
  const double cpu = CpuSeconds();
  const size_t cached = informer->GetStore()->List().size();
  cancel();
  factory.Shutdown();
  std::printf(
      "{\"sync_ms\":%.1f,\"handler_ms\":%.1f,\"updates_ms\":%.1f,"
      "\"peak_rss_mib\":%.1f,\"cpu_s\":%.2f,\"pods\":%lld,\"updates\":%lld,"
      "\"cached\":%zu}\n",
      sync_ms, handler_ms, updates_ms, rss, cpu,
      static_cast<long long>(adds.load()),
      static_cast<long long>(updated.load()), cached);
  return 0;
}

}  // namespace
}  // namespace kcr::bench

int main(int argc, char** argv) { return kcr::bench::Main(argc, argv); }
