#include "apiserver/auth/owner_references.h"

#include <vector>

#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/meta/group_version.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace auth {
namespace {

const rapidjson::Value* OwnerReferences(const rapidjson::Value* object) {
  if (object == nullptr || !object->IsObject()) return nullptr;
  const rapidjson::Value* metadata = Member(*object, "metadata");
  if (metadata == nullptr || !metadata->IsObject()) return nullptr;
  const rapidjson::Value* refs = Member(*metadata, "ownerReferences");
  return refs != nullptr && refs->IsArray() ? refs : nullptr;
}

size_t Count(const rapidjson::Value* refs) {
  return refs == nullptr ? 0 : refs->Size();
}

bool Blocking(const rapidjson::Value& ref) {
  const rapidjson::Value* b = Member(ref, "blockOwnerDeletion");
  return b != nullptr && b->IsBool() && b->GetBool();
}

// isChangingOwnerReference: any difference, in order, from the old list
// (every reference of a new object).
bool Changing(const rapidjson::Value* now, const rapidjson::Value* before,
              bool create) {
  if (create) return Count(now) > 0;
  if (Count(now) != Count(before)) return true;
  for (rapidjson::SizeType i = 0; i < Count(now); ++i) {
    if ((*now)[i] != (*before)[i]) return true;
  }
  return false;
}

// newBlockingOwnerDeletionRefs: blocking references that are new (by uid)
// or were not blocking before.
std::vector<const rapidjson::Value*> NewlyBlocking(
    const rapidjson::Value* now, const rapidjson::Value* before) {
  std::vector<const rapidjson::Value*> out;
  for (rapidjson::SizeType i = 0; i < Count(now); ++i) {
    const rapidjson::Value& ref = (*now)[i];
    if (!ref.IsObject() || !Blocking(ref)) continue;
    const std::string uid = json::StringMember(ref, "uid");
    const rapidjson::Value* old = nullptr;
    for (rapidjson::SizeType j = 0; j < Count(before); ++j) {
      if ((*before)[j].IsObject() &&
          json::StringMember((*before)[j], "uid") == uid) {
        old = &(*before)[j];
      }
    }
    if (old == nullptr || !Blocking(*old)) out.push_back(&ref);
  }
  return out;
}

absl::Status Forbidden(const ResourceInfo& r, const std::string& name,
                       const std::string& why, const Decision& d) {
  // kube formats the authorizer's reason and error with %v: an RBAC
  // denial has no reason and a nil error.
  return api::StatusError::Forbidden(r.group_resource(), name,
                                     Cat(why, ": ", d.reason, ", <nil>"))
      .ToStatus();
}

}  // namespace

absl::Status ConfirmOwnerReferencePermissions(
    const Authorizer& authorizer, const ResourceRegistry& resources,
    const ResourceInfo& resource, const std::string& subresource,
    const std::string& ns, const std::string& name,
    const rapidjson::Value& object, const rapidjson::Value* old_object,
    const UserInfo& user, Attributes* denied) {
  // The pod status strategy keeps ownerReferences as they were.
  if (resource.group().empty() && resource.resource() == "pods" &&
      subresource == "status") {
    return absl::OkStatus();
  }
  const rapidjson::Value* now = OwnerReferences(&object);
  const rapidjson::Value* before = OwnerReferences(old_object);
  if (!Changing(now, before, old_object == nullptr)) return absl::OkStatus();

  Attributes del;
  del.user = user;
  del.verb = "delete";
  del.ns = ns;
  del.api_group = resource.group();
  del.api_version = resource.version();
  del.resource = resource.resource();
  del.subresource = subresource;
  del.name = name;
  if (Decision d = authorizer.Authorize(del); !d.allowed) {
    if (denied != nullptr) *denied = del;
    return Forbidden(resource, name,
                     "cannot set an ownerRef on a resource you can't delete",
                     d);
  }
  for (const rapidjson::Value* ref : NewlyBlocking(now, before)) {
    const std::string api_version = json::StringMember(*ref, "apiVersion");
    const std::string kind = json::StringMember(*ref, "kind");
    absl::StatusOr<api::GroupVersion> gv = api::ParseGroupVersion(api_version);
    ResourceInfoPtr owner =
        gv.ok() ? resources.LookupKind(api::GroupVersionKind(*gv, kind))
                : nullptr;
    if (owner == nullptr) {
      return api::StatusError::Forbidden(
                 resource.group_resource(), name,
                 Cat("cannot set blockOwnerDeletion in this case because "
                     "cannot find RESTMapping for APIVersion ",
                     api_version, " Kind ", kind, ": , no matches for kind ",
                     Quote(kind), " in version ", Quote(api_version)))
          .ToStatus();
    }
    Attributes fin;
    fin.user = user;
    fin.verb = "update";
    // kube asks in the object's namespace, where a namespaced owner is.
    fin.ns = ns;
    fin.api_group = owner->group();
    fin.api_version = owner->version();
    fin.resource = owner->resource();
    fin.subresource = "finalizers";
    fin.name = json::StringMember(*ref, "name");
    if (Decision d = authorizer.Authorize(fin); !d.allowed) {
      if (denied != nullptr) *denied = fin;
      return Forbidden(resource, name,
                       "cannot set blockOwnerDeletion if an ownerReference "
                       "refers to a resource you can't set finalizers on",
                       d);
    }
  }
  return absl::OkStatus();
}

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr
