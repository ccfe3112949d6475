#include "api/json/yaml_to_json.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "api/json/json_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr {
namespace json {
namespace {

using ::testing::HasSubstr;

std::string Convert(const char* yaml) {
  auto doc = YamlToJson(yaml);
  EXPECT_TRUE(doc.ok()) << doc.status();
  if (!doc.ok()) return "";
  return *JsonToString(**doc);
}

TEST(YamlToJsonTest, ResolvesPlainScalarsLikeKubectl) {
  EXPECT_EQ(Convert("a: 3\nb: -4\nc: 1.5\nd: true\ne: no\nf: null\ng: ~\n"
                    "h:\ni: text\nj: 1e3\nk: 007\n"),
            R"({"a":3,"b":-4,"c":1.5,"d":true,"e":false,"f":null,"g":null,)"
            R"("h":null,"i":"text","j":1000.0,"k":7})");
}

TEST(YamlToJsonTest, QuotedAndTaggedScalarsStayStrings) {
  EXPECT_EQ(Convert("a: \"true\"\nb: '3'\nc: !!str 4\nd: \"\"\n"),
            R"({"a":"true","b":"3","c":"4","d":""})");
}

TEST(YamlToJsonTest, SequencesMapsAndAliases) {
  EXPECT_EQ(Convert("base: &b {x: 1}\nlist: [1, two, {k: v}]\ncopy: *b\n"),
            R"({"base":{"x":1},"list":[1,"two",{"k":"v"}],"copy":{"x":1}})");
}

TEST(YamlToJsonTest, HugeIntegersBecomeNumbers) {
  EXPECT_EQ(Convert("a: 18446744073709551615\nb: 99999999999999999999\n"),
            R"({"a":18446744073709551615,"b":100000000000000000000.0})");
}

TEST(YamlToJsonTest, MultipleDocuments) {
  auto docs = YamlToJsonDocuments("a: 1\n---\n---\nb: 2\n");
  ASSERT_TRUE(docs.ok());
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ(*JsonToString(*(*docs)[1]), R"({"b":2})");
  EXPECT_THAT(std::string(YamlToJson("a: 1\n---\nb: 2\n").status().message()),
              HasSubstr("expected one YAML document, found 2"));
}

TEST(YamlToJsonTest, Errors) {
  EXPECT_THAT(std::string(YamlToJson("a: [1, 2\n").status().message()),
              HasSubstr("malformed YAML at line"));
  EXPECT_THAT(std::string(YamlToJson("? [1]\n: x\n").status().message()),
              HasSubstr("mapping key is not a scalar"));
  EXPECT_THAT(std::string(YamlToJson("a: .inf\n").status().message()),
              HasSubstr("cannot be represented in JSON"));
  EXPECT_THAT(std::string(YamlToJson("a: 1\na: 2\n").status().message()),
              HasSubstr("already set"));
}

// go-yaml refuses bytes that are not UTF-8; so does this.
TEST(YamlToJsonTest, InvalidUtf8IsRefused) {
  EXPECT_EQ(std::string(YamlToJson("a: b\xff\n").status().message()),
            "YAML is not valid UTF-8 at offset 4");
  EXPECT_TRUE(YamlToJson("a: \xc3\xa9\n").ok());
}

// yaml-cpp 0.7's LoadAll loops, adding empty documents until memory runs
// out, on a token that cannot start a node at the top of a document.
TEST(YamlToJsonTest, StrayFlowEntryIsAnErrorNotAnEndlessStream) {
  for (const char* yaml : {",", "a: 1\n---\n,\n", "- a\n,", ",,,"}) {
    auto docs = YamlToJsonDocuments(yaml);
    ASSERT_FALSE(docs.ok()) << yaml;
    EXPECT_THAT(std::string(docs.status().message()),
                HasSubstr("did not find expected node content"))
        << yaml;
  }
}

// As go-yaml: "control characters are not allowed".
TEST(YamlToJsonTest, ControlCharactersAreRefused) {
  for (const std::string& yaml :
       {std::string("a: b\0c\n", 7), std::string("a: \x01\n"),
        std::string("a: \x7f\n"), std::string("a: \xc2\x80\n"),
        std::string("a: \xef\xbf\xbe\n")}) {
    EXPECT_THAT(std::string(YamlToJson(yaml).status().message()),
                HasSubstr("control characters are not allowed"))
        << yaml;
  }
  EXPECT_TRUE(YamlToJson("a: \"tab\there\"\r\nb: \xc2\x85\xc2\xa0\n").ok());
}

// YAML bodies meet the same nesting limit as JSON ones.
TEST(YamlToJsonTest, NestingIsHeldToTheJsonLimit) {
  auto nested = [](int levels) {
    return std::string(levels, '[') + std::string(levels, ']');
  };
  auto at_limit = YamlToJson(nested(api::kMaxJsonDepth));
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  EXPECT_EQ(JsonDepth(**at_limit), api::kMaxJsonDepth);
  const std::string too_deep = absl::StrCat(
      "YAML nests deeper than ", api::kMaxJsonDepth, " levels at line ");
  EXPECT_THAT(
      std::string(
          YamlToJson(nested(api::kMaxJsonDepth + 1)).status().message()),
      HasSubstr(too_deep));
  std::string block;
  for (int i = 0; i <= api::kMaxJsonDepth; ++i) {
    block += std::string(i, ' ') + "a:\n";
  }
  block += std::string(api::kMaxJsonDepth + 1, ' ') + "1\n";
  EXPECT_THAT(std::string(YamlToJson(block).status().message()),
              HasSubstr(too_deep));
  // Deeper than yaml-cpp's own guard: its parser stops first, and the
  // message still says why.
  EXPECT_THAT(std::string(YamlToJson(nested(100000)).status().message()),
              HasSubstr(too_deep));
}

// A few hundred bytes that would expand to billions of values through
// aliases of aliases are refused, not expanded.
TEST(YamlToJsonTest, AliasExpansionIsBounded) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    const char prev = static_cast<char>(c - 1);
    bomb += absl::StrCat(std::string(1, c), ": &", std::string(1, c), " [");
    for (int i = 0; i < 10; ++i) {
      bomb += absl::StrCat(i ? ", " : "", "*", std::string(1, prev));
    }
    bomb += "]\n";
  }
  EXPECT_THAT(std::string(YamlToJson(bomb).status().message()),
              HasSubstr("YAML expands to too many values through aliases"));
  // An anchor inside itself would expand forever.
  EXPECT_EQ(YamlToJson("a: &a [*a]\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  // Modest reuse is fine.
  auto reuse = YamlToJson(
      "base: &b {image: nginx, port: 80}\n"
      "one: *b\ntwo: *b\n");
  ASSERT_TRUE(reuse.ok()) << reuse.status();
  EXPECT_EQ(*JsonToString(**reuse), R"({"base":{"image":"nginx","port":80},)"
                                    R"("one":{"image":"nginx","port":80},)"
                                    R"("two":{"image":"nginx","port":80}})");
}

}  // namespace
}  // namespace json
}  // namespace kcr
