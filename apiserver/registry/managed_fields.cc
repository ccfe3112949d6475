#include "apiserver/registry/managed_fields.h"

#include <string>

#include "api/errors/errors.h"
#include "apiserver/apply/patch_request.h"

namespace kcr {
namespace apiserver {

const api::PatchSchema* PatchSchemaFor(const ResourceInfo& resource) {
  if (resource.custom) return nullptr;
  return api::BuiltinPatchSchema(resource.group(), resource.kind());
}

FieldScope FieldScopeFor(const ResourceInfo& resource,
                         std::string_view subresource) {
  if (subresource == "status") return FieldScope::kStatus;
  if (resource.has_status()) return FieldScope::kMainResource;
  return FieldScope::kAll;
}

absl::Status RecordWriteManagedFields(
    const ResourceInfo& resource, const rapidjson::Value* old_object,
    rapidjson::Value* object, rapidjson::Value::AllocatorType& allocator,
    std::string_view field_manager, std::string_view user_agent,
    std::string_view subresource, absl::Time now) {
  absl::Status s = RecordWriteManager(
      old_object, object, allocator, PatchSchemaFor(resource), field_manager,
      user_agent, subresource, FieldScopeFor(resource, subresource), now);
  if (s.ok()) return s;
  api::StatusError e;
  e.code = 422;
  e.reason = "Invalid";
  e.message = std::string(s.message());
  return e.ToStatus();
}

}  // namespace apiserver
}  // namespace kcr
