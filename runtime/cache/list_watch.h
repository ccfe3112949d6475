// ListerWatcher: how a Reflector lists and watches one collection, as
// client-go's cache.ListerWatcher, and NewListWatch, its implementation on
// the REST client.
//
// The collection (resource, namespace, label and field selectors) is fixed
// when the ListerWatcher is made, except for its shardSelector, which a
// sharded controller narrows to the shards it holds (SetShardSelector);
// the Reflector passes the rest of the options (resourceVersion, limit,
// continue, timeoutSeconds, bookmarks, sendInitialEvents) with each call.
#ifndef KCR_RUNTIME_CACHE_LIST_WATCH_H_
#define KCR_RUNTIME_CACHE_LIST_WATCH_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"
#include "base/context.h"
#include "runtime/client/options.h"
#include "runtime/client/rest_client.h"
#include "runtime/client/watch.h"

namespace kcr::cache {

// Called with each listed item, in order, as it is decoded. An error stops
// the list and is returned by List.
using ListItemFunc = std::function<absl::Status(api::ObjectPtr)>;

// Thread-safe.
class ListerWatcher {
 public:
  virtual ~ListerWatcher() = default;

  // One list call (one page when options.limit is set), streaming its
  // items into `on_item`. Errors as RestClient's (api/errors/errors.h).
  virtual absl::StatusOr<client::ListMeta> List(
      const Context& ctx, const client::ListOptions& options,
      const ListItemFunc& on_item) = 0;

  // A watch from options.resource_version.
  virtual absl::StatusOr<std::unique_ptr<client::WatchStream>> Watch(
      const Context& ctx, const client::ListOptions& options) = 0;

  // Sends `selector` (KEP-5866's shardSelector, "" for none) with every
  // later List and Watch. True when it differs from the one before (the
  // caller then relists). Unimplemented for a ListerWatcher of a fixed
  // collection.
  virtual absl::StatusOr<bool> SetShardSelector(std::string selector) {
    (void)selector;
    return absl::UnimplementedError("this ListerWatcher cannot be sharded");
  }
};

// The collection a ListWatch serves.
struct ListWatchOptions {
  std::string label_selector;
  std::string field_selector;
  // PartialObjectMetadata instead of whole objects (a metadata informer).
  bool metadata_only = false;
  // The shardSelector to start with ("" for none); SetShardSelector
  // changes it.
  std::string shard_selector;
};

// Lists and watches `resource` (its namespace, "" for all) through
// `client`, which is not owned and must outlive it.
std::unique_ptr<ListerWatcher> NewListWatch(client::RestClient* client,
                                            client::Resource resource,
                                            ListWatchOptions options = {});

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_LIST_WATCH_H_
