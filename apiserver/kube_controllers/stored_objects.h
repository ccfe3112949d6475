// Helpers the built-in controllers share: every stored collection with the
// resource to write its objects through, and the small edits they make.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_STORED_OBJECTS_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_STORED_OBJECTS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "api/object.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"

namespace kcr {
namespace apiserver {

// One stored collection and the resource (version) its objects are stored
// at, which is the one to read and write them through.
struct StoredCollection {
  ResourceInfoPtr resource;
  std::string key;  // "<group>/<resource>"
};

// Every collection of `resources`, once each, in discovery order.
std::vector<StoredCollection> StoredCollections(
    const ResourceRegistry& resources);

// True for errors a controller expects when racing other writers: the
// object is gone (404) or changed (409).
bool IsRaceError(const absl::Status& status);

// `object` without finalizer `finalizer` (the list dropped when it becomes
// empty), written with its resourceVersion as precondition.
absl::Status RemoveFinalizer(Registry* registry, const ResourceInfo& resource,
                             const api::Object& object,
                             std::string_view finalizer);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_STORED_OBJECTS_H_
