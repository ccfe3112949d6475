#include "runtime/explorer/fenced_client.h"

namespace kcr::explorer {

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
  return inner_->Watch(ctx, resource, options);
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
