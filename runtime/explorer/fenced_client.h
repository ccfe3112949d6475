// FencedClient: a RestClient that forwards to another until it is fenced,
// and from then on refuses every call (kUnavailable, nothing sent), as if
// its process had died. The explorer gives each Manager one, and fences it
// on the writing thread right after the Manager's chosen write is stored,
// before the answer reaches the Manager: that Manager can write nothing
// more, whichever of its threads tries. (The server fences the Manager's
// identity too when it can; this fence does not depend on it.)
//
// It also follows the Manager's watches: for each open one, the latest
// resourceVersion it delivered (an event's or a bookmark's), so the
// explorer can tell when the Manager's informers have seen every write.
//
// Thread-safe.
#ifndef KCR_RUNTIME_EXPLORER_FENCED_CLIENT_H_
#define KCR_RUNTIME_EXPLORER_FENCED_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "runtime/client/rest_client.h"

namespace kcr::explorer {

class FencedClient : public client::RestClient {
 public:
  explicit FencedClient(std::unique_ptr<client::RestClient> inner)
      : inner_(std::move(inner)) {}

  // Refuses every call from now on; idempotent.
  void Fence() { fenced_.store(true, std::memory_order_release); }
  bool fenced() const { return fenced_.load(std::memory_order_acquire); }

  // Whether every open watch has delivered a resourceVersion at or past
  // `written(group, resource)`, the latest write to its collection (0 for
  // none). False while no watch is open.
  bool CaughtUp(
      const std::function<int64_t(const std::string& group,
                                  const std::string& resource)>& written) const;

  // What one watch has delivered so far (shared with its stream).
  struct Progress {
    std::string group, resource;
    std::atomic<int64_t> seen{0};
  };

  absl::StatusOr<api::ObjectPtr> Get(
      const Context& ctx, const client::Resource& resource,
      std::string_view name, const client::GetOptions& options) override;
  absl::StatusOr<client::ObjectList> List(
      const Context& ctx, const client::Resource& resource,
      const client::ListOptions& options) override;
  absl::StatusOr<client::ListMeta> ListEach(
      const Context& ctx, const client::Resource& resource,
      const client::ListOptions& options,
      const std::function<absl::Status(api::ObjectPtr)>& on_item) override;
  absl::StatusOr<std::unique_ptr<client::WatchStream>> Watch(
      const Context& ctx, const client::Resource& resource,
      const client::ListOptions& options) override;
  absl::StatusOr<api::ObjectPtr> Create(
      const Context& ctx, const client::Resource& resource,
      const api::Object& object, const client::CreateOptions& options) override;
  absl::StatusOr<api::ObjectPtr> Update(
      const Context& ctx, const client::Resource& resource,
      const api::Object& object, const client::UpdateOptions& options) override;
  absl::StatusOr<api::ObjectPtr> UpdateStatus(
      const Context& ctx, const client::Resource& resource,
      const api::Object& object, const client::UpdateOptions& options) override;
  absl::StatusOr<api::ObjectPtr> Patch(const Context& ctx,
                                       const client::Resource& resource,
                                       std::string_view name,
                                       client::PatchType type,
                                       std::string_view patch,
                                       const client::PatchOptions& options,
                                       std::string_view subresource) override;
  absl::Status Delete(const Context& ctx, const client::Resource& resource,
                      std::string_view name,
                      const client::DeleteOptions& options) override;
  absl::Status DeleteCollection(
      const Context& ctx, const client::Resource& resource,
      const client::DeleteOptions& options,
      const client::ListOptions& list_options) override;
  absl::StatusOr<std::string> GetRaw(const Context& ctx,
                                     std::string_view path) override;

 private:
  absl::Status Refused() const;

  const std::unique_ptr<client::RestClient> inner_;
  std::atomic<bool> fenced_{false};
  mutable Mutex mu_;
  // The watches made, open or not (a closed one's Progress expires).
  std::vector<std::weak_ptr<Progress>> watches_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::explorer

#endif  // KCR_RUNTIME_EXPLORER_FENCED_CLIENT_H_
