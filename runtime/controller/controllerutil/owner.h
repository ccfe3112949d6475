// Owner references, as controller-runtime's controllerutil: make an object
// owned (and, once, controlled) by another so that the garbage collector
// deletes it with its owner and the owner's controller hears of it.
//
// Every function edits a copy: the ObjectBuilder forms edit in place (for a
// CreateOrUpdate mutate function), the Object forms return a new Object.
#ifndef KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_OWNER_H_
#define KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_OWNER_H_

#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/types/owner_reference.h"

namespace kcr::controller::controllerutil {

// Makes `owner` the controller of `object`: an ownerReference with
// controller=true and blockOwnerDeletion=true, replacing one that already
// names the owner (same API group, kind and name). Errors:
//   - AlreadyOwned (IsAlreadyOwned) when another object is the controller:
//     "Object default/web-deploy is already owned by another Nginx
//     controller other";
//   - InvalidArgument when a namespaced owner would own a cluster-scoped
//     object, or an object of another namespace (the garbage collector
//     would delete it at once), or `owner` has no kind, apiVersion, name
//     or uid.
absl::Status SetControllerReference(const api::Object& owner,
                                    api::ObjectBuilder& object);
absl::StatusOr<api::ObjectPtr> SetControllerReference(
    const api::Object& owner, const api::Object& object);

// Adds (or replaces, as above) a plain ownerReference to `owner`, without
// controller or blockOwnerDeletion. Same scope checks.
absl::Status SetOwnerReference(const api::Object& owner,
                               api::ObjectBuilder& object);
absl::StatusOr<api::ObjectPtr> SetOwnerReference(const api::Object& owner,
                                                 const api::Object& object);

// Whether `object` has a controller (an ownerReference with
// controller=true).
bool HasControllerReference(const api::Object& object);

// metav1.GetControllerOf.
std::optional<api::OwnerReference> GetControllerOf(const api::Object& object);

// Whether `status` is SetControllerReference's AlreadyOwned error.
bool IsAlreadyOwned(const absl::Status& status);

}  // namespace kcr::controller::controllerutil

#endif  // KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_OWNER_H_
