#include "apiserver/kube_controllers/stored_objects.h"

#include <set>

#include "api/errors/errors.h"
#include "api/object_builder.h"

namespace kcr {
namespace apiserver {

std::vector<StoredCollection> StoredCollections(
    const ResourceRegistry& resources) {
  std::vector<StoredCollection> out;
  std::set<std::string> seen;
  for (const ResourceInfoPtr& info : resources.All()) {
    const std::string key = info->StorageKey();
    if (!seen.insert(key).second) continue;
    ResourceInfoPtr chosen = info;
    // Custom resources are stored at their storage version.
    if (info->custom && info->version() != info->storage_version) {
      for (const ResourceInfoPtr& v : resources.VersionsOf(key)) {
        if (v->version() == info->storage_version) chosen = v;
      }
    }
    out.push_back({chosen, key});
  }
  return out;
}

bool IsRaceError(const absl::Status& status) {
  if (status.ok()) return false;
  const api::StatusError e = api::StatusError::FromStatus(status);
  return e.code == 404 || e.code == 409;
}

api::ObjectBuilder StatusWriteOf(const api::Object& object,
                                 bool with_annotations) {
  api::ObjectBuilder b(object.api_version(), object.kind());
  b.SetName(object.name());
  if (!object.namespace_().empty()) b.SetNamespace(object.namespace_());
  b.SetResourceVersion(object.resource_version());
  if (with_annotations) {
    const rapidjson::Value* annotations = object.Find("/metadata/annotations");
    if (annotations != nullptr) {
      (void)b.Set("/metadata/annotations", *annotations);
    }
  }
  return b;
}

absl::Status RemoveFinalizer(Registry* registry, const ResourceInfo& resource,
                             const api::Object& object,
                             std::string_view finalizer) {
  api::ObjectBuilder b = object.ToBuilder();
  b.RemoveFinalizer(finalizer);
  const rapidjson::Value* list = b.Find("/metadata/finalizers");
  if (list != nullptr && list->IsArray() && list->Empty()) {
    b.Remove("/metadata/finalizers");
  }
  return registry
      ->Update(resource, object.namespace_(), object.name(), std::move(b))
      .status();
}

}  // namespace apiserver
}  // namespace kcr
