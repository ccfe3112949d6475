#include "apiserver/endpoints/patch_handlers.h"

#include <string>
#include <utility>

#include "api/errors/errors.h"
#include "api/patch/strategic_merge_patch.h"
#include "apiserver/apply/patch_request.h"
#include "apiserver/registry/managed_fields.h"

namespace kcr {
namespace apiserver {

PatchHandlers DefaultPatchHandlers(const Clock* clock) {
  PatchHandlers h;
  h.strategic_merge = [](const ResourceInfo& resource,
                         const rapidjson::Value& live,
                         const rapidjson::Value& patch,
                         rapidjson::Document* result) -> absl::Status {
    const api::PatchSchema* schema = PatchSchemaFor(resource);
    if (schema == nullptr) {
      return api::StatusError::UnsupportedMediaType(
                 UnsupportedPatchMediaTypeMessage(false))
          .ToStatus();
    }
    absl::Status s = api::ApplyStrategicMergePatch(live, patch, *schema, result,
                                                   result->GetAllocator());
    if (!s.ok())
      return api::StatusError::BadRequest(std::string(s.message())).ToStatus();
    return absl::OkStatus();
  };
  h.apply = [clock](const ResourceInfo& resource, const rapidjson::Value* live,
                    const rapidjson::Value& applied,
                    const PatchHandlers::ApplyRequest& request,
                    rapidjson::Document* result) -> absl::Status {
    ApplyOptions options;
    options.field_manager = request.field_manager;
    options.force = request.force;
    options.subresource = request.subresource;
    options.scope = FieldScopeFor(resource, request.subresource);
    options.now = clock->Now();
    absl::StatusOr<ApplyResult> r =
        ServerSideApply(live, applied, PatchSchemaFor(resource), options);
    if (!r.ok())
      return api::StatusError::BadRequest(std::string(r.status().message()))
          .ToStatus();
    if (!r->conflicts.empty()) {
      api::StatusError e;
      e.code = 409;
      e.reason = "Conflict";
      e.message = ApplyConflictMessage(r->conflicts);
      for (const ApplyConflict& c : r->conflicts) {
        e.causes.push_back(
            {"FieldManagerConflict", "conflict with " + c.manager, c.field});
      }
      return e.ToStatus();
    }
    result->Swap(r->object);
    return absl::OkStatus();
  };
  return h;
}

}  // namespace apiserver
}  // namespace kcr
