#include "runtime/controller/controllerutil/finalizer.h"

#include <string>
#include <utility>
#include <vector>

#include "api/errors/errors.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "runtime/controller/controllerutil/internal/resource.h"

namespace kcr::controller::controllerutil {
namespace {

// {"metadata":{"finalizers":[...],"resourceVersion":"..."}}
std::string FinalizersPatch(const std::vector<std::string_view>& finalizers,
                            std::string_view resource_version) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.Key("finalizers");
  w.StartArray();
  for (std::string_view f : finalizers) {
    w.String(f.data(), static_cast<rapidjson::SizeType>(f.size()));
  }
  w.EndArray();
  w.Key("resourceVersion");
  w.String(resource_version.data(),
           static_cast<rapidjson::SizeType>(resource_version.size()));
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

absl::StatusOr<api::ObjectPtr> ChangeFinalizer(
    const Context& ctx, client::RestClient* client,
    const client::Resource& resource, api::ObjectPtr object,
    std::string_view finalizer, bool add, const RetryOptions& retry) {
  if (object == nullptr) return absl::InvalidArgumentError("null object");
  const client::Resource r = internal::ResourceFor(resource, *object);
  const std::string name(object->name());
  api::ObjectPtr current = std::move(object);
  bool reread = false;
  absl::Status status = RetryOnConflict(ctx, retry, [&]() -> absl::Status {
    if (reread) {
      absl::StatusOr<api::ObjectPtr> fresh = client->Get(ctx, r, name);
      if (!fresh.ok()) return fresh.status();
      current = *std::move(fresh);
    }
    reread = true;
    if (current->HasFinalizer(finalizer) == add) return absl::OkStatus();
    std::vector<std::string_view> finalizers;
    for (std::string_view f : current->finalizers()) {
      if (f != finalizer) finalizers.push_back(f);
    }
    if (add) finalizers.push_back(finalizer);
    absl::StatusOr<api::ObjectPtr> patched =
        client->Patch(ctx, r, name, api::PatchType::kMerge,
                      FinalizersPatch(finalizers, current->resource_version()));
    if (!patched.ok()) return patched.status();
    current = *std::move(patched);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return current;
}

}  // namespace

bool ContainsFinalizer(const api::Object& object, std::string_view finalizer) {
  return object.HasFinalizer(finalizer);
}

absl::StatusOr<api::ObjectPtr> AddFinalizer(const Context& ctx,
                                            client::RestClient* client,
                                            const client::Resource& resource,
                                            api::ObjectPtr object,
                                            std::string_view finalizer,
                                            const RetryOptions& retry) {
  return ChangeFinalizer(ctx, client, resource, std::move(object), finalizer,
                         /*add=*/true, retry);
}

absl::StatusOr<api::ObjectPtr> RemoveFinalizer(const Context& ctx,
                                               client::RestClient* client,
                                               const client::Resource& resource,
                                               api::ObjectPtr object,
                                               std::string_view finalizer,
                                               const RetryOptions& retry) {
  return ChangeFinalizer(ctx, client, resource, std::move(object), finalizer,
                         /*add=*/false, retry);
}

}  // namespace kcr::controller::controllerutil
