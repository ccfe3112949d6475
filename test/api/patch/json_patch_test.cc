#include "api/patch/json_patch.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/api/json/json_test_util.h"

namespace kcr {
namespace api {
namespace {

using ::kcr::json::testing::DeepArray;
using ::kcr::json::testing::Json;
using ::kcr::json::testing::JsonEq;
using ::kcr::json::testing::Str;
using ::testing::HasSubstr;

struct Example {
  const char* name;
  const char* target;
  const char* patch;
  const char* result;  // nullptr: the patch must fail
};

// RFC 6902, Appendix A.
const Example kRfcExamples[] = {
    {"A.1 add object member", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/baz","value":"qux"}])",
     R"({"baz":"qux","foo":"bar"})"},
    {"A.2 add array element", R"({"foo":["bar","baz"]})",
     R"([{"op":"add","path":"/foo/1","value":"qux"}])",
     R"({"foo":["bar","qux","baz"]})"},
    {"A.3 remove object member", R"({"baz":"qux","foo":"bar"})",
     R"([{"op":"remove","path":"/baz"}])", R"({"foo":"bar"})"},
    {"A.4 remove array element", R"({"foo":["bar","qux","baz"]})",
     R"([{"op":"remove","path":"/foo/1"}])", R"({"foo":["bar","baz"]})"},
    {"A.5 replace", R"({"baz":"qux","foo":"bar"})",
     R"([{"op":"replace","path":"/baz","value":"boo"}])",
     R"({"baz":"boo","foo":"bar"})"},
    {"A.6 move value",
     R"({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}})",
     R"([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}])",
     R"({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})"},
    {"A.7 move array element", R"({"foo":["all","grass","cows","eat"]})",
     R"([{"op":"move","from":"/foo/1","path":"/foo/3"}])",
     R"({"foo":["all","cows","eat","grass"]})"},
    {"A.8 test success", R"({"baz":"qux","foo":["a",2,"c"]})",
     R"([{"op":"test","path":"/baz","value":"qux"},
         {"op":"test","path":"/foo/1","value":2}])",
     R"({"baz":"qux","foo":["a",2,"c"]})"},
    {"A.9 test error", R"({"baz":"qux"})",
     R"([{"op":"test","path":"/baz","value":"bar"}])", nullptr},
    {"A.10 add nested member", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/child","value":{"grandchild":{}}}])",
     R"({"foo":"bar","child":{"grandchild":{}}})"},
    {"A.11 ignore unrecognized elements", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/baz","value":"qux","xyz":123}])",
     R"({"foo":"bar","baz":"qux"})"},
    {"A.12 add to nonexistent target", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/baz/bat","value":"qux"}])", nullptr},
    {"A.13 invalid patch document", R"({"foo":"bar"})",
     R"([{"op":"add","path":"/baz","value":"qux","op":"remove"}])", nullptr},
    {"A.14 ~ escape ordering", R"({"/":9,"~1":10})",
     R"([{"op":"test","path":"/~01","value":10}])", R"({"/":9,"~1":10})"},
    {"A.15 comparing strings and numbers", R"({"/":9,"~1":10})",
     R"([{"op":"test","path":"/~01","value":"10"}])", nullptr},
    {"A.16 adding an array value", R"({"foo":["bar"]})",
     R"([{"op":"add","path":"/foo/-","value":["abc","def"]}])",
     R"({"foo":["bar",["abc","def"]]})"},
};

// More cases: array index rules, root, move/copy, numbers.
const Example kMoreExamples[] = {
    {"add at size appends", R"([1,2])",
     R"([{"op":"add","path":"/2","value":3}])", R"([1,2,3])"},
    {"add at 0", R"([1,2])", R"([{"op":"add","path":"/0","value":0}])",
     R"([0,1,2])"},
    {"add past size", R"([1,2])", R"([{"op":"add","path":"/3","value":3}])",
     nullptr},
    {"leading zero", R"([1,2])", R"([{"op":"add","path":"/01","value":3}])",
     nullptr},
    {"negative index", R"([1,2])", R"([{"op":"remove","path":"/-1"}])",
     nullptr},
    {"replace at size", R"([1,2])",
     R"([{"op":"replace","path":"/2","value":3}])", nullptr},
    {"remove dash", R"([1,2])", R"([{"op":"remove","path":"/-"}])", nullptr},
    {"remove at size", R"([1,2])", R"([{"op":"remove","path":"/2"}])", nullptr},
    {"add replaces member", R"({"a":1})",
     R"([{"op":"add","path":"/a","value":2}])", R"({"a":2})"},
    {"add whole document", R"({"a":1})",
     R"([{"op":"add","path":"","value":[1]}])", R"([1])"},
    {"replace whole document", R"({"a":1})",
     R"([{"op":"replace","path":"","value":"x"}])", R"("x")"},
    {"remove whole document", R"({"a":1})", R"([{"op":"remove","path":""}])",
     nullptr},
    {"empty key", R"({"":1})", R"([{"op":"replace","path":"/","value":2}])",
     R"({"":2})"},
    {"add into scalar", R"({"a":1})",
     R"([{"op":"add","path":"/a/b","value":2}])", nullptr},
    {"move into own child", R"({"a":{"b":1}})",
     R"([{"op":"move","from":"/a","path":"/a/c"}])", nullptr},
    {"move onto itself", R"({"a":{"b":1}})",
     R"([{"op":"move","from":"/a","path":"/a"}])", R"({"a":{"b":1}})"},
    {"move to sibling prefix", R"({"a":1})",
     R"([{"op":"move","from":"/a","path":"/ab"}])", R"({"ab":1})"},
    {"move missing from", R"({"a":1})",
     R"([{"op":"move","from":"/x","path":"/y"}])", nullptr},
    {"copy", R"({"a":{"b":[1]}})",
     R"([{"op":"copy","from":"/a","path":"/c"},
         {"op":"add","path":"/c/b/-","value":2}])",
     R"({"a":{"b":[1]},"c":{"b":[1,2]}})"},
    {"copy into own child", R"({"a":{"b":1}})",
     R"([{"op":"copy","from":"/a","path":"/a/c"}])",
     R"({"a":{"b":1,"c":{"b":1}}})"},
    {"test numbers by value", R"({"a":1,"b":[1.0,{"c":2}]})",
     R"([{"op":"test","path":"/a","value":1.0},
         {"op":"test","path":"/b","value":[1,{"c":2.0}]}])",
     R"({"a":1,"b":[1.0,{"c":2}]})"},
    {"test objects unordered", R"({"a":{"x":1,"y":2}})",
     R"([{"op":"test","path":"/a","value":{"y":2,"x":1}}])",
     R"({"a":{"x":1,"y":2}})"},
    {"test null value", R"({"a":null})",
     R"([{"op":"test","path":"/a","value":null}])", R"({"a":null})"},
    {"test missing", R"({})", R"([{"op":"test","path":"/a","value":null}])",
     nullptr},
    {"empty patch", R"({"a":1})", R"([])", R"({"a":1})"},
    {"add null value", R"({})", R"([{"op":"add","path":"/a","value":null}])",
     R"({"a":null})"},
};

void RunExamples(const Example* examples, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const Example& e = examples[i];
    rapidjson::Document target = Json(e.target);
    rapidjson::Document patch = Json(e.patch);
    absl::StatusOr<rapidjson::Document> got = ApplyJsonPatch(target, patch);
    if (e.result == nullptr) {
      EXPECT_FALSE(got.ok()) << e.name << ": got " << Str(*got);
      if (!got.ok()) {
        EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
      }
      continue;
    }
    ASSERT_TRUE(got.ok()) << e.name << ": " << got.status();
    EXPECT_TRUE(JsonEq(Json(e.result), *got)) << e.name;
  }
}

TEST(JsonPatchTest, RfcAppendixExamples) {
  RunExamples(kRfcExamples, sizeof(kRfcExamples) / sizeof(kRfcExamples[0]));
}

TEST(JsonPatchTest, MoreExamples) {
  RunExamples(kMoreExamples, sizeof(kMoreExamples) / sizeof(kMoreExamples[0]));
}

TEST(JsonPatchTest, ErrorsNameOperation) {
  struct Case {
    const char* patch;
    const char* message;
  } cases[] = {
      {R"([{"op":"test","path":"/a","value":1},{"op":"add","path":"/b","value":1},
          {"op":"replace","path":"/spec/x","value":1}])",
       "operation 2 (replace /spec/x): path not found"},
      {R"([{"op":"test","path":"/a","value":2}])",
       "operation 0 (test /a): test failed"},
      {R"([{"op":"add","path":"/l/01","value":2}])",
       "operation 0 (add /l/01): invalid array index \"01\""},
      {R"([{"op":"add","path":"/l/5","value":2}])",
       "array index 5 out of bounds (size 2)"},
      {R"([{"op":"move","from":"/l","path":"/l/0"}])",
       "cannot move a value into one of its own children"},
      {R"([{"op":"copy","from":"/nope","path":"/x"}])",
       "operation 0 (copy /x): \"from\" path not found"},
      {R"([{"op":"copy","path":"/x"}])", "missing \"from\""},
      {R"([{"op":"copy","from":1,"path":"/x"}])", "\"from\" must be a string"},
      {R"([{"op":"copy","from":"x","path":"/x"}])",
       "\"from\": invalid JSON pointer"},
      {R"([{"op":"add","path":"/x"}])",
       "operation 0 (add /x): missing \"value\""},
      {R"([{"op":"replace","path":"/a"}])", "missing \"value\""},
      {R"([{"op":"frob","path":"/a"}])", "\"op\" must be one of"},
      {R"([{"op":"add","value":1}])", "operation 0 (add): missing \"path\""},
      {R"([{"op":"add","path":3,"value":1}])", "\"path\" must be a string"},
      {R"([{"path":"/a"}])", "operation 0: missing \"op\""},
      {R"([{"op":1,"path":"/a"}])", "\"op\" must be a string"},
      {R"([1])", "operation 0: not an object"},
      {R"({"op":"add"})", "must be an array of operations"},
      {R"([{"op":"add","path":"a","value":1}])", "must start with '/'"},
      {R"([{"op":"add","path":"/a~2","value":1}])",
       "'~' must be followed by '0' or '1'"},
      {R"([{"op":"add","path":"/a~","value":1}])", "'~' must be followed"},
      {R"([{"op":"remove","path":"/a","path":"/b"}])", "duplicate member"},
  };
  for (const Case& c : cases) {
    rapidjson::Document doc = Json(R"({"a":1,"l":[1,2]})");
    absl::Status s = ApplyJsonPatch(Json(c.patch), &doc);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.patch;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message)) << c.patch;
    // Atomic: earlier operations that succeeded are not visible.
    EXPECT_TRUE(JsonEq(Json(R"({"a":1,"l":[1,2]})"), doc)) << c.patch;
  }
}

TEST(JsonPatchTest, InPlaceSuccess) {
  rapidjson::Document doc = Json(R"({"spec":{"replicas":1}})");
  ASSERT_TRUE(ApplyJsonPatch(Json(R"([
      {"op":"replace","path":"/spec/replicas","value":3},
      {"op":"add","path":"/metadata","value":{"labels":{"a/b":"c"}}},
      {"op":"test","path":"/metadata/labels/a~1b","value":"c"}])"),
                             &doc)
                  .ok());
  EXPECT_TRUE(JsonEq(
      Json(R"({"spec":{"replicas":3},"metadata":{"labels":{"a/b":"c"}}})"),
      doc));
}

TEST(JsonPatchTest, Strings) {
  absl::StatusOr<std::string> got = ApplyJsonPatch(
      R"({"a":[1,2]})", R"([{"op":"add","path":"/a/-","value":3}])");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, R"({"a":[1,2,3]})");
  EXPECT_THAT(std::string(ApplyJsonPatch("{}", "[").status().message()),
              HasSubstr("JSON patch: invalid JSON"));
  EXPECT_THAT(std::string(ApplyJsonPatch("{", "[]").status().message()),
              HasSubstr("target: invalid JSON"));
}

TEST(JsonPatchTest, CopyGrowthIsBounded) {
  // Each copy doubles the document: 40 of them would need 2^40 values.
  std::string patch = "[";
  for (int i = 0; i < 40; ++i) {
    if (i > 0) patch += ",";
    patch += R"({"op":"copy","from":"/a","path":"/a/-"})";
  }
  patch += "]";
  JsonPatchOptions options;
  options.max_copied_bytes = 1 << 20;
  absl::StatusOr<std::string> got =
      ApplyJsonPatch(R"({"a":[1]})", patch, options);
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("copies exceed the limit"));
}

TEST(JsonPatchTest, DepthIsBounded) {
  rapidjson::Document deep;
  DeepArray(100000, &deep);
  EXPECT_FALSE(ApplyJsonPatch(deep, Json("[]")).ok());
  EXPECT_FALSE(ApplyJsonPatch(Json("{}"), deep).ok());
  EXPECT_FALSE(ApplyJsonPatch("{}", std::string(100000, '[')).ok());

  // Copying a document into its own deepest child grows its depth; the
  // result may not pass the limit.
  JsonPatchOptions options;
  options.max_depth = 10;
  std::string target = "{\"a\":[[[[1]]]]}";
  std::string patch =
      R"([{"op":"copy","from":"/a","path":"/a/0/0/0/-"},
          {"op":"copy","from":"/a","path":"/a/0/0/0/-"}])";
  absl::StatusOr<std::string> got = ApplyJsonPatch(target, patch, options);
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("operation 1 (copy /a/0/0/0/-): result would nest "
                        "deeper than 10 levels"));
}

TEST(JsonPointerTest, Parse) {
  using V = std::vector<std::string>;
  EXPECT_EQ(*ParseJsonPointer(""), V{});
  EXPECT_EQ(*ParseJsonPointer("/"), V{""});
  EXPECT_EQ(*ParseJsonPointer("/a~1b/~0c/~01"), (V{"a/b", "~c", "~1"}));
  EXPECT_EQ(*ParseJsonPointer("/a//b/"), (V{"a", "", "b", ""}));
  EXPECT_FALSE(ParseJsonPointer("a").ok());
  EXPECT_FALSE(ParseJsonPointer("/~").ok());
  EXPECT_FALSE(ParseJsonPointer("/~x").ok());
}

// RFC 6901 section 5.
TEST(JsonPointerTest, Resolve) {
  rapidjson::Document d = Json(R"({
      "foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4,
      "i\\j": 5, "k\"l": 6, " ": 7, "m~n": 8})");
  EXPECT_EQ(ResolveJsonPointer(d, ""), &d);
  EXPECT_EQ(Str(*ResolveJsonPointer(d, "/foo")), R"(["bar","baz"])");
  EXPECT_EQ(Str(*ResolveJsonPointer(d, "/foo/0")), R"("bar")");
  const std::pair<const char*, int> ints[] = {
      {"/", 0},     {"/a~1b", 1}, {"/c%d", 2}, {"/e^f", 3}, {"/g|h", 4},
      {"/i\\j", 5}, {"/k\"l", 6}, {"/ ", 7},   {"/m~0n", 8}};
  for (const auto& [pointer, want] : ints) {
    const rapidjson::Value* v = ResolveJsonPointer(d, pointer);
    ASSERT_NE(v, nullptr) << pointer;
    EXPECT_EQ(v->GetInt(), want) << pointer;
  }
  EXPECT_EQ(ResolveJsonPointer(d, "/foo/2"), nullptr);
  EXPECT_EQ(ResolveJsonPointer(d, "/foo/00"), nullptr);
  EXPECT_EQ(ResolveJsonPointer(d, "/foo/-"), nullptr);
  EXPECT_EQ(ResolveJsonPointer(d, "/nope"), nullptr);
  EXPECT_EQ(ResolveJsonPointer(d, "/foo/0/x"), nullptr);
  EXPECT_EQ(ResolveJsonPointer(d, "bad"), nullptr);
}

}  // namespace
}  // namespace api
}  // namespace kcr
