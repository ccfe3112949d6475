// kube-apiserver's OwnerReferencesPermissionEnforcement admission plugin
// (plugin/pkg/admission/gc), off unless enabled
// (--enable-admission-plugins=OwnerReferencesPermissionEnforcement):
//
//   - a create or update that changes metadata.ownerReferences needs
//     `delete` on the object itself;
//   - an ownerReference that newly blocks its owner's deletion
//     (blockOwnerDeletion true, added or turned on) needs `update` on the
//     owner's `finalizers` subresource (the owner in the object's
//     namespace, by name).
//
// This is why operators' roles carry `<kind>/finalizers` update: without
// it, creating a child with a controller reference is forbidden. pods/status
// is exempt, as in kube.
#ifndef KCR_APISERVER_AUTH_OWNER_REFERENCES_H_
#define KCR_APISERVER_AUTH_OWNER_REFERENCES_H_

#include <string>

#include "absl/status/status.h"
#include "apiserver/auth/authorizer.h"
#include "apiserver/registry/resources.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace auth {

inline constexpr char kOwnerReferencesPermissionEnforcement[] =
    "OwnerReferencesPermissionEnforcement";

// OK when `user` may write `object` (the new state) over `old_object`
// (nullptr for a create) of `resource`/`subresource` named `name` in `ns`;
// kube's 403 otherwise:
//   configmaps "c" is forbidden: cannot set blockOwnerDeletion if an
//   ownerReference refers to a resource you can't set finalizers on: , <nil>
// and, when `denied` is given, the attributes the authorizer refused.
absl::Status ConfirmOwnerReferencePermissions(
    const Authorizer& authorizer, const ResourceRegistry& resources,
    const ResourceInfo& resource, const std::string& subresource,
    const std::string& ns, const std::string& name,
    const rapidjson::Value& object, const rapidjson::Value* old_object,
    const UserInfo& user, Attributes* denied = nullptr);

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_AUTH_OWNER_REFERENCES_H_
