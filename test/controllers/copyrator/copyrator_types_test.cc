#include "controllers/copyrator/copyrator_types.h"

#include <string>

#include "api/json/json_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/api/crd/crd_type_test.h"

namespace kcr::copyrator {
namespace {

using api::Object;
using api::crd::CrdTypeTest;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

using CopyratorRuleTest = CrdTypeTest<CopyratorRule>;

// The tutorial's sample, in JSON.
constexpr char kTutorial[] =
    R"({"apiVersion":"flant.com/v1","kind":"CopyratorRule",)"
    R"("metadata":{"name":"main-rule"},"ruleType":"configmap",)"
    R"("selector":{"copyrator":"true"},"namespace":"default"})";

TEST_F(CopyratorRuleTest, TutorialSampleParsesUnchanged) {
  CopyratorRule r = Parse(kTutorial);
  EXPECT_EQ(r.name(), "main-rule");
  EXPECT_EQ(r.rule_type, "configmap");
  EXPECT_EQ(r.selector_form, CopyratorRule::SelectorForm::kLabelMap);
  EXPECT_THAT(r.selector_labels, ElementsAre(Pair("copyrator", "true")));
  EXPECT_EQ(r.namespace_form, CopyratorRule::NamespaceForm::kString);
  EXPECT_THAT(r.namespaces, ElementsAre("default"));
  EXPECT_THAT(r.Validate(), IsEmpty());
  CopyratorRule defaulted = r;
  defaulted.ApplyDefaults();
  EXPECT_EQ(defaulted, r);
  EXPECT_EQ(*json::JsonToString(r.ToJson()), kTutorial);
}

TEST_F(CopyratorRuleTest, FromObject) {
  auto object = Object::Parse(kTutorial);
  ASSERT_TRUE(object.ok()) << object.status();
  auto r = CopyratorRule::FromObject(**object);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, Parse(kTutorial));
}

TEST_F(CopyratorRuleTest, SelectorStringAndNamespaceListRoundTrip) {
  const char* text =
      R"({"apiVersion":"flant.com/v1","kind":"CopyratorRule",)"
      R"("metadata":{"name":"r","namespace":"ops"},"ruleType":"secret",)"
      R"("selector":"app in (a,b),!legacy","namespace":["default","ops"],)"
      R"("status":{"copies":4,"observedGeneration":2,)"
      R"("conditions":[{"type":"Ready","status":"True"}]}})";
  CopyratorRule r = Parse(text);
  EXPECT_EQ(r.selector_form, CopyratorRule::SelectorForm::kString);
  EXPECT_EQ(r.selector_string, "app in (a,b),!legacy");
  EXPECT_EQ(r.namespace_form, CopyratorRule::NamespaceForm::kList);
  EXPECT_THAT(r.namespaces, ElementsAre("default", "ops"));
  EXPECT_THAT(r.Validate(), IsEmpty());
  rapidjson::Document out = r.ToJson();
  EXPECT_EQ(*json::JsonToString(out), text);
  EXPECT_EQ(*CopyratorRule::FromJson(out), r);
}

TEST_F(CopyratorRuleTest, AbsentSelectorAndNamespaceStayAbsent) {
  CopyratorRule r = Parse(R"({"ruleType": "secret"})");
  EXPECT_EQ(r.selector_form, CopyratorRule::SelectorForm::kAbsent);
  EXPECT_EQ(r.namespace_form, CopyratorRule::NamespaceForm::kAbsent);
  EXPECT_THAT(r.Validate(), IsEmpty());
  EXPECT_EQ(*json::JsonToString(r.ToJson()),
            R"({"apiVersion":"flant.com/v1","kind":"CopyratorRule",)"
            R"("ruleType":"secret"})");
}

TEST_F(CopyratorRuleTest, EveryValidationRule) {
  EXPECT_THAT(Parse(R"({})").Validate(),
              ElementsAre("ruleType: Required value"));
  EXPECT_THAT(Parse(R"({"ruleType": "pod"})").Validate(),
              ElementsAre("ruleType: Unsupported value: \"pod\": supported "
                          "values: \"configmap\", \"secret\""));
  EXPECT_THAT(Parse(R"({"ruleType": "secret", "selector": {"bad key!": "x"}})")
                  .Validate(),
              ElementsAre(HasSubstr("selector: Invalid value: \"bad key!\"")));
  EXPECT_THAT(
      Parse(R"({"ruleType": "secret", "selector": {"k": "bad value!"}})")
          .Validate(),
      ElementsAre(HasSubstr("selector.k: Invalid value: \"bad value!\"")));
  EXPECT_THAT(
      Parse(R"({"ruleType": "secret", "selector": "app in (a"})").Validate(),
      ElementsAre(HasSubstr("selector: Invalid value: \"app in (a\"")));
  EXPECT_THAT(
      Parse(R"({"ruleType": "secret", "namespace": "Bad_NS"})").Validate(),
      ElementsAre(HasSubstr("namespace: Invalid value: \"Bad_NS\": a "
                            "lowercase RFC 1123 label")));
  EXPECT_THAT(Parse(R"({"ruleType": "secret", "namespace": []})").Validate(),
              ElementsAre("namespace: Invalid value: 0: namespace in body "
                          "should have at least 1 items"));
  EXPECT_THAT(
      Parse(R"({"ruleType": "secret", "namespace": ["ok", "-no"]})").Validate(),
      ElementsAre(HasSubstr("namespace[1]: Invalid value: \"-no\"")));
  EXPECT_THAT(
      Parse(R"({"ruleType": "secret", "status": {"copies": -1}})").Validate(),
      ElementsAre("status.copies: Invalid value: -1: status.copies in body "
                  "should be greater than or equal to 0"));
}

TEST_F(CopyratorRuleTest, SeveralViolationsAtOnce) {
  EXPECT_THAT(Parse(R"({"ruleType": "pods", "selector": "=x",
          "namespace": ["A", ""], "status": {"copies": -1,
          "conditions": [{"type": "Ready"}]}})")
                  .Validate(),
              ElementsAre(HasSubstr("ruleType: Unsupported value"),
                          HasSubstr("selector: Invalid value"),
                          HasSubstr("namespace[0]: Invalid value"),
                          HasSubstr("namespace[1]: Invalid value"),
                          HasSubstr("status.copies: Invalid value"),
                          "status.conditions[0].status: Required value"));
}

TEST_F(CopyratorRuleTest, WrongTypesNameTheField) {
  ExpectWrongTypes({
      {R"({"kind": "Nginx"})", "kind: expected \"CopyratorRule\""},
      {R"({"ruleType": 1})", "ruleType: must be a string, got number"},
      {R"({"selector": 1})",
       "selector: must be a label map or a selector string"},
      {R"({"selector": {"copyrator": true}})",
       "selector.copyrator: must be a string"},
      {R"({"namespace": {}})",
       "namespace: must be a string or a list of strings"},
      {R"({"namespace": ["a", 1]})",
       "namespace[1]: must be a string, got number"},
      {R"({"status": []})", "status: must be an object, got array"},
      {R"({"status": {"copies": "1"}})",
       "status.copies: must be an integer, got string"},
  });
}

}  // namespace
}  // namespace kcr::copyrator
