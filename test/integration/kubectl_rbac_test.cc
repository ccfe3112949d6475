// kubectl against rbac.authorization.k8s.io/v1 on the local API server:
// `kubectl create role/clusterrole/rolebinding/clusterrolebinding`,
// `kubectl apply -f` of RBAC manifests, the columns `kubectl get` prints,
// and the validation a manifest author can trip over.
#include <memory>
#include <string>
#include <vector>

#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_apiserver_fixture.h"
#include "test/integration/kubectl_harness.h"

namespace kcr::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kManifests[] = R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: widget-reader}
rules:
- apiGroups: ["example.com"]
  resources: ["widgets", "widgets/status"]
  verbs: ["get", "list", "watch"]
- nonResourceURLs: ["/healthz"]
  verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: widget-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: widget-reader}
subjects:
- {kind: ServiceAccount, name: manager, namespace: kcr-system}
- {kind: Group, name: readers, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: leader-election, namespace: default}
rules:
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["get", "create", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: leader-election, namespace: default}
roleRef: {kind: Role, name: leader-election}
subjects:
- {kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}
- {kind: ServiceAccount, name: manager, namespace: kcr-system}
)";

using KubectlRbacTest = KubectlApiServerFixture;

TEST_F(KubectlRbacTest, CreateCommandsAndColumns) {
  KubectlResult r = kubectl_->Run(
      {"create", "role", "pod-reader", "--verb=get,list", "--resource=pods"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("role.rbac.authorization.k8s.io/pod-reader "
                               "created"));
  r = kubectl_->Run({"create", "clusterrole", "node-reader", "--verb=get",
                     "--resource=nodes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl_->Run({"create", "rolebinding", "read-pods", "--role=pod-reader",
                     "--user=alice", "--user=bob", "--group=devs",
                     "--serviceaccount=default:robot"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl_->Run({"create", "clusterrolebinding", "read-nodes",
                     "--clusterrole=node-reader", "--group=ops"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  r = kubectl_->Run({"get", "roles"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = KubectlHarness::Columns(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_THAT(rows[0], ElementsAre("NAME", "CREATED AT"));
  ASSERT_EQ(rows[1].size(), 2u) << r.out;
  EXPECT_EQ(rows[1][0], "pod-reader");
  EXPECT_THAT(rows[1][1],
              ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z"));

  r = kubectl_->Run({"get", "clusterrole", "node-reader"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(WithoutColumn(KubectlHarness::Columns(r.out), 1),
              ElementsAre(ElementsAre("NAME"), ElementsAre("node-reader")));

  r = kubectl_->Run({"get", "rolebindings"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(WithoutColumn(KubectlHarness::Columns(r.out), 2),
              ElementsAre(ElementsAre("NAME", "ROLE"),
                          ElementsAre("read-pods", "Role/pod-reader")));
  r = kubectl_->Run({"get", "rolebindings", "-o", "wide"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(WithoutColumn(KubectlHarness::Columns(r.out), 2),
              ElementsAre(ElementsAre("NAME", "ROLE", "USERS", "GROUPS",
                                      "SERVICEACCOUNTS"),
                          ElementsAre("read-pods", "Role/pod-reader",
                                      "alice, bob", "devs", "default/robot")));
  r = kubectl_->Run({"get", "clusterrolebindings", "-o", "wide"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(
      WithoutColumn(KubectlHarness::Columns(r.out), 2),
      ElementsAre(
          ElementsAre("NAME", "ROLE", "USERS", "GROUPS", "SERVICEACCOUNTS"),
          ElementsAre("read-nodes", "ClusterRole/node-reader", "ops")));

  // What kubectl create wrote, defaults included.
  r = kubectl_->Run({"get", "rolebinding", "read-pods", "-o",
                     "jsonpath={.roleRef.apiGroup} {.subjects[0].apiGroup} "
                     "{.subjects[3].kind} {.subjects[3].namespace}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "rbac.authorization.k8s.io rbac.authorization.k8s.io "
            "ServiceAccount default");

  r = kubectl_->Run({"delete", "rolebinding", "read-pods"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl_->Run({"get", "rolebinding", "read-pods"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("rolebindings.rbac.authorization.k8s.io "
                               "\"read-pods\" not found"));
}

TEST_F(KubectlRbacTest, ApplyManifests) {
  KubectlResult r = kubectl_->Run({"apply", "-f", "-"}, kManifests);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("clusterrole.rbac.authorization.k8s.io/"
                               "widget-reader created"));
  EXPECT_THAT(r.out, HasSubstr("rolebinding.rbac.authorization.k8s.io/"
                               "leader-election created"));
  // Applied again: nothing to change (roleRef.apiGroup, defaulted, is a
  // struct member and merges; subjects are written out in full).
  r = kubectl_->Run({"apply", "-f", "-"}, kManifests);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("clusterrolebinding.rbac.authorization.k8s.io/"
                               "widget-reader unchanged"));
  EXPECT_THAT(r.out, HasSubstr("role.rbac.authorization.k8s.io/"
                               "leader-election unchanged"));

  r = kubectl_->Run(
      {"get", "clusterrolebinding", "widget-reader", "-o", "wide"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(
      WithoutColumn(KubectlHarness::Columns(r.out), 2),
      ElementsAre(
          ElementsAre("NAME", "ROLE", "USERS", "GROUPS", "SERVICEACCOUNTS"),
          ElementsAre("widget-reader", "ClusterRole/widget-reader", "readers",
                      "kcr-system/manager")));

  // A binding's roleRef cannot change.
  std::string changed = kManifests;
  changed.replace(changed.rfind("roleRef: {kind: Role, name: leader-election}"),
                  44, "roleRef: {kind: ClusterRole, name: widget-reader}");
  r = kubectl_->Run({"apply", "-f", "-"}, changed);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err,
              HasSubstr("The RoleBinding \"leader-election\" is invalid: "
                        "roleRef: Invalid "
                        "value: rbac.RoleRef{APIGroup:\"rbac.authorization."
                        "k8s.io\", Kind:\"ClusterRole\", "
                        "Name:\"widget-reader\"}: cannot change roleRef"));

  // Watch sees the objects (kubectl get -w lists, then watches).
  std::unique_ptr<KubectlProcess> watch =
      kubectl_->Start({"get", "roles", "-w", "--no-headers"});
  ASSERT_TRUE(watch->WaitForLine("leader-election", absl::Seconds(30)))
      << watch->out();
  r = kubectl_->Run(
      {"create", "role", "late", "--verb=get", "--resource=configmaps"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(watch->WaitForLine("late", absl::Seconds(30))) << watch->out();
}

TEST_F(KubectlRbacTest, ValidationErrors) {
  KubectlResult r = kubectl_->Run({"apply", "-f", "-"}, R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: no-verbs}
rules:
- apiGroups: [""]
  resources: ["pods"]
- verbs: ["get"]
  nonResourceURLs: ["/metrics"]
)");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("The Role \"no-verbs\" is invalid"));
  EXPECT_THAT(r.err, HasSubstr("rules[0].verbs: Required value: verbs must "
                               "contain at least one value"));
  EXPECT_THAT(r.err, HasSubstr("rules[1].nonResourceURLs: Invalid value: "
                               "[]string{\"/metrics\"}: namespaced rules "
                               "cannot apply to non-resource URLs"));

  r = kubectl_->Run({"apply", "-f", "-"}, R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: wrong}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: x}
subjects:
- {kind: ServiceAccount, name: robot}
- {kind: Robot, name: r2}
)");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("roleRef.kind: Unsupported value: \"Role\": "
                               "supported values: \"ClusterRole\""));
  EXPECT_THAT(r.err, HasSubstr("subjects[0].namespace: Required value"));
  EXPECT_THAT(r.err, HasSubstr("subjects[1].kind: Unsupported value: "
                               "\"Robot\": supported values: "
                               "\"ServiceAccount\", \"User\", \"Group\""));

  r = kubectl_->Run({"apply", "-f", "-"}, R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: no-ref}
subjects:
- {kind: User, name: alice}
)");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("roleRef.kind: Unsupported value: \"\""));
  EXPECT_THAT(r.err, HasSubstr("roleRef.name: Required value"));

  // Strict field validation knows the RBAC types.
  r = kubectl_->Run({"apply", "-f", "-"}, R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: typo}
rules:
- apiGroups: [""]
  resources: ["pods"]
  verb: ["get"]
)");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("unknown field \"rules[0].verb\""));
}

}  // namespace
}  // namespace kcr::integration
