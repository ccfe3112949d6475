#include "apiserver/auth/bootstrap_policy.h"

#include <utility>

#include "api/json/json_util.h"
#include "api/object_builder.h"
#include "base/status_macros.h"
#include "base/str_cat.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace auth {
namespace {

constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";

std::string Meta(const std::string& name, const std::string& extra_labels) {
  return Cat(
      R"("metadata":{"name":")", name,
      R"(","labels":{"kubernetes.io/bootstrapping":"rbac-defaults")",
      extra_labels,
      R"(},"annotations":{"rbac.authorization.kubernetes.io/autoupdate":"true"}})");
}

std::string Role(const std::string& name, const std::string& rules,
                 const std::string& extra_labels = "") {
  return Cat(
      R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",)",
      Meta(name, extra_labels), R"(,"rules":[)", rules, "]}");
}

std::string Aggregated(const std::string& name, const std::string& label,
                       const std::string& extra_labels = "") {
  return Cat(
      R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",)",
      Meta(name, extra_labels),
      R"(,"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{")", label,
      R"(":"true"}}]},"rules":[]})");
}

std::string Binding(const std::string& name, const std::string& role,
                    const std::vector<std::string>& groups) {
  std::string subjects;
  for (const std::string& g : groups) {
    CatAppend(
        &subjects, subjects.empty() ? "" : ",",
        R"({"apiGroup":"rbac.authorization.k8s.io","kind":"Group","name":")", g,
        R"("})");
  }
  return Cat(
      R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding",)",
      Meta(name, ""),
      R"(,"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":")",
      role, R"("},"subjects":[)", subjects, "]}");
}

std::string Rule(const std::string& groups, const std::string& resources,
                 const std::string& verbs) {
  return Cat(R"({"apiGroups":[)", groups, R"(],"resources":[)", resources,
             R"(],"verbs":[)", verbs, "]}");
}

std::string Urls(const std::string& urls, const std::string& verbs) {
  return Cat(R"({"nonResourceURLs":[)", urls, R"(],"verbs":[)", verbs, "]}");
}

constexpr char kRead[] = R"("get","list","watch")";
constexpr char kWrite[] =
    R"("create","delete","deletecollection","patch","update")";

}  // namespace

const std::vector<std::string>& BootstrapPolicyObjects() {
  static const std::vector<std::string>* objects = [] {
    auto* o = new std::vector<std::string>;
    o->push_back(Role("cluster-admin", Cat(Rule(R"("*")", R"("*")", R"("*")"),
                                           ",", Urls(R"("*")", R"("*")"))));
    o->push_back(
        Aggregated("admin", "rbac.authorization.k8s.io/aggregate-to-admin"));
    o->push_back(Aggregated(
        "edit", "rbac.authorization.k8s.io/aggregate-to-edit",
        R"(,"rbac.authorization.k8s.io/aggregate-to-admin":"true")"));
    o->push_back(
        Aggregated("view", "rbac.authorization.k8s.io/aggregate-to-view",
                   R"(,"rbac.authorization.k8s.io/aggregate-to-edit":"true")"));
    o->push_back(
        Role("system:aggregate-to-admin",
             Cat(Rule(R"("authorization.k8s.io")",
                      R"("localsubjectaccessreviews")", R"("create")"),
                 ",",
                 Rule(R"("rbac.authorization.k8s.io")",
                      R"("rolebindings","roles")", Cat(kWrite, ",", kRead))),
             R"(,"rbac.authorization.k8s.io/aggregate-to-admin":"true")"));
    o->push_back(Role(
        "system:aggregate-to-edit",
        Cat(Rule(
                R"("")",
                R"("pods/attach","pods/exec","pods/portforward","pods/proxy","secrets","services/proxy")",
                kRead),
            ",", Rule(R"("")", R"("serviceaccounts")", R"("impersonate")"), ",",
            Rule(
                R"("")",
                R"("pods","pods/attach","pods/exec","pods/portforward","pods/proxy")",
                kWrite),
            ",", Rule(R"("")", R"("pods/eviction")", R"("create")"), ",",
            Rule(
                R"("")",
                R"("configmaps","events","persistentvolumeclaims","replicationcontrollers","replicationcontrollers/scale","secrets","serviceaccounts","services","services/proxy")",
                kWrite),
            ",", Rule(R"("")", R"("serviceaccounts/token")", R"("create")"),
            ",",
            Rule(
                R"("apps")",
                R"("daemonsets","deployments","deployments/rollback","deployments/scale","replicasets","replicasets/scale","statefulsets","statefulsets/scale")",
                kWrite),
            ",",
            Rule(R"("autoscaling")", R"("horizontalpodautoscalers")", kWrite),
            ",", Rule(R"("batch")", R"("cronjobs","jobs")", kWrite), ",",
            Rule(R"("networking.k8s.io")", R"("ingresses","networkpolicies")",
                 kWrite),
            ",", Rule(R"("policy")", R"("poddisruptionbudgets")", kWrite), ",",
            Rule(R"("coordination.k8s.io")", R"("leases")",
                 Cat(kWrite, ",", kRead))),
        R"(,"rbac.authorization.k8s.io/aggregate-to-edit":"true")"));
    o->push_back(Role(
        "system:aggregate-to-view",
        Cat(Rule(
                R"("")",
                R"("configmaps","endpoints","persistentvolumeclaims","persistentvolumeclaims/status","pods","replicationcontrollers","replicationcontrollers/scale","serviceaccounts","services","services/status")",
                kRead),
            ",",
            Rule(
                R"("")",
                R"("bindings","events","limitranges","namespaces/status","pods/log","pods/status","replicationcontrollers/status","resourcequotas","resourcequotas/status")",
                kRead),
            ",", Rule(R"("")", R"("namespaces")", kRead), ",",
            Rule(R"("discovery.k8s.io")", R"("endpointslices")", kRead), ",",
            Rule(
                R"("apps")",
                R"("controllerrevisions","daemonsets","daemonsets/status","deployments","deployments/scale","deployments/status","replicasets","replicasets/scale","replicasets/status","statefulsets","statefulsets/scale","statefulsets/status")",
                kRead),
            ",",
            Rule(
                R"("autoscaling")",
                R"("horizontalpodautoscalers","horizontalpodautoscalers/status")",
                kRead),
            ",",
            Rule(R"("batch")",
                 R"("cronjobs","cronjobs/status","jobs","jobs/status")", kRead),
            ",",
            Rule(R"("policy")",
                 R"("poddisruptionbudgets","poddisruptionbudgets/status")",
                 kRead),
            ",",
            Rule(R"("networking.k8s.io")",
                 R"("ingresses","ingresses/status","networkpolicies")", kRead)),
        R"(,"rbac.authorization.k8s.io/aggregate-to-view":"true")"));
    o->push_back(
        Role("system:basic-user",
             Cat(Rule(R"("authorization.k8s.io")",
                      R"("selfsubjectaccessreviews","selfsubjectrulesreviews")",
                      R"("create")"),
                 ",",
                 Rule(R"("authentication.k8s.io")", R"("selfsubjectreviews")",
                      R"("create")"))));
    o->push_back(Role(
        "system:discovery",
        Urls(
            R"("/api","/api/*","/apis","/apis/*","/healthz","/livez","/openapi","/openapi/*","/readyz","/version","/version/")",
            R"("get")")));
    o->push_back(
        Role("system:public-info-viewer",
             Urls(R"("/healthz","/livez","/readyz","/version","/version/")",
                  R"("get")")));
    o->push_back(Role("system:auth-delegator",
                      Cat(Rule(R"("authentication.k8s.io")",
                               R"("tokenreviews")", R"("create")"),
                          ",",
                          Rule(R"("authorization.k8s.io")",
                               R"("subjectaccessreviews")", R"("create")"))));
    o->push_back(Role(
        "system:service-account-issuer-discovery",
        Urls(
            R"("/.well-known/openid-configuration","/.well-known/openid-configuration/","/openid/v1/jwks","/openid/v1/jwks/")",
            R"("get")")));
    o->push_back(Binding("cluster-admin", "cluster-admin", {"system:masters"}));
    o->push_back(Binding("system:basic-user", "system:basic-user",
                         {"system:authenticated"}));
    o->push_back(Binding("system:discovery", "system:discovery",
                         {"system:authenticated"}));
    o->push_back(Binding("system:public-info-viewer",
                         "system:public-info-viewer",
                         {"system:authenticated", "system:unauthenticated"}));
    o->push_back(Binding("system:service-account-issuer-discovery",
                         "system:service-account-issuer-discovery",
                         {"system:serviceaccounts"}));
    return o;
  }();
  return *objects;
}

absl::Status EnsureBootstrapPolicy(Registry* registry) {
  ResourceRegistry* resources = registry->resources();
  for (const std::string& text : BootstrapPolicyObjects()) {
    rapidjson::Document doc;
    KCR_RETURN_IF_ERROR(json::ParseJson(text, &doc));
    api::ObjectBuilder b;
    b.json().CopyFrom(doc, b.allocator());
    const std::string kind = json::StringMember(b.json(), "kind");
    ResourceInfoPtr r = resources->Lookup(
        kRbacGroup, "v1",
        kind == "ClusterRole" ? "clusterroles" : "clusterrolebindings");
    const std::string name = json::StringMember(doc["metadata"], "name");
    if (registry->storage()->Get(r->StorageKey(), "", name) != nullptr) {
      continue;
    }
    auto created = registry->Create(*r, "", std::move(b));
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) {
      return created.status();
    }
  }
  return absl::OkStatus();
}

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr
