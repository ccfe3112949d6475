#include "runtime/controller/controllerutil/owner.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/string_view.h"

namespace kcr::controller::controllerutil {
namespace {

constexpr char kAlreadyOwnedPayload[] = "kcr.io/controllerutil/AlreadyOwned";

std::string_view Str(const rapidjson::Value* v) {
  return v != nullptr && v->IsString()
             ? std::string_view(v->GetString(), v->GetStringLength())
             : std::string_view();
}

bool Bool(const rapidjson::Value& v, const char* key) {
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsBool() && it->value.GetBool();
}

std::string_view Member(const rapidjson::Value& v, const char* key) {
  auto it = v.FindMember(key);
  return it == v.MemberEnd() ? std::string_view() : Str(&it->value);
}

std::vector<api::OwnerReference> OwnerReferences(
    const api::ObjectBuilder& object) {
  std::vector<api::OwnerReference> refs;
  const rapidjson::Value* list = object.Find("/metadata/ownerReferences");
  if (list == nullptr || !list->IsArray()) return refs;
  for (const rapidjson::Value& v : list->GetArray()) {
    if (!v.IsObject()) continue;
    refs.push_back(api::OwnerReference{
        std::string(Member(v, "apiVersion")), std::string(Member(v, "kind")),
        std::string(Member(v, "name")), std::string(Member(v, "uid")),
        Bool(v, "controller"), Bool(v, "blockOwnerDeletion")});
  }
  return refs;
}

std::string_view GroupOf(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view()
                                         : api_version.substr(0, slash);
}

// Whether two references name the same object: the version of the API
// does not matter, as in controller-runtime's referSameObject.
bool ReferSameObject(const api::OwnerReference& a,
                     const api::OwnerReference& b) {
  return GroupOf(a.api_version) == GroupOf(b.api_version) && a.kind == b.kind &&
         a.name == b.name;
}

absl::Status ValidateOwner(const api::Object& owner,
                           const api::ObjectBuilder& object) {
  if (owner.kind().empty() || owner.api_version().empty() ||
      owner.name().empty() || owner.uid().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("owner ", ToAbsl(owner.kind()), " ", owner.Key(),
                     " needs kind, apiVersion, name and uid to be referenced"));
  }
  const std::string_view owner_ns = owner.namespace_();
  if (owner_ns.empty()) return absl::OkStatus();
  const std::string_view object_ns = Str(object.Find("/metadata/namespace"));
  if (object_ns.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cluster-scoped resource must not have a namespace-scoped owner, "
        "owner's namespace ",
        ToAbsl(owner_ns)));
  }
  if (object_ns != owner_ns) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cross-namespace owner references are disallowed, owner's namespace ",
        ToAbsl(owner_ns), ", obj's namespace ", ToAbsl(object_ns)));
  }
  return absl::OkStatus();
}

void Upsert(const api::OwnerReference& ref, api::ObjectBuilder& object) {
  std::vector<api::OwnerReference> refs = OwnerReferences(object);
  bool replaced = false;
  for (api::OwnerReference& existing : refs) {
    if (ReferSameObject(existing, ref)) {
      existing = ref;
      replaced = true;
      break;
    }
  }
  if (!replaced) refs.push_back(ref);
  std::vector<api::OwnerReferenceView> views;
  views.reserve(refs.size());
  for (const api::OwnerReference& r : refs) views.push_back(r.view());
  object.SetOwnerReferences(views);
}

absl::StatusOr<api::ObjectPtr> OnCopy(
    const api::Object& owner, const api::Object& object,
    absl::Status (*edit)(const api::Object&, api::ObjectBuilder&)) {
  api::ObjectBuilder b(object);
  KCR_RETURN_IF_ERROR(edit(owner, b));
  return b.Build();
}

}  // namespace

absl::Status SetControllerReference(const api::Object& owner,
                                    api::ObjectBuilder& object) {
  KCR_RETURN_IF_ERROR(ValidateOwner(owner, object));
  const api::OwnerReference ref = api::NewControllerRef(owner);
  for (const api::OwnerReference& existing : OwnerReferences(object)) {
    if (existing.controller && !ReferSameObject(existing, ref)) {
      const std::string_view ns = Str(object.Find("/metadata/namespace"));
      const std::string_view name = Str(object.Find("/metadata/name"));
      absl::Status status = absl::FailedPreconditionError(
          absl::StrCat("Object ", ToAbsl(ns), ns.empty() ? "" : "/",
                       ToAbsl(name), " is already owned by another ",
                       existing.kind, " controller ", existing.name));
      status.SetPayload(kAlreadyOwnedPayload, absl::Cord(existing.uid));
      return status;
    }
  }
  Upsert(ref, object);
  return absl::OkStatus();
}

absl::StatusOr<api::ObjectPtr> SetControllerReference(
    const api::Object& owner, const api::Object& object) {
  return OnCopy(owner, object, &SetControllerReference);
}

absl::Status SetOwnerReference(const api::Object& owner,
                               api::ObjectBuilder& object) {
  KCR_RETURN_IF_ERROR(ValidateOwner(owner, object));
  Upsert(
      api::OwnerReference{std::string(owner.api_version()),
                          std::string(owner.kind()), std::string(owner.name()),
                          std::string(owner.uid()),
                          /*controller=*/false,
                          /*block_owner_deletion=*/false},
      object);
  return absl::OkStatus();
}

absl::StatusOr<api::ObjectPtr> SetOwnerReference(const api::Object& owner,
                                                 const api::Object& object) {
  return OnCopy(owner, object, &SetOwnerReference);
}

bool HasControllerReference(const api::Object& object) {
  return object.controller_reference().has_value();
}

std::optional<api::OwnerReference> GetControllerOf(const api::Object& object) {
  return api::ControllerOf(object);
}

bool IsAlreadyOwned(const absl::Status& status) {
  return status.GetPayload(kAlreadyOwnedPayload).has_value();
}

}  // namespace kcr::controller::controllerutil
