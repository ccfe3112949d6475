#include "controllers/loadtest/loadtest_types.h"

#include <string>

#include "api/json/json_util.h"
#include "api/object.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/api/crd/crd_type_test.h"

namespace kcr::loadtest {
namespace {

using api::Object;
using api::crd::CrdTypeTest;
using api::crd::IntOrString;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using LoadTestTest = CrdTypeTest<LoadTest>;

TEST_F(LoadTestTest, Defaults) {
  LoadTest t = Parse(R"({"metadata": {"name": "lt"},
      "spec": {"replicas": 2, "test": {"serviceName": "hello"}}})");
  t.ApplyDefaults();
  ASSERT_TRUE(t.spec.test.has_value());
  EXPECT_EQ(t.spec.test->method, "GET");
  EXPECT_EQ(t.spec.test->service_port, IntOrString::Int(80));
  EXPECT_EQ(t.spec.test->path, "/");
  EXPECT_FALSE(t.spec.test->repeat.has_value());
  EXPECT_THAT(t.Validate(), IsEmpty());

  LoadTest named = Parse(R"({"spec": {"replicas": 1, "test": {
      "serviceName": "s", "servicePort": "http", "method": "POST",
      "path": "/x"}}})");
  named.ApplyDefaults();
  EXPECT_EQ(named.spec.test->service_port, IntOrString::String("http"));
  EXPECT_EQ(named.spec.test->method, "POST");
  EXPECT_EQ(named.spec.test->path, "/x");

  LoadTest no_test = Parse(R"({"spec": {"replicas": 1}})");
  no_test.ApplyDefaults();
  EXPECT_FALSE(no_test.spec.test.has_value());
}

TEST_F(LoadTestTest, EveryValidationRule) {
  EXPECT_THAT(Parse("{}").Validate(), ElementsAre("spec: Required value"));
  EXPECT_THAT(Parse(R"({"spec": {}})").Validate(),
              ElementsAre("spec.replicas: Required value",
                          "spec.test: Required value"));
  EXPECT_THAT(
      Parse(R"({"spec": {"replicas": 0, "test": {"serviceName": "s"}}})")
          .Validate(),
      ElementsAre("spec.replicas: Invalid value: 0: spec.replicas in body "
                  "should be greater than or equal to 1"));
  EXPECT_THAT(Parse(R"({"spec": {"replicas": 1, "test": {}}})").Validate(),
              ElementsAre("spec.test.serviceName: Required value"));
  EXPECT_THAT(
      Parse(R"({"spec": {"replicas": 1, "test": {"serviceName": ""}}})")
          .Validate(),
      ElementsAre(HasSubstr("spec.test.serviceName: Invalid value: \"\"")));
  EXPECT_THAT(Parse(R"({"spec": {"replicas": 1, "test": {"serviceName": "s",
      "method": "PATCH"}}})")
                  .Validate(),
              ElementsAre("spec.test.method: Unsupported value: \"PATCH\": "
                          "supported values: \"GET\", \"POST\", \"PUT\", "
                          "\"DELETE\", \"HEAD\""));
  EXPECT_THAT(Parse(R"({"spec": {"replicas": 1, "test": {"serviceName": "s",
      "servicePort": 0}}})")
                  .Validate(),
              ElementsAre(HasSubstr("greater than or equal to 1")));
  EXPECT_THAT(Parse(R"({"spec": {"replicas": 1, "test": {"serviceName": "s",
      "servicePort": 65536}}})")
                  .Validate(),
              ElementsAre(HasSubstr("less than or equal to 65535")));
  EXPECT_THAT(Parse(R"({"spec": {"replicas": 1, "test": {"serviceName": "s",
      "servicePort": "Bad_Name"}}})")
                  .Validate(),
              ElementsAre(HasSubstr(
                  "spec.test.servicePort: Invalid value: \"Bad_Name\"")));
  EXPECT_THAT(Parse(R"({"spec": {"replicas": 1, "test": {"serviceName": "s",
      "repeat": 0}}})")
                  .Validate(),
              ElementsAre("spec.test.repeat: Invalid value: 0: "
                          "spec.test.repeat in body should be greater than "
                          "or equal to 1"));
  EXPECT_THAT(Parse(R"({"spec": {"replicas": 1, "test": {"serviceName": "s"}},
      "status": {"state": "running"}})")
                  .Validate(),
              ElementsAre("status.state: Unsupported value: \"running\": "
                          "supported values: \"pending\", \"executing\", "
                          "\"finished\", \"failed\""));
  EXPECT_THAT(Parse(R"({"spec": {"replicas": 1, "test": {"serviceName": "s"}},
      "status": {"result": {"requests": -1, "latencyMs": {"p99": -0.5},
      "pods": [{"failures": -1}]}}})")
                  .Validate(),
              ElementsAre(HasSubstr("status.result.requests: Invalid value"),
                          "status.result.latencyMs.p99: Invalid value: -0.5: "
                          "status.result.latencyMs.p99 in body should be "
                          "greater than or equal to 0",
                          "status.result.pods[0].pod: Required value",
                          HasSubstr("status.result.pods[0].failures")));
}

TEST_F(LoadTestTest, SeveralViolationsAtOnce) {
  EXPECT_THAT(
      Parse(R"({"spec": {"replicas": -1, "test": {"method": "GO",
      "servicePort": 0, "repeat": 0}}, "status": {"state": "x",
      "observedGeneration": -1}})")
          .Validate(),
      ElementsAre(
          HasSubstr("spec.replicas"), "spec.test.serviceName: Required value",
          HasSubstr("spec.test.method"), HasSubstr("spec.test.servicePort"),
          HasSubstr("spec.test.repeat"), HasSubstr("status.state"),
          HasSubstr("status.observedGeneration")));
}

TEST_F(LoadTestTest, RoundTrip) {
  const char* text =
      R"({"apiVersion":"example.org/v1","kind":"LoadTest",)"
      R"("metadata":{"name":"lt","namespace":"default","generation":3},)"
      R"("spec":{"replicas":2,"test":{"method":"POST","serviceName":"hello",)"
      R"("servicePort":"http","path":"/api","repeat":50}},)"
      R"("status":{"state":"finished","children":["lt-0","lt-1"],)"
      R"("message":"done","result":{"requests":100,"failures":2,)"
      R"("latencyMs":{"p50":1.5,"p90":3.0,"p99":7.25,"max":12.0},)"
      R"("pods":[{"pod":"lt-0","requests":50,"failures":1,)"
      R"("latencyMs":{"p50":1.0}},{"pod":"lt-1","requests":50}]},)"
      R"("observedGeneration":3,"conditions":[{"type":"Complete",)"
      R"("status":"True","reason":"Finished"}]}})";
  LoadTest t = Parse(text);
  EXPECT_THAT(t.Validate(), IsEmpty());
  rapidjson::Document out = t.ToJson();
  EXPECT_EQ(*json::JsonToString(out), text);
  EXPECT_EQ(*LoadTest::FromJson(out), t);

  LoadTest numeric = Parse(R"({"spec": {"replicas": 1, "test": {
      "serviceName": "s", "servicePort": 8080}}})");
  EXPECT_EQ(*LoadTest::FromJson(numeric.ToJson()), numeric);
  EXPECT_EQ(numeric.spec.test->service_port, IntOrString::Int(8080));
}

TEST_F(LoadTestTest, UnknownStatusFieldsAreDropped) {
  LoadTest t = Parse(R"({"spec": {"replicas": 1, "test": {"serviceName": "s",
      "x": 1}}, "status": {"state": "pending", "extra": {"a": 1},
      "result": {"requests": 1, "y": 2}}})");
  EXPECT_EQ(*json::JsonToString(t.ToJson()),
            R"({"apiVersion":"example.org/v1","kind":"LoadTest",)"
            R"("spec":{"replicas":1,"test":{"serviceName":"s"}},)"
            R"("status":{"state":"pending","result":{"requests":1}}})");
}

TEST_F(LoadTestTest, WrongTypesNameTheField) {
  ExpectWrongTypes({
      {R"({"kind": "Nginx"})", "kind: expected \"LoadTest\""},
      {R"({"spec": {"replicas": "2"}})",
       "spec.replicas: must be an integer, got string"},
      {R"({"spec": {"test": []}})", "spec.test: must be an object, got array"},
      {R"({"spec": {"test": {"servicePort": true}}})",
       "spec.test.servicePort: must be an integer or a string, got "
       "boolean"},
      {R"({"spec": {"test": {"servicePort": 80.5}}})",
       "spec.test.servicePort: must be an integer or a string, got "
       "number"},
      {R"({"spec": {"test": {"method": 1}}})",
       "spec.test.method: must be a string"},
      {R"({"spec": {"test": {"repeat": "x"}}})",
       "spec.test.repeat: must be an integer"},
      {R"({"status": {"children": "a"}})",
       "status.children: must be a list of strings, got string"},
      {R"({"status": {"children": ["a", 2]}})",
       "status.children[1]: must be a string, got number"},
      {R"({"status": {"result": {"latencyMs": {"p50": "1"}}}})",
       "status.result.latencyMs.p50: must be a number, got string"},
      {R"({"status": {"result": {"pods": [1]}}})",
       "status.result.pods[0]: must be an object, got number"},
      {R"({"status": {"result": {"pods": {}}}})",
       "status.result.pods: must be a list"},
  });
}

// A LoadTest read from a cached Object keeps its metadata when the Object
// goes (the Object's strings, but for short ones, live in the Object's own
// buffer).
TEST(LoadTestLifetimeTest, OutlivesTheObjectItWasReadFrom) {
  auto object =
      Object::Parse(R"({"apiVersion":"example.org/v1","kind":"LoadTest",)"
                    R"("metadata":{"name":"a-load-test-with-a-long-name",)"
                    R"("namespace":"a-namespace-with-a-long-name"},)"
                    R"("spec":{"replicas":1,"test":{"serviceName":"web"}}})");
  ASSERT_TRUE(object.ok()) << object.status();
  auto lt = LoadTest::FromObject(**object);
  ASSERT_TRUE(lt.ok()) << lt.status();
  object->reset();
  LoadTest copy = *lt;
  EXPECT_EQ(lt->name(), "a-load-test-with-a-long-name");
  EXPECT_EQ(copy.namespace_(), "a-namespace-with-a-long-name");
}

}  // namespace
}  // namespace kcr::loadtest
