// Strategies of rbac.authorization.k8s.io/v1: Role, ClusterRole,
// RoleBinding and ClusterRoleBinding, with kube-apiserver's defaults and
// validation (pkg/apis/rbac/v1 defaults, pkg/apis/rbac/validation) — the
// checks a manifest author can trip over: a rule without verbs, a resource
// rule without apiGroups or resources, non-resource URLs in a Role, a
// binding without roleRef (or one that names the wrong kind), a roleRef
// changed by an update (bindings are immutable there), a subject of an
// unknown kind or with the wrong apiGroup.
//
// The objects are stored and served only: nothing authorizes requests by
// them, and ClusterRole aggregation (aggregationRule) is not run.
//
// Stateless; thread-safe.
#ifndef KCR_APISERVER_REGISTRY_RBAC_STRATEGY_H_
#define KCR_APISERVER_REGISTRY_RBAC_STRATEGY_H_

#include "apiserver/registry/strategy.h"

namespace kcr {
namespace apiserver {

inline constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";

const Strategy& RoleStrategy();
const Strategy& ClusterRoleStrategy();
const Strategy& RoleBindingStrategy();
const Strategy& ClusterRoleBindingStrategy();

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_RBAC_STRATEGY_H_
