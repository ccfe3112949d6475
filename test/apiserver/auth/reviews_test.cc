// The review APIs answered from the authenticator and the RBAC authorizer:
// SubjectAccessReview and LocalSubjectAccessReview (with kube's
// validation), SelfSubjectRulesReview, TokenReview, SelfSubjectReview, and
// AlwaysAllow's unchanged answers.
#include "apiserver/auth/reviews.h"

#include <string>

#include "api/errors/errors.h"
#include "apiserver/auth/bootstrap_policy.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/apiserver/registry_fixture.h"

namespace kcr::apiserver::auth {
namespace {

using ::testing::HasSubstr;

class ReviewsTest : public RegistryFixture {
 protected:
  void SetUp() override {
    RegistryFixture::SetUp();
    rbac_ = std::make_unique<RbacAuthorizer>(&storage_, &resources_);
    ASSERT_TRUE(EnsureBootstrapPolicy(&registry_).ok());
    AuthenticatorOptions ao;
    ao.tokens["t"] = UserInfo{"alice", "7", {"devs"}, {}};
    authenticator_ = std::make_unique<Authenticator>(ao);
  }

  absl::StatusOr<std::string> Answer(const std::string& group,
                                     const std::string& plural,
                                     const std::string& ns,
                                     const std::string& body,
                                     const Authorizer* authorizer = nullptr) {
    rapidjson::Document d;
    d.Parse(body.c_str());
    return AnswerReview(*Resource(group, "v1", plural), ns, d, alice_,
                        authorizer != nullptr ? *authorizer : *rbac_,
                        *authenticator_);
  }

  const UserInfo alice_{"alice", "7", {"devs", kAllAuthenticated}, {}};
  std::unique_ptr<RbacAuthorizer> rbac_;
  std::unique_ptr<Authenticator> authenticator_;
};

TEST_F(ReviewsTest, SubjectAccessReview) {
  auto a =
      Answer("authorization.k8s.io", "subjectaccessreviews", "",
             R"({"spec":{"user":"root","groups":["system:masters"],)"
             R"("resourceAttributes":{"verb":"delete","resource":"nodes"}}})");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(*a, HasSubstr(R"("status":{"allowed":true})"));
  a = Answer(
      "authorization.k8s.io", "subjectaccessreviews", "",
      R"({"spec":{"user":"bob","nonResourceAttributes":{"verb":"get","path":"/api"}}})");
  ASSERT_TRUE(a.ok());
  // bob is not in system:authenticated unless the review says so.
  EXPECT_THAT(*a, HasSubstr(R"("status":{"allowed":false})"));
  a = Answer("authorization.k8s.io", "subjectaccessreviews", "",
             R"({"spec":{"resourceAttributes":{"verb":"get"}}})");
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(a.status().message(),
              HasSubstr("spec.user: Invalid value: \"\": at least one of user "
                        "or group must be specified"));
}

TEST_F(ReviewsTest, LocalSubjectAccessReviewNamespaceMustMatch) {
  auto a = Answer(
      "authorization.k8s.io", "localsubjectaccessreviews", "ns",
      R"({"spec":{"user":"u","resourceAttributes":{"verb":"get","resource":"pods","namespace":"other"}}})");
  EXPECT_THAT(a.status().message(),
              HasSubstr("spec.resourceAttributes.namespace: Invalid value: "
                        "\"other\": must match metadata.namespace"));
  a = Answer(
      "authorization.k8s.io", "localsubjectaccessreviews", "ns",
      R"({"spec":{"user":"u","resourceAttributes":{"verb":"get","resource":"pods","namespace":"ns"}}})");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(*a, HasSubstr(R"("metadata":{"namespace":"ns")"));
}

TEST_F(ReviewsTest, SelfSubjectRulesReviewAndSelfSubjectReview) {
  auto a = Answer("authorization.k8s.io", "selfsubjectrulesreviews", "",
                  R"({"spec":{"namespace":"default"}})");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(
      *a,
      HasSubstr(
          R"({"verbs":["create"],"apiGroups":["authorization.k8s.io"],"resources":["selfsubjectaccessreviews","selfsubjectrulesreviews"]})"));
  EXPECT_THAT(
      *a,
      HasSubstr(
          R"({"verbs":["get"],"nonResourceURLs":["/healthz","/livez","/readyz","/version","/version/"]})"));
  EXPECT_THAT(*a, HasSubstr(R"("incomplete":false)"));
  a = Answer("authentication.k8s.io", "selfsubjectreviews", "", "{}");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(
      *a,
      HasSubstr(
          R"("status":{"userInfo":{"username":"alice","uid":"7","groups":["devs","system:authenticated"]}})"));
}

TEST_F(ReviewsTest, TokenReview) {
  auto a = Answer("authentication.k8s.io", "tokenreviews", "",
                  R"({"spec":{"token":"t"}})");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(
      *a,
      HasSubstr(
          R"("status":{"authenticated":true,"user":{"username":"alice","uid":"7","groups":["devs","system:authenticated"]})"));
  a = Answer("authentication.k8s.io", "tokenreviews", "",
             R"({"spec":{"token":"nope"}})");
  ASSERT_TRUE(a.ok());
  EXPECT_THAT(*a, HasSubstr(R"("status":{"user":{},"error":)"));
  a = Answer("authentication.k8s.io", "tokenreviews", "", R"({"spec":{}})");
  EXPECT_EQ(a.status().message(),
            "token is required for TokenReview in authentication");
  a = Answer("authentication.k8s.io", "tokenreviews", "",
             R"({"kind":"SelfSubjectReview"})");
  EXPECT_THAT(a.status().message(), HasSubstr("must be of type TokenReview"));
}

TEST_F(ReviewsTest, AlwaysAllowKeepsItsAnswers) {
  AlwaysAllowAuthorizer allow;
  auto a = Answer(
      "authorization.k8s.io", "selfsubjectaccessreviews", "",
      R"({"spec":{"resourceAttributes":{"verb":"get","resource":"pods"}}})",
      &allow);
  ASSERT_TRUE(a.ok());
  EXPECT_THAT(*a, HasSubstr("no authorization is enforced"));
}

}  // namespace
}  // namespace kcr::apiserver::auth
