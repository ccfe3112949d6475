#include "controllers/simpledeployment/simpledeployment_types.h"

#include <string>

#include "api/json/json_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/api/crd/crd_type_test.h"

namespace kcr::simpledeployment {
namespace {

using api::crd::CrdTypeTest;
using api::crd::IntOrString;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using SimpleDeploymentTest = CrdTypeTest<SimpleDeployment>;

TEST_F(SimpleDeploymentTest, DeclaresItsResource) {
  EXPECT_STREQ(SimpleDeployment::kGroup, "example.org");
  EXPECT_STREQ(SimpleDeployment::kVersion, "v1");
  EXPECT_STREQ(SimpleDeployment::kPlural, "simpledeployments");
  EXPECT_STREQ(SimpleDeployment::kKind, "SimpleDeployment");
  EXPECT_TRUE(SimpleDeployment::kNamespaced);
}

TEST_F(SimpleDeploymentTest, SleepytimeIsANumberOrAStringOfDigits) {
  // The tutorial's sample.
  SimpleDeployment t = Parse(R"({"apiVersion": "example.org/v1",
      "kind": "SimpleDeployment",
      "metadata": {"name": "example-01", "labels": {"app": "simple-app"}},
      "spec": {"sleepytime": "120"}})");
  EXPECT_EQ(t.spec.sleepytime, IntOrString::String("120"));
  EXPECT_EQ(t.SleepytimeSeconds().value_or(-1), 120);
  EXPECT_THAT(t.Validate(), IsEmpty());

  EXPECT_EQ(
      Parse(R"({"spec": {"sleepytime": 30}})").SleepytimeSeconds().value_or(-1),
      30);
  EXPECT_EQ(Parse(R"({"spec": {"sleepytime": "0"}})")
                .SleepytimeSeconds()
                .value_or(-1),
            0);
  EXPECT_EQ(Parse(R"({"spec": {"sleepytime": "007"}})")
                .SleepytimeSeconds()
                .value_or(-1),
            7);
  // The tutorial's default: no sleepytime (or no spec) sleeps 0.
  EXPECT_EQ(Parse(R"({"spec": {}})").SleepytimeSeconds().value_or(-1), 0);
  EXPECT_EQ(Parse(R"({})").SleepytimeSeconds().value_or(-1), 0);
  EXPECT_THAT(Parse(R"({})").Validate(), IsEmpty());
}

TEST_F(SimpleDeploymentTest, InvalidSleepytimesInTheSchemasWords) {
  const auto rejected = [&](const char* json) {
    SimpleDeployment t = Parse(json);
    absl::StatusOr<int64_t> s = t.SleepytimeSeconds();
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << json;
    std::vector<std::string> v = t.Validate();
    EXPECT_EQ(v.size(), 1u) << json;
    if (!v.empty()) {
      EXPECT_EQ(std::string(s.status().message()), v[0])
          << "the type refuses what the schema refuses, in its words";
    }
    return std::string(s.status().message());
  };
  EXPECT_EQ(rejected(R"({"spec": {"sleepytime": -5}})"),
            "spec.sleepytime: Invalid value: -5: spec.sleepytime in body "
            "should be greater than or equal to 0");
  EXPECT_EQ(rejected(R"({"spec": {"sleepytime": 1000000000}})"),
            "spec.sleepytime: Invalid value: 1000000000: spec.sleepytime in "
            "body should be less than or equal to 999999999");
  EXPECT_EQ(rejected(R"({"spec": {"sleepytime": "two minutes"}})"),
            "spec.sleepytime: Invalid value: \"two minutes\": spec.sleepytime "
            "in body should match '^[0-9]{1,9}$'");
  EXPECT_THAT(rejected(R"({"spec": {"sleepytime": ""}})"),
              HasSubstr("should match"));
  EXPECT_THAT(rejected(R"({"spec": {"sleepytime": "1.5"}})"),
              HasSubstr("should match"));
  EXPECT_THAT(rejected(R"({"spec": {"sleepytime": "-1"}})"),
              HasSubstr("should match"));
  EXPECT_THAT(rejected(R"({"spec": {"sleepytime": "1234567890"}})"),
              HasSubstr("should match"));
}

TEST_F(SimpleDeploymentTest, ParseSleepytimeReadsAFieldsValue) {
  const auto parse = [](const char* json) {
    rapidjson::Document d = Json(json);
    return ParseSleepytime(&d);
  };
  EXPECT_EQ(ParseSleepytime(nullptr).value_or(-1), 0) << "absent";
  EXPECT_EQ(parse("null").value_or(-1), 0);
  EXPECT_EQ(parse("120").value_or(-1), 120);
  EXPECT_EQ(parse(R"("120")").value_or(-1), 120);
  EXPECT_EQ(parse("120.0").value_or(-1), 120);
  EXPECT_EQ(parse("999999999").value_or(-1), 999999999);
  EXPECT_FALSE(parse("1.5").ok());
  EXPECT_FALSE(parse("-1").ok());
  EXPECT_FALSE(parse(R"("abc")").ok());
  EXPECT_FALSE(parse("[120]").ok());
  EXPECT_FALSE(parse(R"({"s": 1})").ok());
  EXPECT_FALSE(parse("true").ok());
}

TEST_F(SimpleDeploymentTest, ChildrenAreTheCreateHandlersResult) {
  EXPECT_THAT(Parse("{}").Children(), IsEmpty());
  EXPECT_THAT(Parse(R"({"status": {"create_fn": {}}})").Children(), IsEmpty());
  EXPECT_THAT(
      Parse(R"({"status": {"create_fn": {"children": "u1"}}})").Children(),
      IsEmpty());
  EXPECT_THAT(Parse(R"({"status": {"create_fn": {"children": ["u1", 2, "u3"]},
                                   "sleepytime_fn": {"children": ["u9"]}}})")
                  .Children(),
              ElementsAre("u1", "u3"));
}

TEST_F(SimpleDeploymentTest, RoundTripKeepsMetadataAndTheWholeStatus) {
  const char* text = R"({"apiVersion": "example.org/v1",
      "kind": "SimpleDeployment",
      "metadata": {"name": "s", "namespace": "default",
                   "annotations": {"kcr.dev/last-handled-configuration": "{}"}},
      "spec": {"sleepytime": 5, "unknown": true},
      "status": {"create_fn": {"children": ["u1"]},
                 "kcr": {"progress": {"create_fn": {"success": true}}}}})";
  SimpleDeployment t = Parse(text);
  EXPECT_EQ(*json::JsonToString(t.ToJson()),
            R"({"apiVersion":"example.org/v1","kind":"SimpleDeployment",)"
            R"("metadata":{"name":"s","namespace":"default","annotations":)"
            R"({"kcr.dev/last-handled-configuration":"{}"}},)"
            R"("spec":{"sleepytime":5},"status":{"create_fn":{"children":)"
            R"(["u1"]},"kcr":{"progress":{"create_fn":{"success":true}}}}})");
  absl::StatusOr<SimpleDeployment> again =
      SimpleDeployment::FromJson(t.ToJson());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, t);
  EXPECT_EQ(t.name(), "s");
  EXPECT_EQ(t.namespace_(), "default");
}

TEST_F(SimpleDeploymentTest, WrongTypesNameTheField) {
  ExpectWrongTypes({
      {R"({"spec": []})", "spec"},
      {R"({"spec": {"sleepytime": [1]}})", "spec.sleepytime"},
      {R"({"spec": {"sleepytime": true}})", "spec.sleepytime"},
      {R"({"status": "done"})", "status"},
      {R"({"kind": "LoadTest"})", "kind"},
  });
}

}  // namespace
}  // namespace kcr::simpledeployment
