#include "apiserver/auth/reviews.h"

#include <utility>
#include <vector>

#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/types/field.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/registry/access_review.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace auth {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;
using api::field::Str;

bool IsObject(const Value* v) { return v != nullptr && v->IsObject(); }

std::string StringOf(const Value* v, const char* key) {
  return v == nullptr ? "" : json::StringMember(*v, key);
}

std::vector<std::string> StringsOf(const Value* v, const char* key) {
  std::vector<std::string> out;
  const Value* m = v == nullptr ? nullptr : Member(*v, key);
  if (m == nullptr || !m->IsArray()) return out;
  for (const auto& e : m->GetArray()) {
    if (e.IsString()) out.emplace_back(e.GetString(), e.GetStringLength());
  }
  return out;
}

Value Strings(const std::vector<std::string>& list, Allocator& a) {
  Value out(rapidjson::kArrayType);
  for (const std::string& s : list) out.PushBack(Str(s, a), a);
  return out;
}

absl::Status CheckKind(const ResourceInfo& r, const Value& request) {
  const Value* kind = Member(request, "kind");
  if (kind != nullptr && kind->IsString() && kind->GetStringLength() > 0 &&
      r.kind() != kind->GetString()) {
    return api::StatusError::BadRequest(
               Cat("the object provided is unrecognized (must be of type ",
                   r.kind(), "): ", kind->GetString()))
        .ToStatus();
  }
  return absl::OkStatus();
}

absl::Status Invalid(const ResourceInfo& r, std::string field,
                     std::string value, std::string detail) {
  return api::StatusError::Invalid(
             {r.group(), r.kind()}, "",
             {FieldErr(api::FieldError::Type::kInvalid, std::move(field),
                       std::move(value), std::move(detail))})
      .ToStatus();
}

// The attributes a spec's resourceAttributes or nonResourceAttributes give
// for `user`; Invalid unless exactly one is set.
absl::StatusOr<Attributes> AttributesOf(const ResourceInfo& r,
                                        const Value* spec, UserInfo user) {
  const Value* res =
      IsObject(spec) ? Member(*spec, "resourceAttributes") : nullptr;
  const Value* non =
      IsObject(spec) ? Member(*spec, "nonResourceAttributes") : nullptr;
  if (IsObject(res) && IsObject(non)) {
    return Invalid(r, "spec.nonResourceAttributes",
                   "&authorization.NonResourceAttributes{...}",
                   "cannot be specified in combination with "
                   "resourceAttributes");
  }
  if (!IsObject(res) && !IsObject(non)) {
    return Invalid(r, "spec.resourceAttributes",
                   "(*authorization.NonResourceAttributes)(nil)",
                   "exactly one of nonResourceAttributes or "
                   "resourceAttributes must be specified");
  }
  Attributes a;
  a.user = std::move(user);
  if (IsObject(res)) {
    a.resource_request = true;
    a.ns = StringOf(res, "namespace");
    a.verb = StringOf(res, "verb");
    a.api_group = StringOf(res, "group");
    a.api_version = StringOf(res, "version");
    a.resource = StringOf(res, "resource");
    a.subresource = StringOf(res, "subresource");
    a.name = StringOf(res, "name");
  } else {
    a.resource_request = false;
    a.path = StringOf(non, "path");
    a.verb = StringOf(non, "verb");
  }
  return a;
}

rapidjson::Document Envelope(const ResourceInfo& r, const Value& request,
                             const std::string& ns) {
  rapidjson::Document out(rapidjson::kObjectType);
  Allocator& a = out.GetAllocator();
  out.AddMember("kind", Str(r.kind(), a), a);
  out.AddMember("apiVersion", Str(r.api_version(), a), a);
  Value metadata(rapidjson::kObjectType);
  if (!ns.empty()) metadata.AddMember("namespace", Str(ns, a), a);
  metadata.AddMember("creationTimestamp", Value(rapidjson::kNullType), a);
  out.AddMember("metadata", metadata, a);
  const Value* spec = Member(request, "spec");
  Value spec_copy(rapidjson::kObjectType);
  if (IsObject(spec)) spec_copy.CopyFrom(*spec, a);
  out.AddMember("spec", spec_copy, a);
  return out;
}

absl::StatusOr<std::string> Finish(rapidjson::Document* out, Value status) {
  out->AddMember("status", status, out->GetAllocator());
  auto text = json::JsonToString(*out);
  if (!text.ok()) return text.status();
  return *text;
}

Value UserInfoJson(const UserInfo& u, Allocator& a) {
  Value user(rapidjson::kObjectType);
  user.AddMember("username", Str(u.name, a), a);
  if (!u.uid.empty()) user.AddMember("uid", Str(u.uid, a), a);
  user.AddMember("groups", Strings(u.groups, a), a);
  if (!u.extra.empty()) {
    Value extra(rapidjson::kObjectType);
    for (const auto& [k, v] : u.extra) {
      extra.AddMember(Str(k, a), Strings(v, a), a);
    }
    user.AddMember("extra", extra, a);
  }
  return user;
}

Value AccessStatus(const Decision& d, Allocator& a) {
  Value status(rapidjson::kObjectType);
  status.AddMember("allowed", d.allowed, a);
  if (!d.reason.empty()) status.AddMember("reason", Str(d.reason, a), a);
  return status;
}

}  // namespace

bool IsReview(const ResourceInfo& r) {
  return r.group() == kAuthorizationGroup ||
         (r.group() == kAuthenticationGroup &&
          (r.resource() == "tokenreviews" ||
           r.resource() == "selfsubjectreviews"));
}

absl::StatusOr<std::string> AnswerReview(const ResourceInfo& r,
                                         const std::string& ns,
                                         const Value& request,
                                         const UserInfo& requester,
                                         const Authorizer& authorizer,
                                         const Authenticator& authenticator) {
  if (absl::Status s = CheckKind(r, request); !s.ok()) return s;
  const std::string& resource = r.resource();
  if (!authorizer.enforcing() && (resource == "selfsubjectaccessreviews" ||
                                  resource == "selfsubjectrulesreviews")) {
    return ReviewAccess(r, request);
  }
  rapidjson::Document out = Envelope(r, request, ns);
  Allocator& a = out.GetAllocator();
  const Value* spec = Member(request, "spec");
  if (resource == "selfsubjectaccessreviews") {
    auto attributes = AttributesOf(r, spec, requester);
    if (!attributes.ok()) return attributes.status();
    return Finish(&out, AccessStatus(authorizer.Authorize(*attributes), a));
  }
  if (resource == "subjectaccessreviews" ||
      resource == "localsubjectaccessreviews") {
    UserInfo subject;
    subject.name = StringOf(spec, "user");
    subject.uid = StringOf(spec, "uid");
    subject.groups = StringsOf(spec, "groups");
    if (subject.name.empty() && subject.groups.empty()) {
      return Invalid(r, "spec.user", "\"\"",
                     "at least one of user or group must be specified");
    }
    auto attributes = AttributesOf(r, spec, subject);
    if (!attributes.ok()) return attributes.status();
    if (resource == "localsubjectaccessreviews") {
      if (!attributes->resource_request) {
        return Invalid(r, "spec.nonResourceAttributes",
                       "&authorization.NonResourceAttributes{...}",
                       "disallowed on this kind of request");
      }
      if (attributes->ns != ns) {
        return Invalid(r, "spec.resourceAttributes.namespace",
                       Quote(attributes->ns), "must match metadata.namespace");
      }
    }
    return Finish(&out, AccessStatus(authorizer.Authorize(*attributes), a));
  }
  if (resource == "selfsubjectrulesreviews") {
    const std::string rules_ns = StringOf(spec, "namespace");
    RuleSet set = authorizer.RulesFor(requester, rules_ns);
    Value resource_rules(rapidjson::kArrayType);
    Value non_resource_rules(rapidjson::kArrayType);
    for (const PolicyRule& rule : set.rules) {
      if (!rule.resources.empty()) {
        Value rr(rapidjson::kObjectType);
        rr.AddMember("verbs", Strings(rule.verbs, a), a);
        rr.AddMember("apiGroups", Strings(rule.api_groups, a), a);
        rr.AddMember("resources", Strings(rule.resources, a), a);
        if (!rule.resource_names.empty()) {
          rr.AddMember("resourceNames", Strings(rule.resource_names, a), a);
        }
        resource_rules.PushBack(rr, a);
      }
      if (!rule.non_resource_urls.empty()) {
        Value nr(rapidjson::kObjectType);
        nr.AddMember("verbs", Strings(rule.verbs, a), a);
        nr.AddMember("nonResourceURLs", Strings(rule.non_resource_urls, a), a);
        non_resource_rules.PushBack(nr, a);
      }
    }
    Value status(rapidjson::kObjectType);
    status.AddMember("resourceRules", resource_rules, a);
    status.AddMember("nonResourceRules", non_resource_rules, a);
    status.AddMember("incomplete", set.incomplete, a);
    if (!set.evaluation_error.empty()) {
      status.AddMember("evaluationError", Str(set.evaluation_error, a), a);
    }
    return Finish(&out, std::move(status));
  }
  if (resource == "selfsubjectreviews") {
    Value status(rapidjson::kObjectType);
    status.AddMember("userInfo", UserInfoJson(requester, a), a);
    return Finish(&out, std::move(status));
  }
  if (resource == "tokenreviews") {
    const std::string token = StringOf(spec, "token");
    if (token.empty()) {
      return api::StatusError::BadRequest(
                 "token is required for TokenReview in authentication")
          .ToStatus();
    }
    Authentication result =
        authenticator.AuthenticateToken(token, StringsOf(spec, "audiences"));
    Value status(rapidjson::kObjectType);
    if (result.outcome == Authentication::Outcome::kAuthenticated) {
      status.AddMember("authenticated", true, a);
      status.AddMember("user", UserInfoJson(result.user, a), a);
      status.AddMember("audiences", Strings(result.audiences, a), a);
    } else {
      status.AddMember("user", Value(rapidjson::kObjectType), a);
      status.AddMember("error", Str(result.error, a), a);
    }
    return Finish(&out, std::move(status));
  }
  return api::StatusError::MethodNotSupported(r.group_resource(), "create")
      .ToStatus();
}

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr
