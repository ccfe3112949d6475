#include "apiserver/registry/access_review.h"

#include <vector>

#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/types/field.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

using api::field::Str;

Value Stars(Allocator& a) {
  Value list(rapidjson::kArrayType);
  list.PushBack(Str("*", a), a);
  return list;
}

bool IsObject(const Value* v) { return v != nullptr && v->IsObject(); }

// The request's kind must be the resource's (or absent).
absl::Status CheckKind(const ResourceInfo& r, const Value& request) {
  const Value* kind = Member(request, "kind");
  if (kind != nullptr && kind->IsString() && kind->GetStringLength() > 0 &&
      r.kind() != kind->GetString()) {
    return api::StatusError::BadRequest(
               Cat("the object provided is unrecognized (must "
                   "be of type ",
                   r.kind(), "): ", kind->GetString()))
        .ToStatus();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReviewAccess(const ResourceInfo& r,
                                         const Value& request) {
  if (absl::Status s = CheckKind(r, request); !s.ok()) return s;
  rapidjson::Document out(rapidjson::kObjectType);
  Allocator& a = out.GetAllocator();
  out.AddMember("kind", Str(r.kind(), a), a);
  out.AddMember("apiVersion", Str(r.api_version(), a), a);
  Value metadata(rapidjson::kObjectType);
  metadata.AddMember("creationTimestamp", Value(rapidjson::kNullType), a);
  out.AddMember("metadata", metadata, a);
  const Value* spec = Member(request, "spec");
  Value spec_copy(rapidjson::kObjectType);
  if (IsObject(spec)) spec_copy.CopyFrom(*spec, a);
  Value status(rapidjson::kObjectType);
  if (r.resource() == "selfsubjectaccessreviews") {
    // ValidateSelfSubjectAccessReviewSpec.
    const bool resource =
        IsObject(spec) && IsObject(Member(*spec, "resourceAttributes"));
    const bool non_resource =
        IsObject(spec) && IsObject(Member(*spec, "nonResourceAttributes"));
    std::vector<api::FieldError> errors;
    if (resource && non_resource) {
      errors.push_back(FieldErr(
          api::FieldError::Type::kInvalid, "spec.nonResourceAttributes",
          "&authorization.NonResourceAttributes{...}",
          "cannot be specified in combination with resourceAttributes"));
    } else if (!resource && !non_resource) {
      errors.push_back(FieldErr(
          api::FieldError::Type::kInvalid, "spec.resourceAttributes",
          "(*authorization.NonResourceAttributes)(nil)",
          "exactly one of nonResourceAttributes or resourceAttributes must be "
          "specified"));
    }
    if (!errors.empty()) {
      return api::StatusError::Invalid({kAuthorizationGroup, r.kind()}, "",
                                       errors)
          .ToStatus();
    }
    status.AddMember("allowed", true, a);
    status.AddMember("reason", Str(kNoAuthorizationReason, a), a);
  } else {
    // ValidateSelfSubjectRulesReview: spec.namespace is all there is.
    Value resource_rule(rapidjson::kObjectType);
    resource_rule.AddMember("verbs", Stars(a), a);
    resource_rule.AddMember("apiGroups", Stars(a), a);
    resource_rule.AddMember("resources", Stars(a), a);
    Value resource_rules(rapidjson::kArrayType);
    resource_rules.PushBack(resource_rule, a);
    Value non_resource_rule(rapidjson::kObjectType);
    non_resource_rule.AddMember("verbs", Stars(a), a);
    non_resource_rule.AddMember("nonResourceURLs", Stars(a), a);
    Value non_resource_rules(rapidjson::kArrayType);
    non_resource_rules.PushBack(non_resource_rule, a);
    status.AddMember("resourceRules", resource_rules, a);
    status.AddMember("nonResourceRules", non_resource_rules, a);
    status.AddMember("incomplete", false, a);
  }
  out.AddMember("spec", spec_copy, a);
  out.AddMember("status", status, a);
  auto text = json::JsonToString(out);
  if (!text.ok()) return text.status();
  return *text;
}

}  // namespace apiserver
}  // namespace kcr
