#include "controllers/nginx/nginx_types.h"

#include <string>

#include "api/json/json_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/api/crd/crd_type_test.h"

namespace kcr::nginx {
namespace {

using api::crd::CrdTypeTest;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using NginxTest = CrdTypeTest<Nginx>;

TEST_F(NginxTest, ParsesAndDefaults) {
  Nginx n = Parse(R"({"apiVersion": "example.org/v1", "kind": "Nginx",
      "metadata": {"name": "web", "namespace": "default"},
      "spec": {"replicas": 3}})");
  EXPECT_EQ(n.name(), "web");
  EXPECT_EQ(n.namespace_(), "default");
  EXPECT_EQ(n.spec.replicas, 3);
  EXPECT_FALSE(n.spec.image.has_value());
  n.ApplyDefaults();
  EXPECT_EQ(n.spec.replicas, 3);
  EXPECT_EQ(n.spec.image, "nginx:1.7.9");
  EXPECT_EQ(n.spec.port, 80);
  EXPECT_THAT(n.Validate(), IsEmpty());
}

TEST_F(NginxTest, DefaultsWithoutSpec) {
  Nginx n = Parse(R"({"metadata": {"name": "x"}})");
  n.ApplyDefaults();
  EXPECT_EQ(n.spec.replicas, 1);
  EXPECT_EQ(n.spec.image, "nginx:1.7.9");
  EXPECT_EQ(n.spec.port, 80);
}

TEST_F(NginxTest, EveryValidationRule) {
  EXPECT_THAT(Parse(R"({"spec": {"replicas": -1}})").Validate(),
              ElementsAre("spec.replicas: Invalid value: -1: spec.replicas "
                          "in body should be greater than or equal to 0"));
  EXPECT_THAT(Parse(R"({"spec": {"replicas": 0}})").Validate(), IsEmpty());
  EXPECT_THAT(Parse(R"({"spec": {"image": ""}})").Validate(),
              ElementsAre("spec.image: Invalid value: \"\": spec.image in "
                          "body should be at least 1 chars long"));
  EXPECT_THAT(Parse(R"({"spec": {"port": 0}})").Validate(),
              ElementsAre("spec.port: Invalid value: 0: spec.port in body "
                          "should be greater than or equal to 1"));
  EXPECT_THAT(Parse(R"({"spec": {"port": 65536}})").Validate(),
              ElementsAre("spec.port: Invalid value: 65536: spec.port in body "
                          "should be less than or equal to 65535"));
  EXPECT_THAT(
      Parse(R"({"status": {"readyReplicas": -1}})").Validate(),
      ElementsAre(HasSubstr("status.readyReplicas: Invalid value: -1")));
  EXPECT_THAT(Parse(R"({"status": {"observedGeneration": -2}})").Validate(),
              ElementsAre(HasSubstr("status.observedGeneration: Invalid")));
  EXPECT_THAT(
      Parse(R"({"status": {"conditions": [{"status": "Maybe"}]}})").Validate(),
      ElementsAre("status.conditions[0].type: Required value",
                  "status.conditions[0].status: Unsupported value: "
                  "\"Maybe\": supported values: \"True\", \"False\", "
                  "\"Unknown\""));
}

TEST_F(NginxTest, SeveralViolationsAtOnce) {
  EXPECT_THAT(
      Parse(R"({"spec": {"replicas": -1, "image": "", "port": 70000},
          "status": {"readyReplicas": -3}})")
          .Validate(),
      ElementsAre(HasSubstr("spec.replicas"), HasSubstr("spec.image"),
                  HasSubstr("spec.port"), HasSubstr("status.readyReplicas")));
}

TEST_F(NginxTest, RoundTrip) {
  const char* text =
      R"({"apiVersion":"example.org/v1","kind":"Nginx",)"
      R"("metadata":{"name":"web","labels":{"a":"b"}},)"
      R"("spec":{"replicas":2,"image":"nginx:1.25","port":8080},)"
      R"("status":{"readyReplicas":1,"observedGeneration":4,"conditions":[)"
      R"({"type":"Ready","status":"False","reason":"Scaling",)"
      R"("message":"1/2","lastTransitionTime":"2024-01-01T00:00:00Z",)"
      R"("observedGeneration":4}]}})";
  Nginx n = Parse(text);
  rapidjson::Document out = n.ToJson();
  EXPECT_EQ(*json::JsonToString(out), text);
  auto again = Nginx::FromJson(out);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, n);
}

TEST_F(NginxTest, UnknownFieldsAreDropped) {
  Nginx n = Parse(R"({"spec": {"replicas": 1, "extra": 1},
      "status": {"readyReplicas": 1, "extra": true}})");
  EXPECT_EQ(*json::JsonToString(n.ToJson()),
            R"({"apiVersion":"example.org/v1","kind":"Nginx",)"
            R"("spec":{"replicas":1},"status":{"readyReplicas":1}})");
}

TEST_F(NginxTest, WrongTypesNameTheField) {
  ExpectWrongTypes({
      {"[]", "object: must be an object, got array"},
      {R"({"kind": "Pod"})", "kind: expected \"Nginx\", got \"Pod\""},
      {R"({"apiVersion": "v1"})", "apiVersion: expected"},
      {R"({"metadata": 1})", "metadata: must be an object, got number"},
      {R"({"spec": "x"})", "spec: must be an object, got string"},
      {R"({"spec": {"replicas": "3"}})",
       "spec.replicas: must be an integer, got string"},
      {R"({"spec": {"replicas": 1.5}})",
       "spec.replicas: must be an integer, got number"},
      {R"({"spec": {"image": 7}})", "spec.image: must be a string"},
      {R"({"spec": {"port": true}})",
       "spec.port: must be an integer, got boolean"},
      {R"({"status": {"conditions": {}}})",
       "status.conditions: must be a list of conditions, got object"},
      {R"({"status": {"conditions": [{"type": 1}]}})",
       "status.conditions[0].type: must be a string"},
  });
}

}  // namespace
}  // namespace kcr::nginx
