// Authorizer: decides whether a request may proceed, as kube-apiserver's
// authorizer.Authorizer, from the request's attributes (who, which verb on
// which resource or path). Two implementations: AlwaysAllowAuthorizer
// (--authorization-mode=AlwaysAllow) and RbacAuthorizer (rbac_authorizer.h).
// Authorizers also list the rules a user holds (SelfSubjectRulesReview,
// escalation checks).
//
// Implementations are thread-safe.
#ifndef KCR_APISERVER_AUTH_AUTHORIZER_H_
#define KCR_APISERVER_AUTH_AUTHORIZER_H_

#include <string>
#include <vector>

#include "apiserver/auth/user_info.h"

namespace kcr {
namespace apiserver {
namespace auth {

// authorizer.Attributes: a resource request (verb on group/resource/
// subresource/name in a namespace) or a non-resource one (verb on a path).
struct Attributes {
  UserInfo user;
  std::string verb;  // get, list, watch, create, update, patch, delete, ...
  bool resource_request = true;
  std::string ns;
  std::string api_group;
  std::string api_version;
  std::string resource;
  std::string subresource;
  std::string name;
  std::string path;  // non-resource requests
};

struct Decision {
  bool allowed = false;
  // Why: "RBAC: allowed by ..." or, denied, what went wrong on the way.
  std::string reason;
};

// rbacv1.PolicyRule.
struct PolicyRule {
  std::vector<std::string> verbs;
  std::vector<std::string> api_groups;
  std::vector<std::string> resources;
  std::vector<std::string> resource_names;
  std::vector<std::string> non_resource_urls;
};

// The rules a user holds in a namespace, and whether the list may be
// incomplete (a binding named a missing role).
struct RuleSet {
  std::vector<PolicyRule> rules;
  bool incomplete = false;
  std::string evaluation_error;
};

class Authorizer {
 public:
  virtual ~Authorizer() = default;
  virtual Decision Authorize(const Attributes& attributes) const = 0;
  // Every rule `user` holds in `ns` ("" for the cluster-wide ones only).
  virtual RuleSet RulesFor(const UserInfo& user,
                           const std::string& ns) const = 0;
  // Whether this authorizer enforces anything (false: AlwaysAllow).
  virtual bool enforcing() const = 0;
};

// Allows every request; holds every rule.
class AlwaysAllowAuthorizer final : public Authorizer {
 public:
  Decision Authorize(const Attributes&) const override { return {true, ""}; }
  RuleSet RulesFor(const UserInfo&, const std::string&) const override {
    RuleSet s;
    s.rules.push_back({{"*"}, {"*"}, {"*"}, {}, {}});
    s.rules.push_back({{"*"}, {}, {}, {}, {"*"}});
    return s;
  }
  bool enforcing() const override { return false; }
};

// kube's forbiddenMessage: what a 403 says after "<resource> is forbidden:".
//   User "u" cannot get resource "pods" in API group "" in the namespace "ns"
//   User "u" cannot list resource "nodes" in API group "" at the cluster scope
//   User "u" cannot get path "/metrics"
std::string ForbiddenMessage(const Attributes& attributes);

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_AUTH_AUTHORIZER_H_
