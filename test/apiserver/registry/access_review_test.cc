// SelfSubjectAccessReview and SelfSubjectRulesReview answers.
#include "apiserver/registry/access_review.h"

#include <string>

#include "api/json/json_util.h"
#include "apiserver/registry/resources.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr::apiserver {
namespace {

using ::testing::HasSubstr;

rapidjson::Document Parse(const std::string& text) {
  rapidjson::Document d;
  EXPECT_TRUE(json::ParseJson(text, &d).ok()) << text;
  return d;
}

class AccessReviewTest : public ::testing::Test {
 protected:
  ResourceRegistry resources_;
  ResourceInfoPtr access_ = resources_.Lookup("authorization.k8s.io", "v1",
                                              "selfsubjectaccessreviews");
  ResourceInfoPtr rules_ = resources_.Lookup("authorization.k8s.io", "v1",
                                             "selfsubjectrulesreviews");
};

TEST_F(AccessReviewTest, ServedCreateOnly) {
  ASSERT_NE(access_, nullptr);
  ASSERT_NE(rules_, nullptr);
  EXPECT_EQ(access_->verbs, std::vector<std::string>{"create"});
  EXPECT_FALSE(access_->namespaced());
  EXPECT_EQ(access_->kind(), "SelfSubjectAccessReview");
}

TEST_F(AccessReviewTest, EverythingIsAllowed) {
  auto out = ReviewAccess(
      *access_,
      Parse(R"({"kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":
      {"verb":"create","group":"apps","resource":"deployments"}}})"));
  ASSERT_TRUE(out.ok()) << out.status();
  rapidjson::Document d = Parse(*out);
  EXPECT_EQ(std::string(d["apiVersion"].GetString()),
            "authorization.k8s.io/v1");
  EXPECT_TRUE(d["status"]["allowed"].GetBool());
  EXPECT_EQ(std::string(d["status"]["reason"].GetString()),
            kNoAuthorizationReason);
  EXPECT_EQ(
      std::string(d["spec"]["resourceAttributes"]["resource"].GetString()),
      "deployments");
}

TEST_F(AccessReviewTest, SpecNeedsExactlyOneKindOfAttributes) {
  auto out = ReviewAccess(*access_, Parse(R"({"spec":{}})"));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("exactly one of nonResourceAttributes or "
                        "resourceAttributes must be specified"));
  out = ReviewAccess(*access_, Parse(R"({"spec":{"resourceAttributes":{},
                     "nonResourceAttributes":{"path":"/x","verb":"get"}}})"));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("cannot be specified in combination with "
                        "resourceAttributes"));
  out = ReviewAccess(*access_, Parse(R"({"kind":"Pod","spec":{}})"));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("unrecognized"));
}

TEST_F(AccessReviewTest, RulesReviewListsEverything) {
  auto out =
      ReviewAccess(*rules_, Parse(R"({"spec":{"namespace":"default"}})"));
  ASSERT_TRUE(out.ok()) << out.status();
  rapidjson::Document d = Parse(*out);
  EXPECT_EQ(
      std::string(d["status"]["resourceRules"][0]["verbs"][0].GetString()),
      "*");
  EXPECT_EQ(
      std::string(
          d["status"]["nonResourceRules"][0]["nonResourceURLs"][0].GetString()),
      "*");
  EXPECT_FALSE(d["status"]["incomplete"].GetBool());
}

}  // namespace
}  // namespace kcr::apiserver
