// kubectl auth can-i against the local API server: SelfSubjectAccessReview
// and SelfSubjectRulesReview answer that everything is allowed, because no
// authorization is enforced (apiserver/access_review.h).
#include <memory>
#include <string>

#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_apiserver_fixture.h"
#include "test/integration/kubectl_harness.h"

namespace kcr::integration {
namespace {

using ::testing::HasSubstr;

using KubectlAuthTest = KubectlApiServerFixture;

TEST_F(KubectlAuthTest, CanIAnswersYes) {
  KubectlResult r = kubectl_->Run({"auth", "can-i", "create", "deployments"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
  r = kubectl_->Run(
      {"auth", "can-i", "delete", "secrets", "-n", "kube-system"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
  r = kubectl_->Run({"auth", "can-i", "get", "/healthz"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
  // A RoleBinding changes nothing: RBAC is stored, not enforced.
  r = kubectl_->Run({"auth", "can-i", "list", "pods", "--as=nobody"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "yes\n");
}

TEST_F(KubectlAuthTest, CanIList) {
  KubectlResult r = kubectl_->Run({"auth", "can-i", "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = KubectlHarness::Columns(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  EXPECT_THAT(rows[0], ::testing::ElementsAre("Resources", "Non-Resource URLs",
                                              "Resource Names", "Verbs"));
  EXPECT_THAT(rows[1], ::testing::ElementsAre("*.*", "[]", "[]", "[*]"));
  // The empty Resources cell of the non-resource rule.
  EXPECT_THAT(rows[2], ::testing::ElementsAre("", "[*]", "[]", "[*]"));
}

TEST_F(KubectlAuthTest, ReviewsAreCreatedNotStored) {
  KubectlResult r =
      kubectl_->Run({"create", "-f", "-", "-o",
                     "jsonpath={.status.allowed} {.status.reason}"},
                    R"(
apiVersion: authorization.k8s.io/v1
kind: SelfSubjectAccessReview
spec:
  resourceAttributes: {verb: get, resource: pods, namespace: default}
)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "true no authorization is enforced by the local API server: every "
            "request is allowed");

  r = kubectl_->Run({"create", "-f", "-"}, R"(
apiVersion: authorization.k8s.io/v1
kind: SelfSubjectAccessReview
spec: {}
)");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("exactly one of nonResourceAttributes or "
                               "resourceAttributes must be specified"));

  r = kubectl_->Run({"get", "--raw",
                     "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("MethodNotAllowed"));

  r = kubectl_->Run({"api-resources", "--api-group=authorization.k8s.io"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("selfsubjectaccessreviews"));
  EXPECT_THAT(r.out, HasSubstr("selfsubjectrulesreviews"));
}

}  // namespace
}  // namespace kcr::integration
