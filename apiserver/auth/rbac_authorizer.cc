#include "apiserver/auth/rbac_authorizer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"
#include "base/string_view.h"

namespace kcr {
namespace apiserver {
namespace auth {
namespace {

constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";

const rapidjson::Value* Get(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(key);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

std::string StringOf(const rapidjson::Value& v, const char* key) {
  const rapidjson::Value* m = Get(v, key);
  return m != nullptr && m->IsString()
             ? std::string(m->GetString(), m->GetStringLength())
             : std::string();
}

std::vector<std::string> StringsOf(const rapidjson::Value& v, const char* key) {
  std::vector<std::string> out;
  const rapidjson::Value* m = Get(v, key);
  if (m == nullptr || !m->IsArray()) return out;
  for (const auto& e : m->GetArray()) {
    if (e.IsString()) out.emplace_back(e.GetString(), e.GetStringLength());
  }
  return out;
}

bool Has(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

bool VerbMatches(const PolicyRule& r, const std::string& verb) {
  return Has(r.verbs, "*") || Has(r.verbs, verb);
}

bool ApiGroupMatches(const PolicyRule& r, const std::string& group) {
  return Has(r.api_groups, "*") || Has(r.api_groups, group);
}

bool ResourceMatches(const PolicyRule& r, const std::string& combined,
                     const std::string& subresource) {
  for (const std::string& rr : r.resources) {
    if (rr == "*" || rr == combined) return true;
    if (subresource.empty()) continue;
    if (rr.size() == subresource.size() + 2 && absl::StartsWith(rr, "*/") &&
        absl::EndsWith(rr, subresource)) {
      return true;
    }
  }
  return false;
}

bool ResourceNameMatches(const PolicyRule& r, const std::string& name) {
  return r.resource_names.empty() || Has(r.resource_names, name);
}

bool NonResourceUrlMatches(const PolicyRule& r, const std::string& path) {
  for (const std::string& u : r.non_resource_urls) {
    if (u == "*" || u == path) return true;
    if (!u.empty() && u.back() == '*' &&
        absl::StartsWith(path, u.substr(0, u.size() - 1))) {
      return true;
    }
  }
  return false;
}

// Index values of a binding's subjects: "<ns>/User:<name>" for a
// RoleBinding, "/Group:<name>" for a ClusterRoleBinding; a ServiceAccount
// is filed as its user name.
void SubjectValues(const api::Object& o, std::vector<std::string>* values) {
  const std::string_view kind = o.kind();
  if ((kind != "RoleBinding" && kind != "ClusterRoleBinding") ||
      !absl::StartsWith(ToAbsl(o.api_version()), kRbacGroup)) {
    return;
  }
  const std::string ns(o.namespace_());
  const rapidjson::Value* subjects = Get(o.json(), "subjects");
  if (subjects == nullptr || !subjects->IsArray()) return;
  for (const auto& s : subjects->GetArray()) {
    const std::string skind = StringOf(s, "kind");
    const std::string name = StringOf(s, "name");
    if (skind == "User" || skind == "Group") {
      values->push_back(Cat(ns, "/", skind, ":", name));
    } else if (skind == "ServiceAccount") {
      std::string sns = StringOf(s, "namespace");
      if (sns.empty()) sns = ns;
      values->push_back(Cat(ns, "/User:", ServiceAccountUserName(sns, name)));
    }
  }
}

// kube's describeSubject for the subject of `binding` that names `user`.
std::string DescribeSubject(const rapidjson::Value& binding,
                            const std::string& binding_ns,
                            const UserInfo& user) {
  const rapidjson::Value* subjects = Get(binding, "subjects");
  if (subjects != nullptr && subjects->IsArray()) {
    for (const auto& s : subjects->GetArray()) {
      const std::string kind = StringOf(s, "kind");
      const std::string name = StringOf(s, "name");
      if (kind == "User" && name == user.name) {
        return Cat("User ", Quote(name));
      }
      if (kind == "Group" && user.InGroup(name)) {
        return Cat("Group ", Quote(name));
      }
      if (kind == "ServiceAccount") {
        std::string sns = StringOf(s, "namespace");
        if (sns.empty()) sns = binding_ns;
        if (ServiceAccountUserName(sns, name) == user.name) {
          return Cat("ServiceAccount ", Quote(Cat(name, "/", sns)));
        }
      }
    }
  }
  return Cat("User ", Quote(user.name));
}

void AppendQuoted(std::string* out, const char* label,
                  const std::vector<std::string>& list) {
  CatAppend(out, label, ":[");
  for (size_t i = 0; i < list.size(); ++i) {
    CatAppend(out, i > 0 ? " " : "", Quote(list[i]));
  }
  out->push_back(']');
}

}  // namespace

std::vector<PolicyRule> RulesOf(const rapidjson::Value& role) {
  std::vector<PolicyRule> rules;
  const rapidjson::Value* list = Get(role, "rules");
  if (list == nullptr || !list->IsArray()) return rules;
  for (const auto& r : list->GetArray()) {
    PolicyRule rule;
    rule.verbs = StringsOf(r, "verbs");
    rule.api_groups = StringsOf(r, "apiGroups");
    rule.resources = StringsOf(r, "resources");
    rule.resource_names = StringsOf(r, "resourceNames");
    rule.non_resource_urls = StringsOf(r, "nonResourceURLs");
    rules.push_back(std::move(rule));
  }
  return rules;
}

bool RuleAllows(const Attributes& a, const PolicyRule& rule) {
  if (a.resource_request) {
    std::string combined = a.resource;
    if (!a.subresource.empty()) CatAppend(&combined, "/", a.subresource);
    return VerbMatches(rule, a.verb) && ApiGroupMatches(rule, a.api_group) &&
           ResourceMatches(rule, combined, a.subresource) &&
           ResourceNameMatches(rule, a.name);
  }
  return VerbMatches(rule, a.verb) && NonResourceUrlMatches(rule, a.path);
}

std::string RuleString(const PolicyRule& r) {
  std::string out = "{";
  bool first = true;
  auto field = [&](const char* label, const std::vector<std::string>& list) {
    if (list.empty()) return;
    if (!first) out += ", ";
    first = false;
    AppendQuoted(&out, label, list);
  };
  field("APIGroups", r.api_groups);
  field("Resources", r.resources);
  field("ResourceNames", r.resource_names);
  field("NonResourceURLs", r.non_resource_urls);
  field("Verbs", r.verbs);
  out += "}";
  return out;
}

std::vector<PolicyRule> Uncovered(const std::vector<PolicyRule>& owner,
                                  const std::vector<PolicyRule>& requested) {
  // kube's BreakdownRule and ruleCovers: one verb, group, resource (or
  // URL) and name at a time; "*" in the request needs "*" in the owner.
  auto has_all = [](const std::vector<std::string>& set, const std::string& s) {
    return Has(set, "*") || Has(set, s);
  };
  auto resource_covers = [](const std::vector<std::string>& set,
                            const std::string& s) {
    if (Has(set, "*") || Has(set, s)) return true;
    const size_t slash = s.find('/');
    if (slash == std::string::npos) return false;
    return Has(set, Cat(s.substr(0, slash), "/*")) ||
           Has(set, Cat("*", s.substr(slash)));
  };
  auto url_covers = [](const std::vector<std::string>& set,
                       const std::string& s) {
    for (const std::string& u : set) {
      if (u == s || u == "*") return true;
      if (!u.empty() && u.back() == '*' &&
          absl::StartsWith(s, u.substr(0, u.size() - 1))) {
        return true;
      }
    }
    return false;
  };
  std::vector<PolicyRule> missing;
  for (const PolicyRule& req : requested) {
    std::vector<PolicyRule> atoms;
    for (const std::string& verb : req.verbs) {
      for (const std::string& group : req.api_groups) {
        for (const std::string& resource : req.resources) {
          if (req.resource_names.empty()) {
            atoms.push_back({{verb}, {group}, {resource}, {}, {}});
          }
          for (const std::string& name : req.resource_names) {
            atoms.push_back({{verb}, {group}, {resource}, {name}, {}});
          }
        }
      }
      for (const std::string& url : req.non_resource_urls) {
        atoms.push_back({{verb}, {}, {}, {}, {url}});
      }
    }
    for (const PolicyRule& atom : atoms) {
      bool covered = false;
      for (const PolicyRule& o : owner) {
        if (!has_all(o.verbs, atom.verbs[0])) continue;
        if (!atom.non_resource_urls.empty()) {
          if (url_covers(o.non_resource_urls, atom.non_resource_urls[0])) {
            covered = true;
            break;
          }
          continue;
        }
        if (!has_all(o.api_groups, atom.api_groups[0]) ||
            !resource_covers(o.resources, atom.resources[0])) {
          continue;
        }
        if (!o.resource_names.empty() &&
            (atom.resource_names.empty() ||
             !Has(o.resource_names, atom.resource_names[0]))) {
          continue;
        }
        covered = true;
        break;
      }
      if (!covered) missing.push_back(atom);
    }
  }
  return missing;
}

std::string ForbiddenMessage(const Attributes& a) {
  if (!a.resource_request) {
    return Cat("User ", Quote(a.user.name), " cannot ", a.verb, " path ",
               Quote(a.path));
  }
  std::string resource = a.resource;
  if (!a.subresource.empty()) CatAppend(&resource, "/", a.subresource);
  std::string out =
      Cat("User ", Quote(a.user.name), " cannot ", a.verb, " resource ",
          Quote(resource), " in API group ", Quote(a.api_group));
  if (!a.ns.empty()) {
    CatAppend(&out, " in the namespace ", Quote(a.ns));
  } else {
    out += " at the cluster scope";
  }
  return out;
}

RbacAuthorizer::RbacAuthorizer(Storage* storage, ResourceRegistry* resources)
    : storage_(storage),
      roles_(resources->Lookup(kRbacGroup, "v1", "roles")->StorageKey()),
      cluster_roles_(
          resources->Lookup(kRbacGroup, "v1", "clusterroles")->StorageKey()),
      role_bindings_(
          resources->Lookup(kRbacGroup, "v1", "rolebindings")->StorageKey()),
      cluster_role_bindings_(
          resources->Lookup(kRbacGroup, "v1", "clusterrolebindings")
              ->StorageKey()) {
  // A second authorizer on the same storage finds the index there already.
  storage_->AddIndex(kBindingSubjectIndex, SubjectValues);
}

absl::Status RbacAuthorizer::RoleRules(const std::string& kind,
                                       const std::string& ns,
                                       const std::string& name,
                                       std::vector<PolicyRule>* rules) const {
  absl::StatusOr<Rules> cached = CachedRoleRules(kind, ns, name);
  if (!cached.ok()) return cached.status();
  *rules = **cached;
  return absl::OkStatus();
}

absl::StatusOr<RbacAuthorizer::Rules> RbacAuthorizer::CachedRoleRules(
    const std::string& kind, const std::string& ns,
    const std::string& name) const {
  const bool cluster = kind == "ClusterRole";
  api::ObjectPtr role = cluster ? storage_->Get(cluster_roles_, "", name)
                                : storage_->Get(roles_, ns, name);
  if (role == nullptr) {
    return absl::NotFoundError(
        cluster ? Cat("clusterrole.rbac.authorization.k8s.io ", Quote(name),
                      " not found")
                : Cat("role.rbac.authorization.k8s.io ", Quote(name),
                      " not found"));
  }
  const std::string key =
      Cat(cluster ? "c/" : "r/", cluster ? "" : ns, "/", name);
  {
    MutexLock l(&mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second.uid == role->uid() &&
        it->second.resource_version == role->resource_version()) {
      return it->second.rules;
    }
  }
  Rules rules =
      std::make_shared<const std::vector<PolicyRule>>(RulesOf(role->json()));
  MutexLock l(&mu_);
  // Roles are few; a bound keeps a churn of short-lived ones from growing
  // the cache without end.
  if (cache_.size() >= 10000) cache_.clear();
  cache_[key] = CachedRules{std::string(role->uid()),
                            std::string(role->resource_version()), rules};
  return rules;
}

void RbacAuthorizer::VisitRules(
    const UserInfo& user, const std::string& ns,
    const std::function<bool(const std::function<std::string()>&,
                             const PolicyRule&)>& visit,
    std::vector<std::string>* errors) const {
  std::vector<std::string> subjects;
  subjects.push_back(Cat("User:", user.name));
  for (const std::string& g : user.groups) subjects.push_back(Cat("Group:", g));
  // A binding naming the user twice is visited once.
  std::vector<std::string> seen;
  auto visit_binding = [&](const api::Object& b, bool cluster) {
    const std::string key = Cat(b.namespace_(), "/", b.name());
    if (Has(seen, key)) return true;
    seen.push_back(key);
    const rapidjson::Value* ref = Get(b.json(), "roleRef");
    if (ref == nullptr) return true;
    const std::string kind = StringOf(*ref, "kind");
    const std::string name = StringOf(*ref, "name");
    const std::string bns(b.namespace_());
    absl::StatusOr<Rules> rules = CachedRoleRules(kind, bns, name);
    if (!rules.ok()) {
      errors->emplace_back(rules.status().message());
      return true;
    }
    // Described only when a rule allows the request (kube's reason).
    const std::function<std::string()> source = [&] {
      return cluster ? Cat("ClusterRoleBinding ", Quote(b.name()), " of ", kind,
                           " ", Quote(name), " to ",
                           DescribeSubject(b.json(), bns, user))
                     : Cat("RoleBinding ", Quote(Cat(b.name(), "/", bns)),
                           " of ", kind, " ", Quote(name), " to ",
                           DescribeSubject(b.json(), bns, user));
    };
    for (const PolicyRule& r : **rules) {
      if (!visit(source, r)) return false;
    }
    return true;
  };
  for (const std::string& subject : subjects) {
    for (const api::ObjectPtr& b : storage_->ByIndex(
             cluster_role_bindings_, kBindingSubjectIndex, Cat("/", subject))) {
      if (!visit_binding(*b, true)) return;
    }
  }
  if (ns.empty()) return;
  for (const std::string& subject : subjects) {
    for (const api::ObjectPtr& b : storage_->ByIndex(
             role_bindings_, kBindingSubjectIndex, Cat(ns, "/", subject))) {
      if (!visit_binding(*b, false)) return;
    }
  }
}

Decision RbacAuthorizer::Authorize(const Attributes& a) const {
  if (a.user.InGroup(kSystemMasters)) return {true, ""};
  Decision d;
  std::vector<std::string> errors;
  VisitRules(
      a.user, a.ns,
      [&](const std::function<std::string()>& source, const PolicyRule& rule) {
        if (!RuleAllows(a, rule)) return true;
        d.allowed = true;
        d.reason = Cat("RBAC: allowed by ", source());
        return false;
      },
      &errors);
  if (!d.allowed && !errors.empty()) {
    d.reason = "RBAC: ";
    if (errors.size() > 1) d.reason += "[";
    for (size_t i = 0; i < errors.size(); ++i) {
      CatAppend(&d.reason, i > 0 ? ", " : "", errors[i]);
    }
    if (errors.size() > 1) d.reason += "]";
  }
  return d;
}

RuleSet RbacAuthorizer::RulesFor(const UserInfo& user,
                                 const std::string& ns) const {
  RuleSet set;
  std::vector<std::string> errors;
  VisitRules(
      user, ns,
      [&](const std::function<std::string()>&, const PolicyRule& rule) {
        set.rules.push_back(rule);
        return true;
      },
      &errors);
  if (!errors.empty()) {
    set.incomplete = true;
    for (size_t i = 0; i < errors.size(); ++i) {
      CatAppend(&set.evaluation_error, i > 0 ? ", " : "", errors[i]);
    }
  }
  return set;
}

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr
