// Escalation prevention for RBAC writes, as kube-apiserver's policy-based
// storage of roles and bindings (pkg/registry/rbac): a user may create or
// update a Role or ClusterRole only with rules they hold themselves, unless
// they may `escalate` it; a RoleBinding or ClusterRoleBinding only to a
// role whose rules they hold, unless they may `bind` it. Members of
// system:masters may do both.
#ifndef KCR_APISERVER_AUTH_ESCALATION_H_
#define KCR_APISERVER_AUTH_ESCALATION_H_

#include <string>

#include "absl/status/status.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "apiserver/registry/resources.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace auth {

// Whether `resource` is one of the four RBAC resources checked here.
bool IsRbacResource(const ResourceInfo& resource);

// OK when `user` may write `object` (the new state) of `resource` in `ns`;
// kube's 403 otherwise:
//   roles.rbac.authorization.k8s.io "r" is forbidden: user "bob"
//   (groups=["system:authenticated"]) is attempting to grant RBAC
//   permissions not currently held:
//   {APIGroups:[""], Resources:["secrets"], Verbs:["get"]}
absl::Status ConfirmNoEscalation(const RbacAuthorizer& authorizer,
                                 const ResourceInfo& resource,
                                 const std::string& ns,
                                 const rapidjson::Value& object,
                                 const UserInfo& user);

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_AUTH_ESCALATION_H_
