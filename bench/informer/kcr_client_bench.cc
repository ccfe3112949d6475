// kcr_client_bench: kcr's REST client alone against the replay server, no
// informer: the list an informer's reflector makes (resourceVersion=0,
// limit 500, every item decoded into an api::Object with managedFields
// stripped) and the watch after it, from POST /start-updates to the last
// event decoded. What the informer adds (FIFO, indexer, handler dispatch)
// comes on top of these; they are its bound from the client side.
//
//   kcr_client_bench --port=P --pods=N --updates=U
//
// Prints one JSON line: {"list_ms":..,"watch_ms":..,"peak_rss_mib":..}.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/context.h"
#include "bench/informer/harness_util.h"
#include "bench/informer/replay_client.h"
#include "runtime/client/rest_client.h"

namespace kcr::bench {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "kcr_client_bench: %s\n", status.ToString().c_str());
  return 1;
}

int Main(int argc, char** argv) {
  absl::StatusOr<ClientFlags> flags = ClientFlags::Parse(argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "kcr_client_bench: %s\n",
                 std::string(flags.status().message()).c_str());
    return 2;
  }
  const int64_t port = flags->port;
  const int64_t pods = flags->pods;
  const int64_t updates = flags->updates;
  absl::StatusOr<std::unique_ptr<client::RestClient>> client =
      NewReplayClient(port);
  if (!client.ok()) return Fail(client.status());
  const client::Resource pods_resource =
      client::Resource::Namespaced({"", "v1", "pods"});
  const Context ctx = Context::Background();

  // Objects are kept, as a cache would keep them.
  std::vector<api::ObjectPtr> objects;
  objects.reserve(static_cast<size_t>(pods));
  client::ListOptions list_options;
  list_options.resource_version = "0";
  list_options.limit = 500;
  const auto list_start = SteadyClock::now();
  absl::StatusOr<client::ListMeta> meta = (*client)->ListEach(
      ctx, pods_resource, list_options, [&](api::ObjectPtr object) {
        objects.push_back(std::move(object));
        return absl::OkStatus();
      });
  const double list_ms = MillisSince(list_start);
  if (!meta.ok()) return Fail(meta.status());
  if (static_cast<int64_t>(objects.size()) != pods) {
    return Fail(absl::InternalError(
        absl::StrCat("listed ", objects.size(), " pods, want ", pods)));
  }

  double watch_ms = 0;
  if (updates > 0) {
    client::ListOptions watch_options;
    watch_options.resource_version = meta->resource_version;
    watch_options.allow_watch_bookmarks = true;
    absl::StatusOr<std::unique_ptr<client::WatchStream>> watch =
        (*client)->Watch(ctx, pods_resource, watch_options);
    if (!watch.ok()) return Fail(watch.status());
    const auto watch_start = SteadyClock::now();
    if (absl::Status s = StartUpdates(static_cast<int>(port)); !s.ok()) {
      return Fail(s);
    }
    int64_t modified = 0;
    client::WatchEvent event;
    while (modified < updates && (*watch)->Next(&event)) {
      if (event.type == client::EventType::kModified) {
        objects[static_cast<size_t>(modified % pods)] = std::move(event.object);
        ++modified;
      }
    }
    watch_ms = MillisSince(watch_start);
    (*watch)->Stop();
    if (modified < updates) {
      return Fail(absl::UnavailableError(
          absl::StrCat("watch ended after ", modified, " of ", updates,
                       " events: ", (*watch)->status().ToString())));
    }
  }
  std::printf("{\"list_ms\":%.1f,\"watch_ms\":%.1f,\"peak_rss_mib\":%.1f}\n",
              list_ms, watch_ms, PeakRssMiB());
  return 0;
}

}  // namespace
}  // namespace kcr::bench

int main(int argc, char** argv) { return kcr::bench::Main(argc, argv); }
