// Registry (registry.h): Patch. Dispatches the patch types (JSON patch and
// merge patch here, strategic merge and server-side apply through
// PatchHandlers), checks the patch's fields, creates on apply, patches the
// scale subresource, and ends as an update.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/json/yaml_to_json.h"
#include "api/object_builder.h"
#include "api/patch/json_patch.h"
#include "api/patch/merge_patch.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/internal/write_context.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/registry_internal.h"
#include "apiserver/registry/scale.h"
#include "base/status_macros.h"
#include "base/str_cat.h"
#include "base/string_view.h"

namespace kcr {
namespace apiserver {
namespace {

using Mutation = Storage::Mutation;
using api::FieldError;
using rapidjson::Value;
using registry_internal::DecodePatched;
using registry_internal::NameMismatch;
using registry_internal::RunWrite;
using registry_internal::StrategyFor;
using registry_internal::ValidateMeta;

absl::Status PatchError(std::string_view message) {
  api::StatusError e;
  e.code = 422;
  e.reason = "Invalid";
  e.message = std::string(message);
  e.has_details = true;  // NewGenericServerResponse's empty details
  return e.ToStatus();
}

absl::Status ParseBody(std::string_view text, rapidjson::Document* doc,
                       bool allow_yaml) {
  absl::Status s = json::ParseJson(text, doc);
  if (s.ok()) return s;
  if (allow_yaml) {
    auto y = json::YamlToJson(text);
    if (y.ok()) {
      doc->CopyFrom(**y, doc->GetAllocator());
      return absl::OkStatus();
    }
    // An apply body is YAML (JSON being a form of it): say what YAML found.
    return api::StatusError::BadRequest(
               Cat("error decoding YAML: ", y.status().message()))
        .ToStatus();
  }
  return api::StatusError::BadRequest(
             Cat("error decoding patch: ", s.message()))
      .ToStatus();
}

}  // namespace

absl::StatusOr<WriteResult> Registry::Patch(
    const ResourceInfo& r, std::string_view ns, std::string_view name,
    PatchType type, std::string_view patch, const PatchOptions& options) {
  ScopedWriteContext context(
      {.verb = "patch", .subresource = options.subresource});
  // The one place patch content types are dispatched.
  static constexpr char kAccepted[] =
      "the body of the request was in an unknown format - accepted media "
      "types include: application/json-patch+json, "
      "application/merge-patch+json, application/apply-patch+yaml";
  if (type == PatchType::kStrategicMerge &&
      (r.custom || !options_.patch_handlers.strategic_merge)) {
    std::string msg =
        r.custom ? kAccepted
                 : "the body of the request was in an unknown format - "
                   "accepted media types include: "
                   "application/json-patch+json, "
                   "application/merge-patch+json (strategic merge "
                   "patch is not yet supported by this server)";
    return api::StatusError::UnsupportedMediaType(msg).ToStatus();
  }
  if (type == PatchType::kApply && !options_.patch_handlers.apply) {
    return api::StatusError::UnsupportedMediaType(
               "the body of the request was in an unknown format - accepted "
               "media types include: application/json-patch+json, "
               "application/merge-patch+json (server-side apply is not yet "
               "supported by this server)")
        .ToStatus();
  }
  std::vector<FieldError> option_errors;
  if (type == PatchType::kApply && options.field_manager.empty()) {
    option_errors.push_back(FieldErr(FieldError::Type::kRequired,
                                     "fieldManager", "",
                                     "is required for apply patch"));
  }
  if (type != PatchType::kApply && options.force.has_value()) {
    option_errors.push_back(
        FieldErr(FieldError::Type::kForbidden, "force", "",
                 "may not be specified for non-apply patch"));
  }
  if (!option_errors.empty()) {
    return api::StatusError::Invalid({"meta.k8s.io", "PatchOptions"}, "",
                                     option_errors)
        .ToStatus();
  }
  rapidjson::Document patch_doc;
  KCR_RETURN_IF_ERROR(ParseBody(patch, &patch_doc, type == PatchType::kApply));
  if (type == PatchType::kJson && !patch_doc.IsArray()) {
    return api::StatusError::BadRequest(
               "json: cannot unmarshal object into Go value of type "
               "jsonpatch.Patch")
        .ToStatus();
  }
  if ((type == PatchType::kApply || type == PatchType::kStrategicMerge) &&
      !patch_doc.IsObject()) {
    return api::StatusError::BadRequest("the patch is not a JSON object")
        .ToStatus();
  }
  std::vector<std::string> warnings;
  if (type != PatchType::kJson) {
    KCR_RETURN_IF_ERROR(CheckFields(r, patch_doc, options.field_validation,
                                    /*patch=*/true, &warnings));
  }
  std::string obj_ns = r.namespaced() ? std::string(ns) : "";
  const std::string sub = options.subresource;
  if (type == PatchType::kApply && sub.empty() &&
      storage_->Get(r.StorageKey(), obj_ns, name) == nullptr) {
    KCR_RETURN_IF_ERROR(CheckNamespace(r, ns, name));
  }
  bool created = false;
  auto result = RunWrite(
      storage_, r.StorageKey(), obj_ns, name, options.dry_run,
      [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
        created = false;
        rapidjson::Document patched;
        PatchHandlers::ApplyRequest apply_request{
            options.field_manager, options.force.value_or(false), sub};
        if (cur == nullptr) {
          if (type != PatchType::kApply || !sub.empty()) {
            return api::StatusError::NotFound(r.group_resource(), name)
                .ToStatus();
          }
          KCR_RETURN_IF_ERROR(options_.patch_handlers.apply(
              r, nullptr, patch_doc, apply_request, &patched));
          if (!patched.IsObject()) {
            return api::StatusError::BadRequest(
                       "the applied object is not a JSON object")
                .ToStatus();
          }
          KCR_RETURN_IF_ERROR(DecodePatched(r, &patched));
          api::ObjectBuilder b;
          b.json().CopyFrom(patched, b.allocator());
          std::string pname = StringAt(b, "/metadata/name");
          if (pname.empty()) {
            b.SetName(name);
          } else if (pname != name) {
            return NameMismatch(pname, name);
          }
          KCR_RETURN_IF_ERROR(PrepareCreate(r, ns, &b));
          std::vector<FieldError> errors;
          ValidateMeta(StrategyFor(r), b, &errors);
          if (!errors.empty()) {
            return api::StatusError::Invalid(r.group_kind(), name, errors)
                .ToStatus();
          }
          created = true;
          return CreateLocked(r, nullptr, &b);
        }
        // Patch the object as served at the requested version.
        api::ObjectPtr live = AtVersion(cur, r);
        rapidjson::Document live_doc;
        if (sub == "scale") {
          // Storage is locked here: build the Scale from `cur`, not Get.
          if (!r.has_scale())
            return api::StatusError::PathNotFound().ToStatus();
          KCR_ASSIGN_OR_RETURN(api::ObjectPtr scale, ScaleOf(r, live));
          live_doc.CopyFrom(scale->json(), live_doc.GetAllocator());
        } else {
          live_doc.CopyFrom(live->json(), live_doc.GetAllocator());
        }
        absl::Status s;
        switch (type) {
          case PatchType::kMerge: {
            auto m = api::ApplyMergePatch(live_doc, patch_doc);
            if (!m.ok()) return PatchError(ToStd(m.status().message()));
            patched = std::move(*m);
            break;
          }
          case PatchType::kJson: {
            auto m = api::ApplyJsonPatch(live_doc, patch_doc);
            if (!m.ok()) return PatchError(ToStd(m.status().message()));
            patched = std::move(*m);
            break;
          }
          case PatchType::kStrategicMerge:
            s = options_.patch_handlers.strategic_merge(r, live_doc, patch_doc,
                                                        &patched);
            break;
          case PatchType::kApply:
            s = options_.patch_handlers.apply(r, &live_doc, patch_doc,
                                              apply_request, &patched);
            break;
        }
        if (!s.ok()) {
          const std::optional<api::StatusError> e = api::GetStatusError(s);
          if (!e.has_value() || e->reason.empty()) {
            return PatchError(ToStd(s.message()));
          }
          return s;
        }
        if (!patched.IsObject()) {
          return api::StatusError::BadRequest(
                     "the patched object is not a JSON object")
              .ToStatus();
        }
        if (sub != "scale") KCR_RETURN_IF_ERROR(DecodePatched(r, &patched));
        if (sub == "scale") {
          const Value* replicas =
              api::ResolveJsonPointer(patched, "/spec/replicas");
          if (replicas == nullptr || !replicas->IsInt64()) {
            return api::StatusError::BadRequest(
                       "spec.replicas must be an integer")
                .ToStatus();
          }
          api::ObjectBuilder b = cur->ToBuilder();
          (void)b.SetInt(r.scale.spec_replicas, replicas->GetInt64());
          const WriteManager manager{options.field_manager, options.user_agent,
                                     "scale", false};
          return UpdateLocked(r, cur, std::move(b), "", true, &manager);
        }
        api::ObjectBuilder b;
        b.json().CopyFrom(patched, b.allocator());
        std::string pname = StringAt(b, "/metadata/name");
        if (pname != name) {
          return NameMismatch(pname, name);
        }
        if (StringAt(b, "/metadata/resourceVersion").empty()) {
          b.SetResourceVersion(cur->resource_version());
        }
        const WriteManager manager{options.field_manager, options.user_agent,
                                   sub, type == PatchType::kApply};
        return UpdateLocked(r, cur, std::move(b), sub, true, &manager);
      });
  if (!result.ok()) return result.status();
  if (!options.dry_run) AfterWrite(r, *result);
  WriteResult out;
  out.warnings = warnings;
  out.created = created;
  out.object = AtVersion(result->object, r);
  if (sub == "scale")
    return WriteResult{GetScale(r, ns, name).value_or(out.object), false};
  return out;
}

}  // namespace apiserver
}  // namespace kcr
