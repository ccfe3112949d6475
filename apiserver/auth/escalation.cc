#include "apiserver/auth/escalation.h"

#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace auth {
namespace {

constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";

// kube's CompactRules: the atoms that differ only by verb, as one rule.
std::vector<PolicyRule> Compact(const std::vector<PolicyRule>& atoms) {
  using Key = std::tuple<std::vector<std::string>, std::vector<std::string>,
                         std::vector<std::string>, std::vector<std::string>>;
  std::map<Key, PolicyRule> merged;
  std::vector<Key> order;
  for (const PolicyRule& r : atoms) {
    Key k{r.api_groups, r.resources, r.resource_names, r.non_resource_urls};
    auto [it, inserted] = merged.try_emplace(k, r);
    if (inserted) {
      order.push_back(k);
      continue;
    }
    for (const std::string& v : r.verbs) {
      bool has = false;
      for (const std::string& w : it->second.verbs) has = has || w == v;
      if (!has) it->second.verbs.push_back(v);
    }
  }
  std::vector<PolicyRule> out;
  for (const Key& k : order) out.push_back(merged[k]);
  return out;
}

std::string GroupsString(const std::vector<std::string>& groups) {
  std::string out = "[";
  for (size_t i = 0; i < groups.size(); ++i) {
    CatAppend(&out, i > 0 ? " " : "", Quote(groups[i]));
  }
  return out + "]";
}

absl::Status Forbidden(const ResourceInfo& r, const std::string& name,
                       const std::string& why) {
  return api::StatusError::Forbidden(r.group_resource(), name, why).ToStatus();
}

// ConfirmNoEscalation proper: `user` holds every rule of `rules` in `ns`.
absl::Status Covered(const RbacAuthorizer& authorizer, const ResourceInfo& r,
                     const std::string& ns, const std::string& name,
                     const std::vector<PolicyRule>& rules,
                     const UserInfo& user) {
  RuleSet owner = authorizer.RulesFor(user, ns);
  std::vector<PolicyRule> missing = Uncovered(owner.rules, rules);
  if (missing.empty()) return absl::OkStatus();
  std::set<std::string> descriptions;
  for (const PolicyRule& m : Compact(missing))
    descriptions.insert(RuleString(m));
  std::string msg =
      Cat("user ", Quote(user.name), " (groups=", GroupsString(user.groups),
          ") is attempting to grant RBAC permissions not currently held:");
  for (const std::string& d : descriptions) {
    CatAppend(&msg, "\n", d);
  }
  if (!owner.evaluation_error.empty()) {
    CatAppend(&msg, "; resolution errors: [", owner.evaluation_error, "]");
  }
  return Forbidden(r, name, msg);
}

}  // namespace

bool IsRbacResource(const ResourceInfo& r) {
  return r.group() == kRbacGroup &&
         (r.resource() == "roles" || r.resource() == "clusterroles" ||
          r.resource() == "rolebindings" ||
          r.resource() == "clusterrolebindings");
}

absl::Status ConfirmNoEscalation(const RbacAuthorizer& authorizer,
                                 const ResourceInfo& r, const std::string& ns,
                                 const rapidjson::Value& object,
                                 const UserInfo& user) {
  if (user.InGroup(kSystemMasters)) return absl::OkStatus();
  const rapidjson::Value* metadata = Member(object, "metadata");
  const std::string name =
      metadata != nullptr ? json::StringMember(*metadata, "name") : "";
  const bool cluster = !r.namespaced();
  const std::string scope = cluster ? "" : ns;
  if (r.resource() == "roles" || r.resource() == "clusterroles") {
    Attributes escalate;
    escalate.user = user;
    escalate.verb = "escalate";
    escalate.api_group = kRbacGroup;
    escalate.resource = r.resource();
    escalate.name = name;
    escalate.ns = scope;
    if (authorizer.Authorize(escalate).allowed) return absl::OkStatus();
    // An aggregated ClusterRole's rules are the aggregation controller's
    // to write; using aggregationRule takes every permission.
    const rapidjson::Value* aggregation = Member(object, "aggregationRule");
    if (r.resource() == "clusterroles" && aggregation != nullptr &&
        aggregation->IsObject()) {
      const std::vector<PolicyRule> full = {{{"*"}, {"*"}, {"*"}, {}, {}},
                                            {{"*"}, {}, {}, {}, {"*"}}};
      if (!Covered(authorizer, r, "", name, full, user).ok()) {
        return Forbidden(
            r, name,
            "must have cluster-admin privileges to use the aggregationRule");
      }
      return absl::OkStatus();
    }
    return Covered(authorizer, r, scope, name, RulesOf(object), user);
  }
  const rapidjson::Value* ref = Member(object, "roleRef");
  if (ref == nullptr || !ref->IsObject()) return absl::OkStatus();
  const std::string kind = json::StringMember(*ref, "kind");
  const std::string role = json::StringMember(*ref, "name");
  Attributes bind;
  bind.user = user;
  bind.verb = "bind";
  bind.api_group = kRbacGroup;
  bind.resource = kind == "ClusterRole" ? "clusterroles" : "roles";
  bind.name = role;
  bind.ns = scope;
  if (authorizer.Authorize(bind).allowed) return absl::OkStatus();
  std::vector<PolicyRule> rules;
  absl::Status s = authorizer.RoleRules(kind, scope, role, &rules);
  if (!s.ok()) return Forbidden(r, name, std::string(s.message()));
  return Covered(authorizer, r, scope, name, rules, user);
}

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr
