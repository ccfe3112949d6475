// OwnerReference: metav1.OwnerReference as an owning value, for building
// objects that a controller owns, and the helpers controllers use to find
// an object's controller (metav1.GetControllerOf, NewControllerRef).
#ifndef KCR_API_TYPES_OWNER_REFERENCE_H_
#define KCR_API_TYPES_OWNER_REFERENCE_H_

#include <optional>
#include <string>
#include <vector>

#include "api/object.h"

namespace kcr {
namespace api {

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;

  static OwnerReference FromView(const OwnerReferenceView& view);
  // A view of this reference; valid while this OwnerReference lives.
  OwnerReferenceView view() const;

  friend bool operator==(const OwnerReference& a, const OwnerReference& b) {
    return a.api_version == b.api_version && a.kind == b.kind &&
           a.name == b.name && a.uid == b.uid && a.controller == b.controller &&
           a.block_owner_deletion == b.block_owner_deletion;
  }
};

// Every owner reference of `object`.
std::vector<OwnerReference> OwnerReferencesOf(const Object& object);
// metav1.GetControllerOf: the reference with controller=true, if any.
std::optional<OwnerReference> ControllerOf(const Object& object);
// metav1.NewControllerRef: a reference to `owner` with controller and
// blockOwnerDeletion set, as a controller puts on what it creates.
OwnerReference NewControllerRef(const Object& owner);
// True when `object`'s controller reference names `owner`'s uid.
bool IsControlledBy(const Object& object, const Object& owner);

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_OWNER_REFERENCE_H_
