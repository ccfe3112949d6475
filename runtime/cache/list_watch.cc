#include "runtime/cache/list_watch.h"

#include <utility>

#include "base/mutex.h"

namespace kcr::cache {
namespace {

class ClientListWatch final : public ListerWatcher {
 public:
  ClientListWatch(client::RestClient* client, client::Resource resource,
                  ListWatchOptions options)
      : client_(client),
        resource_(std::move(resource)),
        options_(std::move(options)),
        shard_selector_(options_.shard_selector) {}

  absl::StatusOr<client::ListMeta> List(const Context& ctx,
                                        const client::ListOptions& options,
                                        const ListItemFunc& on_item) override {
    return client_->ListEach(ctx, resource_, Tweak(options), on_item);
  }

  absl::StatusOr<std::unique_ptr<client::WatchStream>> Watch(
      const Context& ctx, const client::ListOptions& options) override {
    return client_->Watch(ctx, resource_, Tweak(options));
  }

  absl::StatusOr<bool> SetShardSelector(std::string selector) override {
    MutexLock lock(&mu_);
    if (selector == shard_selector_) return false;
    shard_selector_ = std::move(selector);
    return true;
  }

 private:
  // The caller's options narrowed to this collection (client-go's
  // tweakListOptions).
  client::ListOptions Tweak(client::ListOptions options) const {
    options.label_selector = options_.label_selector;
    options.field_selector = options_.field_selector;
    options.metadata_only = options_.metadata_only;
    MutexLock lock(&mu_);
    options.shard_selector = shard_selector_;
    return options;
  }

  client::RestClient* const client_;
  const client::Resource resource_;
  const ListWatchOptions options_;
  mutable Mutex mu_;
  std::string shard_selector_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<ListerWatcher> NewListWatch(client::RestClient* client,
                                            client::Resource resource,
                                            ListWatchOptions options) {
  return std::make_unique<ClientListWatch>(client, std::move(resource),
                                           std::move(options));
}

}  // namespace kcr::cache
