#include "runtime/explorer/fenced_client.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "base/string_view.h"

namespace kcr::explorer {
namespace {

int64_t ParseVersion(std::string_view rv) {
  int64_t v = 0;
  return absl::SimpleAtoi(ToAbsl(rv), &v) ? v : 0;
}

// A watch stream that records the resourceVersion of what it delivers.
class ObservedWatch : public client::WatchStream {
 public:
  ObservedWatch(std::unique_ptr<client::WatchStream> inner,
                std::shared_ptr<FencedClient::Progress> progress)
      : inner_(std::move(inner)), progress_(std::move(progress)) {}

  bool Next(const Context& ctx, client::WatchEvent* event) override {
    if (!inner_->Next(ctx, event)) return false;
    if (event->object != nullptr && event->error.ok()) {
      const int64_t rv = ParseVersion(event->object->resource_version());
      int64_t seen = progress_->seen.load();
      while (rv > seen && !progress_->seen.compare_exchange_weak(seen, rv)) {
      }
    }
    return true;
  }
  size_t Buffered() const override { return inner_->Buffered(); }
  void Stop() override { inner_->Stop(); }
  absl::Status status() const override { return inner_->status(); }

 private:
  const std::unique_ptr<client::WatchStream> inner_;
  const std::shared_ptr<FencedClient::Progress> progress_;
};

}  // namespace

bool FencedClient::CaughtUp(
    const std::function<int64_t(const std::string& group,
                                const std::string& resource)>& written) const {
  MutexLock lock(&mu_);
  bool any = false;
  for (const std::weak_ptr<Progress>& w : watches_) {
    std::shared_ptr<Progress> p = w.lock();
    if (p == nullptr) continue;
    any = true;
    if (p->seen.load() < written(p->group, p->resource)) return false;
  }
  return any;
}

absl::Status FencedClient::Refused() const {
  return absl::UnavailableError("the explorer crashed this Manager");
}

absl::StatusOr<api::ObjectPtr> FencedClient::Get(
    const Context& ctx, const client::Resource& resource, std::string_view name,
    const client::GetOptions& options) {
  if (fenced()) return Refused();
  return inner_->Get(ctx, resource, name, options);
}

absl::StatusOr<client::ObjectList> FencedClient::List(
    const Context& ctx, const client::Resource& resource,
    const client::ListOptions& options) {
  if (fenced()) return Refused();
  return inner_->List(ctx, resource, options);
}

absl::StatusOr<client::ListMeta> FencedClient::ListEach(
    const Context& ctx, const client::Resource& resource,
    const client::ListOptions& options,
    const std::function<absl::Status(api::ObjectPtr)>& on_item) {
  if (fenced()) return Refused();
  return inner_->ListEach(ctx, resource, options, on_item);
}

absl::StatusOr<std::unique_ptr<client::WatchStream>> FencedClient::Watch(
    const Context& ctx, const client::Resource& resource,
    const client::ListOptions& options) {
  if (fenced()) return Refused();
  auto progress = std::make_shared<Progress>();
  progress->group = resource.gvr.group;
  progress->resource = resource.gvr.resource;
  progress->seen = ParseVersion(options.resource_version);
  auto stream = inner_->Watch(ctx, resource, options);
  if (!stream.ok()) return stream.status();
  {
    MutexLock lock(&mu_);
    // Forget watches that ended.
    std::vector<std::weak_ptr<Progress>> open;
    for (auto& w : watches_) {
      if (!w.expired()) open.push_back(std::move(w));
    }
    open.push_back(progress);
    watches_ = std::move(open);
  }
  return std::unique_ptr<client::WatchStream>(
      new ObservedWatch(*std::move(stream), std::move(progress)));
}

absl::StatusOr<api::ObjectPtr> FencedClient::Create(
    const Context& ctx, const client::Resource& resource,
    const api::Object& object, const client::CreateOptions& options) {
  if (fenced()) return Refused();
  return inner_->Create(ctx, resource, object, options);
}

absl::StatusOr<api::ObjectPtr> FencedClient::Update(
    const Context& ctx, const client::Resource& resource,
    const api::Object& object, const client::UpdateOptions& options) {
  if (fenced()) return Refused();
  return inner_->Update(ctx, resource, object, options);
}

absl::StatusOr<api::ObjectPtr> FencedClient::UpdateStatus(
    const Context& ctx, const client::Resource& resource,
    const api::Object& object, const client::UpdateOptions& options) {
  if (fenced()) return Refused();
  return inner_->UpdateStatus(ctx, resource, object, options);
}

absl::StatusOr<api::ObjectPtr> FencedClient::Patch(
    const Context& ctx, const client::Resource& resource, std::string_view name,
    client::PatchType type, std::string_view patch,
    const client::PatchOptions& options, std::string_view subresource) {
  if (fenced()) return Refused();
  return inner_->Patch(ctx, resource, name, type, patch, options, subresource);
}

absl::Status FencedClient::Delete(const Context& ctx,
                                  const client::Resource& resource,
                                  std::string_view name,
                                  const client::DeleteOptions& options) {
  if (fenced()) return Refused();
  return inner_->Delete(ctx, resource, name, options);
}

absl::Status FencedClient::DeleteCollection(
    const Context& ctx, const client::Resource& resource,
    const client::DeleteOptions& options,
    const client::ListOptions& list_options) {
  if (fenced()) return Refused();
  return inner_->DeleteCollection(ctx, resource, options, list_options);
}

absl::StatusOr<std::string> FencedClient::GetRaw(const Context& ctx,
                                                 std::string_view path) {
  if (fenced()) return Refused();
  return inner_->GetRaw(ctx, path);
}

}  // namespace kcr::explorer
