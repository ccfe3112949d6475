#include "api/json/json_util.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/api/json/json_test_util.h"

namespace kcr {
namespace json {
namespace {

using ::kcr::json::testing::DeepArray;
using ::kcr::json::testing::Json;
using ::testing::HasSubstr;

TEST(JsonUtilTest, ParseErrorsNameOffset) {
  rapidjson::Document d;
  absl::Status s = ParseJson("{\"a\": tru}", &d);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("invalid JSON at offset"));
  EXPECT_FALSE(ParseJson("", &d).ok());
  EXPECT_FALSE(ParseJson("{} x", &d).ok());
  EXPECT_FALSE(ParseJson(std::string("\"a\0b\"", 5), &d).ok());
  EXPECT_FALSE(ParseJson("\"\xff\"", &d).ok());  // not UTF-8
  EXPECT_TRUE(ParseJson("  {\"a\": [1, 2.5, null]}  ", &d).ok());
}

TEST(JsonUtilTest, InvalidUtf8IsReplacedByteByByteAsGoDoes) {
  std::string out = "untouched";
  EXPECT_FALSE(ReplaceInvalidUtf8("plain \xc3\xa9 \xf0\x9f\x98\x80", &out));
  EXPECT_EQ(out, "untouched");
  EXPECT_EQ(ValidUtf8Prefix("ab\xff"
                            "cd"),
            2u);
  const std::string fffd = "\xef\xbf\xbd";
  struct Case {
    std::string in, out;
  } cases[] = {
      {"a\xff"
       "b",
       "a" + fffd + "b"},
      // A sequence cut short: each byte stands alone.
      {"\xe2\x82", fffd + fffd},
      // Overlong forms, surrogates and code points past U+10FFFF.
      {"\xc0\xaf", fffd + fffd},
      {"\xe0\x80\xaf", fffd + fffd + fffd},
      {"\xed\xa0\x80", fffd + fffd + fffd},
      {"\xf4\x90\x80\x80", fffd + fffd + fffd + fffd},
      // Valid sequences around the invalid ones are kept.
      {"\xc3\xa9\x80\xe2\x82\xac", "\xc3\xa9" + fffd + "\xe2\x82\xac"},
  };
  for (const Case& c : cases) {
    std::string got;
    EXPECT_TRUE(ReplaceInvalidUtf8(c.in, &got));
    EXPECT_EQ(got, c.out);
    EXPECT_EQ(ValidUtf8Prefix(got), got.size());
  }
}

TEST(JsonUtilTest, DepthLimitNamesTheFirstContainerPastIt) {
  rapidjson::Document d;
  EXPECT_EQ(std::string(ParseJson(R"([{"a":[1]}])", &d, 2).message()),
            "JSON nests deeper than 2 levels at offset 6");
  EXPECT_TRUE(d.IsNull());
  EXPECT_TRUE(ParseJson(R"([{"a":1},{"b":2}])", &d, 2).ok());
  EXPECT_EQ(JsonDepth(d), 2);
}

TEST(JsonUtilTest, DeepNestingIsRefusedWithoutOverflow) {
  rapidjson::Document d;
  const std::string open(100000, '[');
  EXPECT_FALSE(ParseJson(open, &d).ok());
  const std::string closed = open + std::string(100000, ']');
  absl::Status s = ParseJson(closed, &d);
  EXPECT_THAT(
      std::string(s.message()),
      HasSubstr(absl::StrCat("nests deeper than ", api::kMaxJsonDepth)));
  std::string ok_depth = std::string(api::kMaxJsonDepth, '[') +
                         std::string(api::kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseJson(ok_depth, &d).ok());
  EXPECT_EQ(JsonDepth(d), api::kMaxJsonDepth);

  rapidjson::Document deep;
  DeepArray(100000, &deep);
  EXPECT_EQ(JsonDepth(deep), api::kMaxJsonDepth + 1);
  EXPECT_EQ(JsonDepth(deep, 200000), 100000);
  EXPECT_FALSE(JsonToString(deep).ok());
  EXPECT_TRUE(JsonDeepEqual(deep, deep));
}

TEST(JsonUtilTest, Depth) {
  EXPECT_EQ(JsonDepth(Json("1")), 0);
  EXPECT_EQ(JsonDepth(Json("[]")), 1);
  EXPECT_EQ(JsonDepth(Json("{\"a\": [1, {\"b\": []}], \"c\": 1}")), 4);
}

TEST(JsonUtilTest, DeepEqual) {
  struct Case {
    const char* a;
    const char* b;
    bool equal;
  } cases[] = {
      {"1", "1.0", true},
      {"1", "1.5", false},
      {"-1", "18446744073709551615", false},
      {"9223372036854775807", "9223372036854775807", true},
      {"0", "-0.0", true},
      {"1e2", "100", true},
      {"\"a\"", "\"a\"", true},
      {"\"a\"", "\"b\"", false},
      {"null", "false", false},
      {"true", "true", true},
      {"[1,2]", "[2,1]", false},
      {"[1,[2]]", "[1,[2.0]]", true},
      {"{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}", true},
      {"{\"a\":1}", "{\"a\":1,\"b\":2}", false},
      {"{\"a\":1}", "{\"b\":1}", false},
      {"{}", "[]", false},
      {"\"1\"", "1", false},
      // A repeated key: a document equals its own copy.
      {"{\"a\":1,\"a\":2}", "{\"a\":1,\"a\":2}", true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(JsonDeepEqual(Json(c.a), Json(c.b)), c.equal)
        << c.a << " vs " << c.b;
  }
}

TEST(StringMemberTest, OnlyAStringMemberOfAnObject) {
  const rapidjson::Document d =
      Json(R"({"kind":"Pod","n":1,"nil":null,"empty":""})");
  EXPECT_EQ(StringMember(d, "kind"), "Pod");
  EXPECT_EQ(StringMember(d, "empty"), "");
  EXPECT_EQ(StringMember(d, "n"), "");
  EXPECT_EQ(StringMember(d, "nil"), "");
  EXPECT_EQ(StringMember(d, "missing"), "");
  EXPECT_EQ(StringMember(Json("[\"kind\"]"), "kind"), "");
  EXPECT_EQ(StringMember(Json("\"kind\""), "kind"), "");
}

}  // namespace
}  // namespace json
}  // namespace kcr
