#include "api/schema/structural_schema.h"

#include <memory>
#include <string>
#include <vector>

#include "api/json/json_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/api/json/json_test_util.h"

namespace kcr {
namespace api {
namespace {

using json::testing::Json;
using json::testing::Str;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::unique_ptr<StructuralSchema> Schema(const char* text) {
  auto s = StructuralSchema::Create(Json(text));
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

std::vector<std::string> Errors(const StructuralSchema& s, const char* obj) {
  return ToStrings(s.Validate(Json(obj)));
}

constexpr char kSpecSchema[] = R"({
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "required": ["image"],
      "properties": {
        "replicas": {"type": "integer", "minimum": 0, "default": 1},
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1,
                  "exclusiveMinimum": true, "exclusiveMaximum": true},
        "image": {"type": "string", "minLength": 1, "maxLength": 10},
        "name": {"type": "string", "pattern": "^[a-z]+$"},
        "mode": {"type": "string", "enum": ["a", "b"]},
        "enabled": {"type": "boolean"},
        "args": {"type": "array", "minItems": 1, "maxItems": 3,
                 "items": {"type": "string"}},
        "note": {"type": "string", "nullable": true}
      }
    }
  }
})";

TEST(StructuralSchemaTest, AcceptsValidObject) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(Errors(*s, R"({"spec": {"replicas": 0, "port": 65535,
      "ratio": 0.5, "image": "nginx", "name": "abc", "mode": "b",
      "enabled": true, "args": ["x"], "note": null}})"),
              IsEmpty());
}

TEST(StructuralSchemaTest, TypeErrors) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(
      Errors(*s, R"({"spec": {"image": "x", "replicas": "string"}})"),
      ElementsAre("spec.replicas: Invalid value: \"string\": spec.replicas "
                  "in body must be of type integer: \"string\""));
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "replicas": 1.5}})"),
              ElementsAre("spec.replicas: Invalid value: \"number\": "
                          "spec.replicas in body must be of type integer: "
                          "\"number\""));
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": 3}})"),
              ElementsAre("spec.image: Invalid value: \"integer\": "
                          "spec.image in body must be of type string: "
                          "\"integer\""));
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "enabled": "yes"}})"),
              ElementsAre(HasSubstr("must be of type boolean: \"string\"")));
  EXPECT_THAT(Errors(*s, R"({"spec": []})"),
              ElementsAre("spec: Invalid value: \"array\": spec in body must "
                          "be of type object: \"array\""));
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "args": {}}})"),
              ElementsAre(HasSubstr("must be of type array: \"object\"")));
  EXPECT_THAT(Errors(*s, "[]"),
              ElementsAre("Invalid value: \"array\": body must be of type "
                          "object: \"array\""));
}

TEST(StructuralSchemaTest, IntegralDoubleIsAnInteger) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "replicas": 2.0}})"),
              IsEmpty());
}

TEST(StructuralSchemaTest, NullOnlyWhenNullable) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "note": null}})"),
              IsEmpty());
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "port": null}})"),
              ElementsAre("spec.port: Invalid value: \"null\": spec.port in "
                          "body must be of type integer: \"null\""));
}

TEST(StructuralSchemaTest, Required) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(Errors(*s, R"({"spec": {}})"),
              ElementsAre("spec.image: Required value"));
}

TEST(StructuralSchemaTest, MinimumAndMaximum) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "replicas": -1}})"),
              ElementsAre("spec.replicas: Invalid value: -1: spec.replicas "
                          "in body should be greater than or equal to 0"));
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "port": 65536}})"),
              ElementsAre("spec.port: Invalid value: 65536: spec.port in "
                          "body should be less than or equal to 65535"));
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "port": 0}})"),
              ElementsAre(HasSubstr("greater than or equal to 1")));
}

TEST(StructuralSchemaTest, ExclusiveBounds) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "ratio": 0}})"),
              ElementsAre("spec.ratio: Invalid value: 0: spec.ratio in body "
                          "should be greater than 0"));
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "ratio": 1}})"),
              ElementsAre("spec.ratio: Invalid value: 1: spec.ratio in body "
                          "should be less than 1"));
}

TEST(StructuralSchemaTest, StringLengthInCharacters) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": ""}})"),
              ElementsAre("spec.image: Invalid value: \"\": spec.image in "
                          "body should be at least 1 chars long"));
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "12345678901"}})"),
              ElementsAre("spec.image: Invalid value: \"12345678901\": "
                          "spec.image in body should be at most 10 chars "
                          "long"));
  // Ten two-byte characters are ten characters.
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "éééééééééé"}})"), IsEmpty());
}

TEST(StructuralSchemaTest, Pattern) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "name": "Abc"}})"),
              ElementsAre("spec.name: Invalid value: \"Abc\": spec.name in "
                          "body should match '^[a-z]+$'"));
}

TEST(StructuralSchemaTest, Enum) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "mode": "x"}})"),
              ElementsAre("spec.mode: Unsupported value: \"x\": supported "
                          "values: \"a\", \"b\""));
}

TEST(StructuralSchemaTest, ItemsAndCounts) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "args": []}})"),
              ElementsAre("spec.args: Invalid value: 0: spec.args in body "
                          "should have at least 1 items"));
  EXPECT_THAT(
      Errors(*s, R"({"spec": {"image": "x", "args": ["a","b","c","d"]}})"),
      ElementsAre("spec.args: Too many: 4: must have at most 3 items"));
  EXPECT_THAT(Errors(*s, R"({"spec": {"image": "x", "args": ["a", 2]}})"),
              ElementsAre("spec.args[1]: Invalid value: \"integer\": "
                          "spec.args[1] in body must be of type string: "
                          "\"integer\""));
}

TEST(StructuralSchemaTest, ReportsEveryViolation) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(
      Errors(*s, R"({"spec": {"replicas": -1, "port": 0, "mode": "c",
          "args": [1, true], "name": "A1"}})"),
      ElementsAre(
          "spec.image: Required value",
          "spec.replicas: Invalid value: -1: spec.replicas in body should "
          "be greater than or equal to 0",
          "spec.port: Invalid value: 0: spec.port in body should be greater "
          "than or equal to 1",
          "spec.name: Invalid value: \"A1\": spec.name in body should match "
          "'^[a-z]+$'",
          "spec.mode: Unsupported value: \"c\": supported values: \"a\", "
          "\"b\"",
          "spec.args[0]: Invalid value: \"integer\": spec.args[0] in body "
          "must be of type string: \"integer\"",
          "spec.args[1]: Invalid value: \"boolean\": spec.args[1] in body "
          "must be of type string: \"boolean\""));
}

TEST(StructuralSchemaTest, AdditionalProperties) {
  auto s = Schema(R"({"type": "object", "properties": {
      "labels": {"type": "object", "maxProperties": 2,
                 "additionalProperties": {"type": "string"}},
      "closed": {"type": "object", "additionalProperties": false,
                 "properties": {"a": {"type": "string"}}}}})");
  EXPECT_THAT(Errors(*s, R"({"labels": {"a": "1", "b": "2"}})"), IsEmpty());
  EXPECT_THAT(Errors(*s, R"({"labels": {"a": 1}})"),
              ElementsAre("labels.a: Invalid value: \"integer\": labels.a in "
                          "body must be of type string: \"integer\""));
  EXPECT_THAT(Errors(*s, R"({"labels": {"a": "", "b": "", "c": ""}})"),
              ElementsAre("labels: Too many: 3: must have at most 2 "
                          "properties"));
  EXPECT_THAT(Errors(*s, R"({"closed": {"a": "x", "b": "y"}})"),
              ElementsAre("closed.b: Forbidden: closed.b in body is a "
                          "forbidden property"));
}

TEST(StructuralSchemaTest, IntOrString) {
  auto s = Schema(R"({"type": "object", "properties": {"port": {
      "x-kubernetes-int-or-string": true,
      "anyOf": [{"type": "integer"}, {"type": "string"}]}}})");
  EXPECT_THAT(Errors(*s, R"({"port": 80})"), IsEmpty());
  EXPECT_THAT(Errors(*s, R"({"port": "http"})"), IsEmpty());
  EXPECT_THAT(Errors(*s, R"({"port": true})"),
              ElementsAre("port: Invalid value: \"boolean\": port in body "
                          "must be of type integer,string: \"boolean\""));
  EXPECT_THAT(Errors(*s, R"({"port": 1.5})"),
              ElementsAre(HasSubstr("integer,string: \"number\"")));
  EXPECT_THAT(Errors(*s, R"({"port": null})"),
              ElementsAre(HasSubstr("integer,string: \"null\"")));
}

TEST(StructuralSchemaTest, PrunesUnknownFields) {
  auto s = Schema(R"({"type": "object", "properties": {
      "spec": {"type": "object", "properties": {
          "a": {"type": "string"},
          "list": {"type": "array", "items": {"type": "object",
                   "properties": {"k": {"type": "string"}}}},
          "map": {"type": "object", "additionalProperties": {
                  "type": "object", "properties": {"v": {"type": "integer"}}}},
          "free": {"type": "object",
                   "x-kubernetes-preserve-unknown-fields": true,
                   "properties": {"inner": {"type": "object",
                       "properties": {"x": {"type": "string"}}}}},
          "untyped": {"x-kubernetes-preserve-unknown-fields": true}}}}})");
  rapidjson::Document obj = Json(R"({
      "apiVersion": "example.org/v1", "kind": "Thing",
      "metadata": {"name": "n", "namespace": "d", "labels": {"a": "b"},
                   "bogus": 1},
      "spec": {"a": "x", "b": "gone",
               "list": [{"k": "1", "extra": 2}],
               "map": {"m1": {"v": 1, "w": 2}},
               "free": {"anything": {"deep": 1},
                        "inner": {"x": "y", "z": "gone"}},
               "untyped": {"q": [1, {"r": 2}]}},
      "status": {"gone": true},
      "top": 1})");
  s->Prune(&obj, obj.GetAllocator());
  EXPECT_EQ(Str(obj),
            R"({"apiVersion":"example.org/v1","kind":"Thing",)"
            R"("metadata":{"name":"n","namespace":"d","labels":{"a":"b"}},)"
            R"("spec":{"a":"x","list":[{"k":"1"}],"map":{"m1":{"v":1}},)"
            R"("free":{"anything":{"deep":1},"inner":{"x":"y"}},)"
            R"("untyped":{"q":[1,{"r":2}]}}})");
}

TEST(StructuralSchemaTest, PruneLeavesWrongTypesForValidate) {
  auto s = Schema(kSpecSchema);
  rapidjson::Document obj = Json(R"({"spec": {"image": {"a": 1}}})");
  auto errors = ToStrings(s->Admit(&obj, obj.GetAllocator()));
  EXPECT_THAT(
      errors,
      ElementsAre(HasSubstr("spec.image in body must be of type string")));
}

TEST(StructuralSchemaTest, RootPreserveUnknownFieldsKeepsEverything) {
  auto s = Schema(R"({"type": "object",
      "x-kubernetes-preserve-unknown-fields": true})");
  rapidjson::Document obj = Json(R"({"a": {"b": [1]}, "c": 2})");
  s->Prune(&obj, obj.GetAllocator());
  EXPECT_EQ(Str(obj), R"({"a":{"b":[1]},"c":2})");
}

TEST(StructuralSchemaTest, AppliesDefaults) {
  auto s = Schema(R"({"type": "object", "properties": {
      "spec": {"type": "object", "default": {}, "properties": {
          "replicas": {"type": "integer", "default": 1},
          "image": {"type": "string", "default": "nginx:1.7.9"},
          "test": {"type": "object", "default": {"path": "/x"},
                   "properties": {
                       "path": {"type": "string", "default": "/"},
                       "port": {"x-kubernetes-int-or-string": true,
                                "default": 80}}},
          "items": {"type": "array", "items": {"type": "object",
                    "properties": {"w": {"type": "integer", "default": 5}}}},
          "note": {"type": "string", "nullable": true, "default": "n"}}}}})");
  rapidjson::Document obj = Json(R"({})");
  s->ApplyDefaults(&obj, obj.GetAllocator());
  EXPECT_EQ(Str(obj), R"({"spec":{"replicas":1,"image":"nginx:1.7.9",)"
                      R"("test":{"path":"/x","port":80},"note":"n"}})");

  rapidjson::Document set = Json(R"({"spec": {"replicas": 3,
      "image": null, "items": [{}, {"w": 1}], "note": null}})");
  s->ApplyDefaults(&set, set.GetAllocator());
  // A null in a non-nullable field is replaced by its default; a null in a
  // nullable one stays.
  EXPECT_EQ(Str(set),
            R"({"spec":{"replicas":3,"items":[{"w":5},{"w":1}],"note":null,)"
            R"("image":"nginx:1.7.9","test":{"path":"/x","port":80}}})");
}

TEST(StructuralSchemaTest, NullWithoutDefaultIsDropped) {
  auto s = Schema(kSpecSchema);
  rapidjson::Document obj = Json(R"({"spec": {"image": "x", "port": null}})");
  EXPECT_THAT(s->Admit(&obj, obj.GetAllocator()), IsEmpty());
  EXPECT_EQ(Str(obj), R"({"spec":{"image":"x","replicas":1}})");
}

TEST(StructuralSchemaTest, AdmitPrunesDefaultsThenValidates) {
  auto s = Schema(kSpecSchema);
  rapidjson::Document obj =
      Json(R"({"apiVersion": "v", "kind": "K", "spec": {"unknown": 1}})");
  auto errors = ToStrings(s->Admit(&obj, obj.GetAllocator()));
  EXPECT_THAT(errors, ElementsAre("spec.image: Required value"));
  EXPECT_EQ(Str(obj), R"({"apiVersion":"v","kind":"K","spec":{"replicas":1}})");
}

TEST(StructuralSchemaTest, RootMetadataMustBeAnObject) {
  auto s = Schema(kSpecSchema);
  EXPECT_THAT(Errors(*s, R"({"metadata": "x"})"),
              ElementsAre(HasSubstr("metadata in body must be of type "
                                    "object")));
  EXPECT_THAT(Errors(*s, R"({"metadata": {}, "apiVersion": "a"})"), IsEmpty());
}

TEST(StructuralSchemaTest, RejectsBadSchemas) {
  struct Case {
    const char* schema;
    absl::StatusCode code;
    const char* message;
  };
  std::vector<Case> cases = {
      {"[]", absl::StatusCode::kInvalidArgument,
       "openAPIV3Schema: Invalid value: \"array\": must be an object"},
      {R"({"type": "thing"})", absl::StatusCode::kInvalidArgument,
       "openAPIV3Schema.type: Unsupported value: \"thing\": supported "
       "values: \"array\", \"boolean\", \"integer\", \"number\", "
       "\"object\", \"string\""},
      {R"({"type": 1})", absl::StatusCode::kInvalidArgument,
       "openAPIV3Schema.type: Invalid value: 1: must be a string"},
      {R"({"properties": {"a": {"minimum": "0"}}})",
       absl::StatusCode::kInvalidArgument,
       "openAPIV3Schema.properties[a].minimum: Invalid value: \"0\": must "
       "be a number"},
      {R"({"properties": {"a": {"maxLength": -1}}})",
       absl::StatusCode::kInvalidArgument,
       "openAPIV3Schema.properties[a].maxLength: Invalid value: -1: must be "
       "a non-negative integer"},
      {R"({"properties": {"a": {"pattern": "("}}})",
       absl::StatusCode::kInvalidArgument,
       "openAPIV3Schema.properties[a].pattern: Invalid value: \"(\": must "
       "be a valid regular expression, but isn't: error parsing regexp: "
       "missing closing ): `(`"},
      {R"({"items": {"pattern": "+"}})", absl::StatusCode::kInvalidArgument,
       "openAPIV3Schema.items.pattern: Invalid value: \"+\": must be a "
       "valid regular expression, but isn't: error parsing regexp: missing "
       "argument to repetition operator: `+`"},
      {R"({"required": "a"})", absl::StatusCode::kInvalidArgument,
       "openAPIV3Schema.required: Invalid value: \"a\": must be a list of "
       "strings"},
      {R"({"items": [{}]})", absl::StatusCode::kInvalidArgument,
       "openAPIV3Schema.items: Invalid value: \"array\": must be a schema "
       "object"},
      {R"({"nullable": "yes"})", absl::StatusCode::kInvalidArgument,
       "openAPIV3Schema.nullable: Invalid value: \"yes\": must be a "
       "boolean"},
      {R"({"enum": "a"})", absl::StatusCode::kInvalidArgument,
       "openAPIV3Schema.enum: Invalid value: \"a\": must be a list"},
      {R"({"oneOf": []})", absl::StatusCode::kUnimplemented,
       "openAPIV3Schema.oneOf: Forbidden: not supported"},
      {R"({"anyOf": []})", absl::StatusCode::kUnimplemented,
       "openAPIV3Schema.anyOf: Forbidden: not supported"},
  };
  for (const Case& c : cases) {
    FieldError error;
    auto s = StructuralSchema::Create(Json(c.schema), &error);
    EXPECT_EQ(s.status().code(), c.code) << c.schema;
    EXPECT_EQ(s.status().message(), c.message) << c.schema;
    EXPECT_EQ(error.ToString(), c.message) << c.schema;
  }
}

TEST(StructuralSchemaTest, PatternIsGoRegexpSyntaxSearchedUnanchored) {
  auto s = Schema(R"({"properties": {
      "a": {"type": "string", "pattern": "\\d{2}"},
      "b": {"type": "string", "pattern": "^(?i)abc$"},
      "c": {"type": "string", "pattern": "^\\p{Greek}+$"}}})");
  EXPECT_THAT(Errors(*s, R"({"a": "x12y", "b": "ABC", "c": "αβγ"})"),
              IsEmpty());
  EXPECT_THAT(Errors(*s, R"({"a": "x1y2", "b": "abcd", "c": "abc"})"),
              ElementsAre(HasSubstr("a in body should match"),
                          HasSubstr("b in body should match"),
                          HasSubstr("c in body should match")));
}

// RE2 needs no stack per character, so a long string that nearly matches
// (a backtracking matcher's worst case) is checked like a short one.
TEST(StructuralSchemaTest, PatternOnLongStringDoesNotRecurse) {
  auto s = Schema(R"({"properties": {"port": {"type": "string",
      "pattern": "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"}}})");
  std::string long_name(1 << 20, 'a');
  std::string text = "{\"port\": \"" + long_name + "\"}";
  EXPECT_THAT(Errors(*s, text.c_str()), IsEmpty());
  long_name.back() = '-';
  text = "{\"port\": \"" + long_name + "\"}";
  EXPECT_THAT(Errors(*s, text.c_str()),
              ElementsAre(HasSubstr("port in body should match")));
}

TEST(StructuralSchemaTest, PatternTooLargeToCompileIsInvalid) {
  auto s = StructuralSchema::Create(
      Json(R"({"properties": {"a": {"pattern": "\\pL{1000}"}}})"));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("must be a valid regular expression, but isn't: "
                        "error parsing regexp: expression too large"));
}

TEST(StructuralSchemaTest, RejectsTooDeepSchema) {
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += R"({"items": )";
  deep += "{}";
  for (int i = 0; i < 100; ++i) deep += "}";
  auto s = StructuralSchema::Create(Json(deep.c_str()));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("schema nests deeper than 64 levels"));
}

TEST(StructuralSchemaTest, IgnoresDocumentationKeywords) {
  auto s = Schema(R"({"type": "object", "description": "d", "title": "t",
      "properties": {"a": {"type": "string", "format": "date-time",
      "example": "x", "x-kubernetes-list-type": "atomic"}}})");
  EXPECT_THAT(Errors(*s, R"({"a": "anything"})"), IsEmpty());
}

}  // namespace
}  // namespace api
}  // namespace kcr
