// RbacAuthorizer: kube-apiserver's RBAC authorizer over the Roles,
// ClusterRoles, RoleBindings and ClusterRoleBindings in Storage. A request
// is allowed when a rule of a role bound to the user (by name, by one of
// its groups, or as a ServiceAccount) allows it: ClusterRoleBindings apply
// everywhere, RoleBindings in their namespace. Members of system:masters
// are always allowed, as kube's privileged-group authorizer does.
//
// Rule semantics are rbacv1helpers': verbs and apiGroups with "*",
// resources with "*", "<resource>/<subresource>" and "*/<subresource>",
// resourceNames (empty: any), nonResourceURLs with a trailing "*".
//
// Cost per request: the bindings naming the user or one of its groups,
// found through a storage index by subject (never a scan of every
// binding), and their roles' rules, parsed once per role resourceVersion.
//
// Thread-safe.
#ifndef KCR_APISERVER_AUTH_RBAC_AUTHORIZER_H_
#define KCR_APISERVER_AUTH_RBAC_AUTHORIZER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "apiserver/auth/authorizer.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "base/mutex.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace auth {

// The name of the storage index of bindings by subject.
inline constexpr char kBindingSubjectIndex[] = "rbac-binding-subject";

// The rules of a Role or ClusterRole's JSON ("rules").
std::vector<PolicyRule> RulesOf(const rapidjson::Value& role);

// rbac.RuleAllows.
bool RuleAllows(const Attributes& attributes, const PolicyRule& rule);

// Whether `owner` holds every permission of `requested` (kube's
// validation.Covers): the rules of `requested` that no rule of `owner`
// covers, each broken down to one verb, group, resource (or URL) and name.
std::vector<PolicyRule> Uncovered(const std::vector<PolicyRule>& owner,
                                  const std::vector<PolicyRule>& requested);

// kube's rule string: {APIGroups:[""], Resources:["pods"], Verbs:["get"]}
std::string RuleString(const PolicyRule& rule);

class RbacAuthorizer final : public Authorizer {
 public:
  // Adds the subject index to `storage`; both must outlive this.
  RbacAuthorizer(Storage* storage, ResourceRegistry* resources);

  Decision Authorize(const Attributes& attributes) const override;
  RuleSet RulesFor(const UserInfo& user, const std::string& ns) const override;
  bool enforcing() const override { return true; }

  // The rules of the role `kind` ("Role" or "ClusterRole") `name` refers to
  // from namespace `ns`; NotFound when missing.
  absl::Status RoleRules(const std::string& kind, const std::string& ns,
                         const std::string& name,
                         std::vector<PolicyRule>* rules) const;

 private:
  using Rules = std::shared_ptr<const std::vector<PolicyRule>>;
  // RoleRules without the copy: the cached parse of the role's rules.
  absl::StatusOr<Rules> CachedRoleRules(const std::string& kind,
                                        const std::string& ns,
                                        const std::string& name) const;

  // Calls `visit(source, rule)` for every rule of every binding of `user`
  // that applies in `ns`, until it returns false; `source()` describes the
  // binding as kube's reasons do. `errors` gets what could not be
  // resolved.
  void VisitRules(
      const UserInfo& user, const std::string& ns,
      const std::function<bool(const std::function<std::string()>& source,
                               const PolicyRule& rule)>& visit,
      std::vector<std::string>* errors) const;

  Storage* const storage_;
  const std::string roles_;
  const std::string cluster_roles_;
  const std::string role_bindings_;
  const std::string cluster_role_bindings_;

  // Parsed rules by "<kind>/<ns>/<name>", valid for the role's uid and
  // resourceVersion; cleared whole when it grows past a bound.
  struct CachedRules {
    std::string uid;
    std::string resource_version;
    Rules rules;
  };
  mutable Mutex mu_;
  mutable std::map<std::string, CachedRules> cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_AUTH_RBAC_AUTHORIZER_H_
