#include "api/types/owner_reference.h"

namespace kcr {
namespace api {

OwnerReference OwnerReference::FromView(const OwnerReferenceView& v) {
  return OwnerReference{
      std::string(v.api_version), std::string(v.kind), std::string(v.name),
      std::string(v.uid),         v.controller,        v.block_owner_deletion};
}

OwnerReferenceView OwnerReference::view() const {
  return OwnerReferenceView{api_version, kind,       name,
                            uid,         controller, block_owner_deletion};
}

std::vector<OwnerReference> OwnerReferencesOf(const Object& object) {
  std::vector<OwnerReference> out;
  for (const auto& ref : object.owner_references()) {
    out.push_back(OwnerReference::FromView(ref));
  }
  return out;
}

std::optional<OwnerReference> ControllerOf(const Object& object) {
  std::optional<OwnerReferenceView> ref = object.controller_reference();
  if (!ref.has_value()) return std::nullopt;
  return OwnerReference::FromView(*ref);
}

OwnerReference NewControllerRef(const Object& owner) {
  return OwnerReference{std::string(owner.api_version()),
                        std::string(owner.kind()),
                        std::string(owner.name()),
                        std::string(owner.uid()),
                        /*controller=*/true,
                        /*block_owner_deletion=*/true};
}

bool IsControlledBy(const Object& object, const Object& owner) {
  std::optional<OwnerReferenceView> ref = object.controller_reference();
  return ref.has_value() && !owner.uid().empty() && ref->uid == owner.uid();
}

}  // namespace api
}  // namespace kcr
