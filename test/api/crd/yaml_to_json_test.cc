#include "api/crd/yaml_to_json.h"

#include <string>

#include "api/patch/json_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr {
namespace api {
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
  std::string deep(300, '[');
  deep += std::string(300, ']');
  EXPECT_EQ(YamlToJson(deep).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace api
}  // namespace kcr
