// The default ClusterRoles and ClusterRoleBindings of a fresh cluster, as
// kube-apiserver's bootstrap policy (plugin/pkg/auth/authorizer/rbac/
// bootstrappolicy) writes them: cluster-admin (bound to system:masters),
// admin, edit and view (aggregated from the system:aggregate-to-* roles
// and any ClusterRole with their aggregation labels), system:basic-user,
// system:discovery, system:public-info-viewer, system:auth-delegator and
// system:service-account-issuer-discovery with their bindings.
#ifndef KCR_APISERVER_AUTH_BOOTSTRAP_POLICY_H_
#define KCR_APISERVER_AUTH_BOOTSTRAP_POLICY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "apiserver/registry/registry.h"

namespace kcr {
namespace apiserver {
namespace auth {

// The objects, as JSON: ClusterRoles first, then ClusterRoleBindings.
const std::vector<std::string>& BootstrapPolicyObjects();

// Creates each object that does not exist yet (an existing one is kept as
// it is, as kube keeps an object whose autoupdate annotation is false).
absl::Status EnsureBootstrapPolicy(Registry* registry);

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_AUTH_BOOTSTRAP_POLICY_H_
