// Helpers the built-in controllers share: every stored collection with the
// resource to write its objects through, and the small edits they make.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_STORED_OBJECTS_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_STORED_OBJECTS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "api/object.h"
#include "api/object_builder.h"
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

// The body of a write to `object`'s status subresource, before its status
// is set: apiVersion, kind, and of the metadata the name, namespace and
// resourceVersion (the write's precondition), plus the annotations when
// `with_annotations` (the apps kinds' status writes keep the annotations
// sent). The status subresource takes nothing else from the body (the
// store keeps the rest of the stored object), so sending the whole object,
// as a client does, would only be copied, checked and dropped.
api::ObjectBuilder StatusWriteOf(const api::Object& object,
                                 bool with_annotations = false);

// `object` without finalizer `finalizer` (the list dropped when it becomes
// empty), written with its resourceVersion as precondition.
absl::Status RemoveFinalizer(Registry* registry, const ResourceInfo& resource,
                             const api::Object& object,
                             std::string_view finalizer);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_STORED_OBJECTS_H_
