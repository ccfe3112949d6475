// RbacAuthorizer over a Registry: rule matching (verbs, groups, resources
// with subresources and "*", resourceNames, nonResourceURLs), bindings by
// user, group and ServiceAccount, RoleBindings only in their namespace,
// system:masters, the default cluster roles, kube's 403 message, the
// reasons reviews carry, the rules a user holds, and escalation checks.
#include "apiserver/auth/rbac_authorizer.h"

#include <string>
#include <vector>

#include "apiserver/auth/bootstrap_policy.h"
#include "apiserver/auth/escalation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/apiserver/registry_fixture.h"

namespace kcr::apiserver::auth {
namespace {

using ::testing::HasSubstr;

class RbacAuthorizerTest : public RegistryFixture {
 protected:
  void SetUp() override {
    RegistryFixture::SetUp();
    for (const char* ns : {"ns1", "ns2"}) {
      auto w = registry_.Create(
          *Resource("", "v1", "namespaces"), "",
          FromJson(std::string(R"({"apiVersion":"v1","kind":"Namespace",)") +
                   R"("metadata":{"name":")" + ns + R"("}})"));
      ASSERT_TRUE(w.ok()) << w.status();
    }
    authorizer_ = std::make_unique<RbacAuthorizer>(&storage_, &resources_);
  }

  void Create(const std::string& plural, const std::string& ns,
              const std::string& json) {
    auto w =
        registry_.Create(*Resource("rbac.authorization.k8s.io", "v1", plural),
                         ns, FromJson(json));
    ASSERT_TRUE(w.ok()) << w.status();
  }

  void Role(const std::string& ns, const std::string& name,
            const std::string& rules) {
    Create("roles", ns,
           R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role",)"
           R"("metadata":{"name":")" +
               name + R"("},"rules":)" + rules + "}");
  }
  void ClusterRole(const std::string& name, const std::string& rules) {
    Create(
        "clusterroles", "",
        R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",)"
        R"("metadata":{"name":")" +
            name + R"("},"rules":)" + rules + "}");
  }
  void Binding(const std::string& ns, const std::string& name,
               const std::string& role_kind, const std::string& role,
               const std::string& subjects) {
    const bool cluster = ns.empty();
    Create(
        cluster ? "clusterrolebindings" : "rolebindings", ns,
        std::string(
            R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":")") +
            (cluster ? "ClusterRoleBinding" : "RoleBinding") +
            R"(","metadata":{"name":")" + name +
            R"("},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":")" +
            role_kind + R"(","name":")" + role + R"("},"subjects":)" +
            subjects + "}");
  }

  static Attributes Resource(const UserInfo& user, const std::string& verb,
                             const std::string& group,
                             const std::string& resource,
                             const std::string& ns = "",
                             const std::string& name = "",
                             const std::string& sub = "") {
    Attributes a;
    a.user = user;
    a.verb = verb;
    a.api_group = group;
    a.resource = resource;
    a.ns = ns;
    a.name = name;
    a.subresource = sub;
    return a;
  }
  using RegistryFixture::Resource;

  static Attributes Path(const UserInfo& user, const std::string& verb,
                         const std::string& path) {
    Attributes a;
    a.user = user;
    a.verb = verb;
    a.resource_request = false;
    a.path = path;
    return a;
  }

  bool Allowed(const Attributes& a) {
    return authorizer_->Authorize(a).allowed;
  }

  const UserInfo alice_{"alice", "1", {"devs", kAllAuthenticated}, {}};
  std::unique_ptr<RbacAuthorizer> authorizer_;
};

TEST_F(RbacAuthorizerTest, NothingIsAllowedWithoutABinding) {
  EXPECT_FALSE(Allowed(Resource(alice_, "get", "", "pods", "default", "p")));
  EXPECT_FALSE(Allowed(Path(alice_, "get", "/healthz")));
  Decision d =
      authorizer_->Authorize(Resource(alice_, "list", "", "pods", "ns"));
  EXPECT_EQ(d.reason, "");
}

TEST_F(RbacAuthorizerTest, RoleBindingAppliesInItsNamespaceOnly) {
  Role("ns1", "reader",
       R"([{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}])");
  Binding(
      "ns1", "read", "Role", "reader",
      R"([{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"}])");
  EXPECT_TRUE(Allowed(Resource(alice_, "get", "", "pods", "ns1", "p")));
  EXPECT_TRUE(Allowed(Resource(alice_, "list", "", "pods", "ns1")));
  EXPECT_FALSE(Allowed(Resource(alice_, "watch", "", "pods", "ns1")));
  EXPECT_FALSE(Allowed(Resource(alice_, "get", "", "pods", "ns2", "p")));
  EXPECT_FALSE(Allowed(Resource(alice_, "list", "", "pods")));
  EXPECT_FALSE(Allowed(Resource(alice_, "get", "apps", "pods", "ns1", "p")));
  // A subresource is its own resource.
  EXPECT_FALSE(Allowed(Resource(alice_, "get", "", "pods", "ns1", "p", "log")));
  Decision d =
      authorizer_->Authorize(Resource(alice_, "get", "", "pods", "ns1"));
  EXPECT_EQ(
      d.reason,
      R"(RBAC: allowed by RoleBinding "read/ns1" of Role "reader" to User "alice")");
}

TEST_F(RbacAuthorizerTest, RoleChangesTakeEffectAtOnce) {
  Role("ns1", "r",
       R"([{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}])");
  Binding(
      "ns1", "b", "Role", "r",
      R"([{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"}])");
  EXPECT_TRUE(Allowed(Resource(alice_, "get", "", "pods", "ns1", "p")));
  EXPECT_FALSE(Allowed(Resource(alice_, "get", "", "secrets", "ns1", "s")));
  ResourceInfoPtr roles = Resource("rbac.authorization.k8s.io", "v1", "roles");
  auto w = registry_.Update(
      *roles, "ns1", "r",
      FromJson(
          R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role",)"
          R"("metadata":{"name":"r","namespace":"ns1"},)"
          R"("rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}]})"));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_FALSE(Allowed(Resource(alice_, "get", "", "pods", "ns1", "p")));
  EXPECT_TRUE(Allowed(Resource(alice_, "get", "", "secrets", "ns1", "s")));
  ASSERT_TRUE(registry_.Delete(*roles, "ns1", "r", {}).ok());
  EXPECT_FALSE(Allowed(Resource(alice_, "get", "", "secrets", "ns1", "s")));
  Role("ns1", "r",
       R"([{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}])");
  EXPECT_TRUE(Allowed(Resource(alice_, "get", "", "pods", "ns1", "p")));
  EXPECT_FALSE(Allowed(Resource(alice_, "get", "", "secrets", "ns1", "s")));
  // Bindings too.
  ResourceInfoPtr bindings =
      Resource("rbac.authorization.k8s.io", "v1", "rolebindings");
  ASSERT_TRUE(registry_.Delete(*bindings, "ns1", "b", {}).ok());
  EXPECT_FALSE(Allowed(Resource(alice_, "get", "", "pods", "ns1", "p")));
}

TEST_F(RbacAuthorizerTest, RuleSemantics) {
  ClusterRole(
      "c",
      R"([{"apiGroups":["apps"],"resources":["deployments/scale","*/status"],"verbs":["*"]},)"
      R"({"apiGroups":["*"],"resources":["configmaps"],"resourceNames":["cm1"],"verbs":["get"]},)"
      R"({"nonResourceURLs":["/metrics","/logs/*"],"verbs":["get"]}])");
  Binding(
      "", "c", "ClusterRole", "c",
      R"([{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"devs"}])");
  EXPECT_TRUE(Allowed(
      Resource(alice_, "update", "apps", "deployments", "x", "d", "scale")));
  EXPECT_FALSE(
      Allowed(Resource(alice_, "update", "apps", "deployments", "x", "d")));
  EXPECT_TRUE(Allowed(
      Resource(alice_, "patch", "apps", "replicasets", "x", "r", "status")));
  EXPECT_FALSE(
      Allowed(Resource(alice_, "patch", "", "pods", "x", "p", "status")));
  EXPECT_TRUE(Allowed(Resource(alice_, "get", "", "configmaps", "x", "cm1")));
  EXPECT_TRUE(
      Allowed(Resource(alice_, "get", "other", "configmaps", "", "cm1")));
  EXPECT_FALSE(Allowed(Resource(alice_, "get", "", "configmaps", "x", "cm2")));
  EXPECT_FALSE(Allowed(Resource(alice_, "list", "", "configmaps", "x")));
  EXPECT_TRUE(Allowed(Path(alice_, "get", "/metrics")));
  EXPECT_TRUE(Allowed(Path(alice_, "get", "/logs/a/b")));
  EXPECT_FALSE(Allowed(Path(alice_, "get", "/logs")));
  EXPECT_FALSE(Allowed(Path(alice_, "post", "/metrics")));
  EXPECT_FALSE(Allowed(Path(alice_, "get", "/metricsx")));
}

TEST_F(RbacAuthorizerTest, ServiceAccountSubjects) {
  ClusterRole("reader",
              R"([{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}])");
  // No namespace on the subject: the binding's.
  Binding("ns1", "sa", "ClusterRole", "reader",
          R"([{"kind":"ServiceAccount","name":"robot"}])");
  UserInfo robot{
      ServiceAccountUserName("ns1", "robot"),
      "u",
      {kAllServiceAccounts, "system:serviceaccounts:ns1", kAllAuthenticated},
      {}};
  EXPECT_TRUE(Allowed(Resource(robot, "get", "", "pods", "ns1", "p")));
  EXPECT_FALSE(Allowed(Resource(robot, "get", "", "pods", "ns2", "p")));
  Decision d =
      authorizer_->Authorize(Resource(robot, "get", "", "pods", "ns1"));
  EXPECT_EQ(
      d.reason,
      R"(RBAC: allowed by RoleBinding "sa/ns1" of ClusterRole "reader" to ServiceAccount "robot/ns1")");
  UserInfo other{ServiceAccountUserName("ns2", "robot"), "u", {}, {}};
  EXPECT_FALSE(Allowed(Resource(other, "get", "", "pods", "ns1", "p")));
}

TEST_F(RbacAuthorizerTest, MissingRoleIsReported) {
  Binding(
      "", "dangling", "ClusterRole", "gone",
      R"([{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"}])");
  Decision d = authorizer_->Authorize(Resource(alice_, "get", "", "pods", "x"));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.reason,
            R"(RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found)");
  RuleSet rules = authorizer_->RulesFor(alice_, "x");
  EXPECT_TRUE(rules.incomplete);
}

TEST_F(RbacAuthorizerTest, SystemMastersAndBootstrapPolicy) {
  ASSERT_TRUE(EnsureBootstrapPolicy(&registry_).ok());
  // Twice is fine: what exists is kept.
  ASSERT_TRUE(EnsureBootstrapPolicy(&registry_).ok());
  UserInfo root{"root", "", {kSystemMasters, kAllAuthenticated}, {}};
  EXPECT_TRUE(
      Allowed(Resource(root, "delete", "apps", "deployments", "x", "d")));
  EXPECT_TRUE(Allowed(Path(root, "get", "/anything")));
  // system:basic-user, system:discovery, system:public-info-viewer.
  EXPECT_TRUE(Allowed(Resource(alice_, "create", "authorization.k8s.io",
                               "selfsubjectaccessreviews")));
  EXPECT_TRUE(Allowed(Path(alice_, "get", "/apis/apps/v1")));
  UserInfo anonymous{kAnonymousUser, "", {kAllUnauthenticated}, {}};
  EXPECT_TRUE(Allowed(Path(anonymous, "get", "/healthz")));
  EXPECT_TRUE(Allowed(Path(anonymous, "get", "/version")));
  EXPECT_FALSE(Allowed(Path(anonymous, "get", "/api")));
  EXPECT_FALSE(Allowed(Resource(alice_, "list", "", "pods", "default")));
}

TEST_F(RbacAuthorizerTest, ForbiddenMessages) {
  EXPECT_EQ(
      ForbiddenMessage(Resource(alice_, "get", "", "pods", "ns", "p", "log")),
      R"(User "alice" cannot get resource "pods/log" in API group "" in the namespace "ns")");
  EXPECT_EQ(
      ForbiddenMessage(Resource(alice_, "list", "apps", "deployments")),
      R"(User "alice" cannot list resource "deployments" in API group "apps" at the cluster scope)");
  EXPECT_EQ(ForbiddenMessage(Path(alice_, "get", "/metrics")),
            R"(User "alice" cannot get path "/metrics")");
}

TEST_F(RbacAuthorizerTest, RulesForListsWhatIsBound) {
  Role("ns1", "r",
       R"([{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}])");
  ClusterRole("c", R"([{"nonResourceURLs":["/metrics"],"verbs":["get"]}])");
  Binding(
      "ns1", "b", "Role", "r",
      R"([{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"}])");
  Binding(
      "", "cb", "ClusterRole", "c",
      R"([{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"devs"}])");
  EXPECT_EQ(authorizer_->RulesFor(alice_, "ns1").rules.size(), 2u);
  EXPECT_EQ(authorizer_->RulesFor(alice_, "ns2").rules.size(), 1u);
  EXPECT_EQ(authorizer_->RulesFor(alice_, "").rules.size(), 1u);
}

TEST(UncoveredTest, BreaksRulesDown) {
  const std::vector<PolicyRule> owner = {
      {{"get", "list"}, {""}, {"pods", "configmaps/*"}, {}, {}},
      {{"get"}, {"apps"}, {"deployments"}, {"d1"}, {}},
      {{"get"}, {}, {}, {}, {"/logs/*"}}};
  EXPECT_TRUE(Uncovered(owner, {{{"get"}, {""}, {"pods"}, {}, {}}}).empty());
  EXPECT_TRUE(
      Uncovered(owner, {{{"list"}, {""}, {"configmaps/status"}, {}, {}}})
          .empty());
  EXPECT_TRUE(
      Uncovered(owner, {{{"get"}, {"apps"}, {"deployments"}, {"d1"}, {}}})
          .empty());
  EXPECT_EQ(
      Uncovered(owner, {{{"get"}, {"apps"}, {"deployments"}, {}, {}}}).size(),
      1u);
  EXPECT_TRUE(Uncovered(owner, {{{"get"}, {}, {}, {}, {"/logs/x"}}}).empty());
  // "*" in a request needs "*" in the owner.
  auto missing = Uncovered(owner, {{{"*"}, {""}, {"pods"}, {}, {}}});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(RuleString(missing[0]),
            R"({APIGroups:[""], Resources:["pods"], Verbs:["*"]})");
  EXPECT_EQ(
      Uncovered(owner, {{{"get", "watch"}, {""}, {"pods", "secrets"}, {}, {}}})
          .size(),
      3u);
}

TEST_F(RbacAuthorizerTest, EscalationNeedsTheRulesOrEscalateOrBind) {
  Role(
      "ns1", "roles-admin",
      R"([{"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles","rolebindings"],"verbs":["create","get"]},)"
      R"({"apiGroups":[""],"resources":["pods"],"verbs":["get"]}])");
  Binding(
      "ns1", "b", "Role", "roles-admin",
      R"([{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"}])");
  Role("ns1", "secrets",
       R"([{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}])");
  ResourceInfoPtr roles = Resource("rbac.authorization.k8s.io", "v1", "roles");
  ResourceInfoPtr bindings =
      Resource("rbac.authorization.k8s.io", "v1", "rolebindings");
  auto parse = [](const std::string& json) {
    rapidjson::Document d;
    d.Parse(json.c_str());
    return d;
  };
  rapidjson::Document held = parse(
      R"({"metadata":{"name":"r"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]})");
  EXPECT_TRUE(
      ConfirmNoEscalation(*authorizer_, *roles, "ns1", held, alice_).ok());
  rapidjson::Document more = parse(
      R"({"metadata":{"name":"r"},"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}]})");
  absl::Status s =
      ConfirmNoEscalation(*authorizer_, *roles, "ns1", more, alice_);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(
      s.message(),
      "roles.rbac.authorization.k8s.io \"r\" is forbidden: user \"alice\" "
      "(groups=[\"devs\" \"system:authenticated\"]) is attempting to "
      "grant RBAC permissions not currently held:\n"
      "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}");
  // A binding to a role with rules the user lacks; then with `bind`.
  rapidjson::Document binding = parse(
      R"({"metadata":{"name":"rb"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"secrets"}})");
  s = ConfirmNoEscalation(*authorizer_, *bindings, "ns1", binding, alice_);
  EXPECT_THAT(
      s.message(),
      HasSubstr("rolebindings.rbac.authorization.k8s.io \"rb\" is forbidden"));
  Role(
      "ns1", "binder",
      R"([{"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles"],"verbs":["bind","escalate"]}])");
  Binding(
      "ns1", "b2", "Role", "binder",
      R"([{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"}])");
  EXPECT_TRUE(
      ConfirmNoEscalation(*authorizer_, *bindings, "ns1", binding, alice_)
          .ok());
  EXPECT_TRUE(
      ConfirmNoEscalation(*authorizer_, *roles, "ns1", more, alice_).ok());
  UserInfo root{"root", "", {kSystemMasters}, {}};
  EXPECT_TRUE(
      ConfirmNoEscalation(*authorizer_, *roles, "ns2", more, root).ok());
}

}  // namespace
}  // namespace kcr::apiserver::auth
