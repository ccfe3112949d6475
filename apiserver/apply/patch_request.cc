#include "apiserver/apply/patch_request.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/json/json_util.h"
#include "api/patch/json_patch.h"
#include "api/patch/merge_patch.h"
#include "api/patch/strategic_merge_patch.h"
#include "base/string_view.h"

namespace kcr {
namespace apiserver {
namespace {

PatchResult Fail(int code, absl::string_view reason,
                 absl::string_view message) {
  PatchResult r;
  r.object.SetNull();
  api::StatusError e;
  e.code = code;
  e.reason = std::string(reason);
  e.message = std::string(message);
  r.error = std::move(e);
  return r;
}

// 422 on PatchOptions, as kube-apiserver validates the query parameters.
PatchResult InvalidOptions(absl::string_view field,
                           absl::string_view cause_type,
                           absl::string_view detail) {
  PatchResult r =
      Fail(422, "Invalid",
           absl::StrCat("PatchOptions.meta.k8s.io \"\" is invalid: ", field,
                        ": ", detail));
  r.error->kind = "PatchOptions";
  r.error->group = "meta.k8s.io";
  r.error->causes.push_back(
      {std::string(cause_type), std::string(detail), std::string(field)});
  return r;
}

std::string ManagerOf(std::string_view field_manager,
                      std::string_view user_agent) {
  if (!field_manager.empty()) return std::string(field_manager);
  return FieldManagerFromUserAgent(user_agent);
}

// "fieldManager: Too long: ..." → field "fieldManager", detail "Too long: ...".
PatchResult InvalidManager(const absl::Status& s) {
  absl::string_view m = s.message();
  absl::string_view detail = m;
  const size_t colon = m.find(": ");
  if (colon != absl::string_view::npos) detail = m.substr(colon + 2);
  absl::string_view type = "FieldValueInvalid";
  if (absl::StartsWith(detail, "Required")) type = "FieldValueRequired";
  if (absl::StartsWith(detail, "Too long")) type = "FieldValueTooLong";
  return InvalidOptions("fieldManager", type, detail);
}

}  // namespace

std::string UnsupportedPatchMediaTypeMessage(bool strategic_allowed) {
  std::vector<absl::string_view> types = {"application/json-patch+json",
                                          "application/merge-patch+json"};
  if (strategic_allowed)
    types.push_back("application/strategic-merge-patch+json");
  types.push_back("application/apply-patch+yaml");
  return absl::StrCat(
      "the body of the request was in an unknown format - accepted media "
      "types include: ",
      absl::StrJoin(types, ", "));
}

PatchResult ApplyPatchRequest(const PatchRequest& request) {
  if (request.type == api::PatchType::kStrategicMerge &&
      request.schema == nullptr) {
    return Fail(415, "UnsupportedMediaType",
                UnsupportedPatchMediaTypeMessage(false));
  }
  if (request.type != api::PatchType::kApply && request.force.has_value()) {
    return InvalidOptions(
        "force", "FieldValueForbidden",
        "Forbidden: may not be specified for non-apply patch");
  }
  if (request.type == api::PatchType::kApply) {
    absl::Status valid = ValidateFieldManager(request.field_manager, true);
    if (!valid.ok()) return InvalidManager(valid);
    absl::StatusOr<rapidjson::Document> config =
        ParseApplyConfiguration(request.body);
    if (!config.ok()) {
      return Fail(
          400, "BadRequest",
          absl::StrCat("error decoding YAML: ", config.status().message()));
    }
    ApplyOptions options;
    options.field_manager = request.field_manager;
    options.force = request.force.value_or(false);
    options.subresource = request.subresource;
    options.scope = request.scope;
    options.now = request.now;
    absl::StatusOr<ApplyResult> applied =
        ServerSideApply(request.live, *config, request.schema, options);
    if (!applied.ok())
      return Fail(400, "BadRequest", applied.status().message());
    if (!applied->conflicts.empty()) {
      PatchResult r =
          Fail(409, "Conflict", ApplyConflictMessage(applied->conflicts));
      for (const ApplyConflict& c : applied->conflicts) {
        r.error->causes.push_back({"FieldManagerConflict",
                                   absl::StrCat("conflict with ", c.manager),
                                   c.field});
      }
      return r;
    }
    PatchResult r;
    r.object = std::move(applied->object);
    r.created = applied->created;
    return r;
  }

  const std::string manager =
      ManagerOf(request.field_manager, request.user_agent);
  if (absl::Status valid = ValidateFieldManager(manager, false); !valid.ok()) {
    return InvalidManager(valid);
  }
  if (request.live == nullptr) {
    return Fail(400, "BadRequest", "the object to patch does not exist");
  }
  rapidjson::Document patch;
  if (absl::Status s = json::ParseJson(request.body, &patch); !s.ok()) {
    return Fail(400, "BadRequest",
                absl::StrCat("error decoding patch: ", s.message()));
  }
  PatchResult r;
  absl::Status s;
  switch (request.type) {
    case api::PatchType::kJson: {
      if (!patch.IsArray()) {
        return Fail(400, "BadRequest",
                    "JSON patch must be an array of operations");
      }
      r.object.CopyFrom(*request.live, r.object.GetAllocator());
      s = api::ApplyJsonPatch(patch, &r.object);
      if (!s.ok()) return Fail(422, "Invalid", s.message());
      break;
    }
    case api::PatchType::kMerge:
      s = api::ApplyMergePatch(*request.live, patch, &r.object,
                               r.object.GetAllocator());
      if (!s.ok()) return Fail(400, "BadRequest", s.message());
      break;
    case api::PatchType::kStrategicMerge:
      s = api::ApplyStrategicMergePatch(*request.live, patch, *request.schema,
                                        &r.object, r.object.GetAllocator());
      if (!s.ok()) return Fail(400, "BadRequest", s.message());
      break;
    case api::PatchType::kApply:
      break;
  }
  if (!r.object.IsObject()) {
    return Fail(400, "BadRequest", "the patched object is not a JSON object");
  }
  if (!manager.empty()) {
    UpdateOptions update;
    update.field_manager = manager;
    update.subresource = request.subresource;
    update.scope = request.scope;
    update.now = request.now;
    s = RecordUpdateManagedFields(request.live, &r.object, request.schema,
                                  update);
    if (!s.ok()) return Fail(400, "BadRequest", s.message());
  }
  return r;
}

absl::Status RecordWriteManager(
    const rapidjson::Value* old_object, rapidjson::Value* object,
    rapidjson::Value::AllocatorType& allocator, const api::PatchSchema* schema,
    std::string_view field_manager, std::string_view user_agent,
    std::string_view subresource, FieldScope scope, absl::Time now) {
  const std::string manager = ManagerOf(field_manager, user_agent);
  absl::Status valid = ValidateFieldManager(manager, false);
  if (!valid.ok() || manager.empty()) return valid;
  UpdateOptions update;
  update.field_manager = manager;
  update.subresource = std::string(subresource);
  update.scope = scope;
  update.now = now;
  return RecordUpdateManagedFields(old_object, object, allocator, schema,
                                   update);
}

}  // namespace apiserver
}  // namespace kcr
