#include "apiserver/managed_fields.h"

#include <string>

#include "apiserver/api_error.h"
#include "apiserver/patch_request.h"
#include "runtime/base/string_view.h"

namespace kcr {
namespace apiserver {

const api::PatchSchema* PatchSchemaFor(const ResourceInfo& resource) {
  if (resource.custom) return nullptr;
  return api::BuiltinPatchSchema(resource.group(), resource.kind());
}

api::FieldScope FieldScopeFor(const ResourceInfo& resource,
                              std::string_view subresource) {
  if (subresource == "status") return api::FieldScope::kStatus;
  if (resource.has_status()) return api::FieldScope::kMainResource;
  return api::FieldScope::kAll;
}

absl::Status RecordWriteManagedFields(
    const ResourceInfo& resource, const rapidjson::Value* old_object,
    rapidjson::Value* object, rapidjson::Value::AllocatorType& allocator,
    std::string_view field_manager, std::string_view user_agent,
    std::string_view subresource, absl::Time now) {
  absl::Status s = api::RecordWriteManager(
      old_object, object, allocator, PatchSchemaFor(resource),
      ToAbsl(field_manager), ToAbsl(user_agent), ToAbsl(subresource),
      FieldScopeFor(resource, subresource), now);
  if (s.ok()) return s;
  ApiError e;
  e.code = 422;
  e.reason = "Invalid";
  e.message = std::string(s.message());
  return e.ToStatus();
}

}  // namespace apiserver
}  // namespace kcr
