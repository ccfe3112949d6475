#include "runtime/controller/controllerutil/create_or_update.h"

#include <string>
#include <utility>

#include "api/errors/errors.h"
#include "api/patch/merge_patch.h"
#include "base/status_macros.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "runtime/controller/controllerutil/internal/resource.h"

namespace kcr::controller::controllerutil {
namespace {

std::string_view Str(const rapidjson::Value* v) {
  return v != nullptr && v->IsString()
             ? std::string_view(v->GetString(), v->GetStringLength())
             : std::string_view();
}

// Applies `mutate` to `copy` and checks that it kept the object's key.
absl::Status Mutate(const MutateFunc& mutate, api::ObjectBuilder& copy) {
  const std::string name(Str(copy.Find("/metadata/name")));
  const std::string ns(Str(copy.Find("/metadata/namespace")));
  KCR_RETURN_IF_ERROR(mutate(copy));
  if (Str(copy.Find("/metadata/name")) != name ||
      Str(copy.Find("/metadata/namespace")) != ns) {
    return absl::InvalidArgumentError(
        "MutateFn cannot mutate object name and/or object namespace");
  }
  return absl::OkStatus();
}

// Create path shared by both: NotFound on Get.
absl::StatusOr<WriteResult> Create(const Context& ctx,
                                   client::RestClient* client,
                                   const client::Resource& resource,
                                   const api::Object& object,
                                   const MutateFunc& mutate) {
  api::ObjectBuilder copy(object);
  if (resource.namespaced && object.namespace_().empty()) {
    copy.SetNamespace(resource.namespace_);
  }
  KCR_RETURN_IF_ERROR(Mutate(mutate, copy));
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr desired, copy.Build());
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr created,
                       client->Create(ctx, resource, *desired));
  return WriteResult{OperationResult::kCreated, std::move(created)};
}

std::string ToJson(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  v.Accept(w);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// A deep copy of `object` without its status, and its status (null when
// absent) in `status`.
rapidjson::Document SplitStatus(const rapidjson::Value& object,
                                rapidjson::Document* status) {
  rapidjson::Document rest;
  rest.CopyFrom(object, rest.GetAllocator());
  status->SetNull();
  if (rest.IsObject()) {
    auto it = rest.FindMember("status");
    if (it != rest.MemberEnd()) {
      status->CopyFrom(it->value, status->GetAllocator());
      rest.RemoveMember(it);
    }
  }
  return rest;
}

}  // namespace

std::string_view OperationResultName(OperationResult result) {
  switch (result) {
    case OperationResult::kUnchanged:
      return "unchanged";
    case OperationResult::kCreated:
      return "created";
    case OperationResult::kUpdated:
      return "updated";
    case OperationResult::kUpdatedStatus:
      return "updatedStatus";
    case OperationResult::kUpdatedStatusOnly:
      return "updatedStatusOnly";
  }
  return "unknown";
}

absl::StatusOr<WriteResult> CreateOrUpdate(const Context& ctx,
                                           client::RestClient* client,
                                           const client::Resource& resource,
                                           const api::Object& object,
                                           const MutateFunc& mutate) {
  const client::Resource r = internal::ResourceFor(resource, object);
  absl::StatusOr<api::ObjectPtr> current = client->Get(ctx, r, object.name());
  if (api::IsNotFound(current.status())) {
    return Create(ctx, client, r, object, mutate);
  }
  if (!current.ok()) return current.status();
  api::ObjectBuilder copy(**current);
  KCR_RETURN_IF_ERROR(Mutate(mutate, copy));
  if (copy.json() == (*current)->json()) {
    return WriteResult{OperationResult::kUnchanged, *std::move(current)};
  }
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr desired, copy.Build());
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr updated,
                       client->Update(ctx, r, *desired));
  return WriteResult{OperationResult::kUpdated, std::move(updated)};
}

absl::StatusOr<WriteResult> CreateOrPatch(const Context& ctx,
                                          client::RestClient* client,
                                          const client::Resource& resource,
                                          const api::Object& object,
                                          const MutateFunc& mutate) {
  const client::Resource r = internal::ResourceFor(resource, object);
  absl::StatusOr<api::ObjectPtr> current = client->Get(ctx, r, object.name());
  if (api::IsNotFound(current.status())) {
    return Create(ctx, client, r, object, mutate);
  }
  if (!current.ok()) return current.status();
  api::ObjectBuilder copy(**current);
  KCR_RETURN_IF_ERROR(Mutate(mutate, copy));

  rapidjson::Document before_status;
  rapidjson::Document after_status;
  const rapidjson::Document before =
      SplitStatus((*current)->json(), &before_status);
  const rapidjson::Document after = SplitStatus(copy.json(), &after_status);

  WriteResult result{OperationResult::kUnchanged, *current};
  const std::string name((*current)->name());
  if (before != after) {
    KCR_ASSIGN_OR_RETURN(rapidjson::Document patch,
                         api::CreateMergePatch(before, after));
    KCR_ASSIGN_OR_RETURN(
        result.object,
        client->Patch(ctx, r, name, api::PatchType::kMerge, ToJson(patch)));
    result.result = OperationResult::kUpdated;
  }
  if (before_status != after_status) {
    // {"status": <before>} -> {"status": <after>}: a patch that sets,
    // changes or (when the mutate function dropped it) clears status.
    rapidjson::Document from(rapidjson::kObjectType);
    rapidjson::Document to(rapidjson::kObjectType);
    if (!before_status.IsNull()) {
      from.AddMember("status",
                     rapidjson::Value(before_status, from.GetAllocator()),
                     from.GetAllocator());
    }
    if (!after_status.IsNull()) {
      to.AddMember("status", rapidjson::Value(after_status, to.GetAllocator()),
                   to.GetAllocator());
    }
    KCR_ASSIGN_OR_RETURN(rapidjson::Document patch,
                         api::CreateMergePatch(from, to));
    KCR_ASSIGN_OR_RETURN(result.object,
                         client->Patch(ctx, r, name, api::PatchType::kMerge,
                                       ToJson(patch), {}, "status"));
    result.result = result.result == OperationResult::kUpdated
                        ? OperationResult::kUpdatedStatus
                        : OperationResult::kUpdatedStatusOnly;
  }
  return result;
}

}  // namespace kcr::controller::controllerutil
