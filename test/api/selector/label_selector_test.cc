#include "api/selector/label_selector.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace {

using ::testing::HasSubstr;

LabelSelector MustParse(std::string_view s) {
  absl::StatusOr<LabelSelector> sel = LabelSelector::Parse(s);
  EXPECT_TRUE(sel.ok()) << s << ": " << sel.status();
  return sel.ok() ? *sel : LabelSelector::Nothing();
}

rapidjson::Document Json(const char* text) {
  rapidjson::Document d;
  d.Parse(text);
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

TEST(LabelSelectorParseTest, CanonicalStrings) {
  struct Case {
    const char* in;
    const char* out;
  } cases[] = {
      {"", ""},
      {"   ", ""},
      {"x=a", "x=a"},
      {"x==a", "x==a"},
      {"x!=a", "x!=a"},
      {"x", "x"},
      {"!x", "!x"},
      {"x=", "x="},
      {"x= ", "x="},
      {"x=a,y!=b", "x=a,y!=b"},
      {"y!=b,x=a", "x=a,y!=b"},
      {"  x = a , y  in ( b , a )  ", "x=a,y in (a,b)"},
      {"x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"},
      {"x in (b,a,b)", "x in (a,b)"},
      {"c=d,!b,a in (y,x)", "a in (x,y),!b,c=d"},
      {"in in (in,notin)", "in in (in,notin)"},
      {"notin notin (in)", "notin notin (in)"},
      {"x=in", "x=in"},
      {"x>1", "x>1"},
      {"x<10", "x<10"},
      {"example.com/app=web", "example.com/app=web"},
      {"a.b-c_d=E.F-g_0", "a.b-c_d=E.F-g_0"},
      {"x\t=\na", "x=a"},
      // Same key: sorted by operator name, then values.
      {"x notin (a),x in (b),x", "x,x in (b),x notin (a)"},
      {"x=b,x=a", "x=a,x=b"},
  };
  for (const Case& c : cases) {
    LabelSelector s = MustParse(c.in);
    EXPECT_EQ(s.ToString(), c.out) << c.in;
    // The canonical string parses back to the same selector.
    EXPECT_EQ(MustParse(s.ToString()), s) << c.in;
  }
}

TEST(LabelSelectorParseTest, EmptySelectsEverything) {
  LabelSelector s = MustParse("");
  EXPECT_TRUE(s.Empty());
  EXPECT_TRUE(s.Matches(LabelMap{}));
  EXPECT_TRUE(s.Matches(LabelMap{{"a", "b"}}));
  EXPECT_EQ(s, LabelSelector::Everything());
}

TEST(LabelSelectorParseTest, BadInputPointsAtToken) {
  struct Case {
    const char* in;
    const char* message;
  } cases[] = {
      {"x=a,!!y",
       "unable to parse requirement: at 5 \"!\": expected identifier"},
      {"x=a||y=b", "at 2 \"a||y\": invalid label value"},
      {"x=a,", "at 4 (end of string): expected '!' or identifier after ','"},
      {",x", "at 0 \",\": expected '!', identifier or end of string"},
      {"x=a)", "at 3 \")\": expected ',' or end of string"},
      {"x in a", "at 5 \"a\": expected '('"},
      {"x in (a", "at 7 (end of string): expected ',', ')' or identifier"},
      {"x in (a b)", "at 8 \"b\": expected ',', ')' or identifier"},
      {"x (a)", "at 2 \"(\": expected one of"},
      {"x y", "at 2 \"y\": expected one of"},
      {"x=(", "at 2 \"(\": expected identifier"},
      {"x=a=b", "at 3 \"=\": expected ',' or end of string"},
      {"!x=a", "at 2 \"=\": expected ',' or end of string"},
      {"-x=a", "at 0 \"-x\": invalid label key"},
      {"x/=a", "at 0 \"x/\": invalid label key: name part must be non-empty"},
      {"/x=a", "prefix part must be non-empty"},
      {"Ex.com/x=a", "prefix part must be a lowercase RFC 1123 subdomain"},
      {"a/b/c", "invalid label key"},
      {"x>a",
       "at 2 \"a\": for '>', '<' operators, the value must be an integer"},
      {"x<", "the value must be an integer"},
      {"x=a b", "at 4 \"b\": expected ',' or end of string"},
      {"x=-a", "invalid label value"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<LabelSelector> s = LabelSelector::Parse(c.in);
    ASSERT_FALSE(s.ok()) << c.in;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << c.in;
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(c.message))
        << c.in;
  }
}

TEST(LabelSelectorParseTest, LengthLimits) {
  const std::string name63(63, 'a');
  const std::string name64(64, 'a');
  EXPECT_TRUE(LabelSelector::Parse(name63 + "=" + name63).ok());
  EXPECT_FALSE(LabelSelector::Parse(name64).ok());
  EXPECT_FALSE(LabelSelector::Parse("a=" + name64).ok());
  std::string prefix253;
  while (prefix253.size() < 253) prefix253 += "abcdefghi.";
  prefix253.resize(253);
  prefix253.back() = 'z';
  EXPECT_TRUE(LabelSelector::Parse(prefix253 + "/x").ok());
  EXPECT_FALSE(LabelSelector::Parse(prefix253 + "z/x").ok());
}

TEST(LabelSelectorParseTest, ArbitraryBytesNeverCrash) {
  const std::string inputs[] = {std::string("a\0b=c", 5),
                                "\xff\xfe",
                                "((((",
                                "))))",
                                "!=!=!=",
                                "a in (((",
                                "<>",
                                "=====",
                                "a,,,b",
                                std::string(10000, '!')};
  for (const std::string& in : inputs) {
    absl::StatusOr<LabelSelector> s = LabelSelector::Parse(in);
    EXPECT_FALSE(s.ok()) << in;
  }
}

TEST(LabelSelectorMatchTest, Operators) {
  const LabelMap labels = {
      {"env", "prod"}, {"tier", "web"}, {"n", "5"}, {"empty", ""}};
  struct Case {
    const char* selector;
    bool match;
  } cases[] = {
      {"env=prod", true},
      {"env==prod", true},
      {"env=qa", false},
      {"env!=qa", true},
      {"env!=prod", false},
      {"missing!=x", true},  // absent keys match != and notin
      {"missing notin (x)", true},
      {"missing=x", false},
      {"missing in (x)", false},
      {"env in (qa,prod)", true},
      {"env in (qa)", false},
      {"env notin (qa)", true},
      {"env notin (prod,qa)", false},
      {"env", true},
      {"missing", false},
      {"!missing", true},
      {"!env", false},
      {"empty=", true},
      {"empty", true},
      {"empty in ()", true},
      {"missing=", false},
      {"n>4", true},
      {"n>5", false},
      {"n<6", true},
      {"env>1", false},  // not an integer: never matches
      {"missing<1", false},
      {"env=prod,tier=web", true},
      {"env=prod,tier=db", false},
  };
  for (const Case& c : cases) {
    LabelSelector s = MustParse(c.selector);
    EXPECT_EQ(s.Matches(labels), c.match) << c.selector;
  }
}

TEST(LabelSelectorMatchTest, JsonLabels) {
  rapidjson::Document labels = Json(R"({"app": "web", "n": 3, "v": "1"})");
  EXPECT_TRUE(MustParse("app=web").Matches(&labels));
  // A non-string label value is treated as absent.
  EXPECT_FALSE(MustParse("n").Matches(&labels));
  EXPECT_TRUE(MustParse("!n").Matches(&labels));
  EXPECT_TRUE(MustParse("!app2").Matches(nullptr));
  EXPECT_FALSE(MustParse("app").Matches(nullptr));
  rapidjson::Document not_object = Json("[1]");
  EXPECT_TRUE(MustParse("").Matches(&not_object));
  EXPECT_FALSE(MustParse("app").Matches(&not_object));
}

TEST(LabelSelectorTest, EverythingAndNothing) {
  LabelSelector nothing = LabelSelector::Nothing();
  EXPECT_FALSE(nothing.Matches(LabelMap{}));
  EXPECT_FALSE(nothing.Empty());
  EXPECT_TRUE(nothing.IsNothing());
  EXPECT_EQ(nothing.ToString(), "");
  EXPECT_NE(nothing, LabelSelector::Everything());
  EXPECT_TRUE(LabelSelector::Everything().Matches(LabelMap{{"a", "b"}}));
}

TEST(LabelSelectorTest, SelectorFromSet) {
  LabelSelector s = LabelSelector::SelectorFromSet({{"b", "2"}, {"a", "1"}});
  EXPECT_EQ(s.ToString(), "a=1,b=2");
  EXPECT_TRUE(s.Matches(LabelMap{{"a", "1"}, {"b", "2"}, {"c", "3"}}));
  EXPECT_FALSE(s.Matches(LabelMap{{"a", "1"}}));
  EXPECT_TRUE(LabelSelector::SelectorFromSet({}).Empty());
  EXPECT_FALSE(LabelSelector::ValidatedSelectorFromSet({{"a b", "1"}}).ok());
  EXPECT_TRUE(LabelSelector::ValidatedSelectorFromSet({{"a", "1"}}).ok());
  EXPECT_EQ(s.RequiresExactMatch("a"), "1");
  EXPECT_EQ(s.RequiresExactMatch("z"), std::nullopt);
  EXPECT_EQ(MustParse("a in (x,y)").RequiresExactMatch("a"), std::nullopt);
}

TEST(LabelSelectorTest, AddKeepsCanonicalOrder) {
  absl::StatusOr<LabelRequirement> r =
      LabelRequirement::Create("a", SelectorOperator::kIn, {"y", "x", "x"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->values(), (std::vector<std::string>{"x", "y"}));
  LabelSelector s = MustParse("b=1").Add(*r);
  EXPECT_EQ(s.ToString(), "a in (x,y),b=1");
}

TEST(LabelRequirementTest, CreateValidates) {
  EXPECT_FALSE(LabelRequirement::Create("a", SelectorOperator::kIn, {}).ok());
  EXPECT_FALSE(
      LabelRequirement::Create("a", SelectorOperator::kEquals, {"x", "y"})
          .ok());
  EXPECT_FALSE(
      LabelRequirement::Create("a", SelectorOperator::kExists, {"x"}).ok());
  EXPECT_FALSE(
      LabelRequirement::Create("a", SelectorOperator::kGreaterThan, {"x"})
          .ok());
  EXPECT_FALSE(
      LabelRequirement::Create("a", SelectorOperator::kEquals, {"a b"}).ok());
  EXPECT_FALSE(
      LabelRequirement::Create("", SelectorOperator::kExists, {}).ok());
  EXPECT_TRUE(
      LabelRequirement::Create("a", SelectorOperator::kLessThan, {"12"}).ok());
}

TEST(FromLabelSelectorTest, MatchLabelsAndExpressions) {
  rapidjson::Document d = Json(R"({
    "matchLabels": {"app": "web", "tier": "front"},
    "matchExpressions": [
      {"key": "env", "operator": "In", "values": ["qa", "prod"]},
      {"key": "canary", "operator": "DoesNotExist"},
      {"key": "zone", "operator": "NotIn", "values": ["b"]},
      {"key": "owner", "operator": "Exists", "values": []}
    ]})");
  absl::StatusOr<LabelSelector> s = LabelSelector::FromLabelSelector(d);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ToString(),
            "app=web,!canary,env in (prod,qa),owner,tier=front,zone notin (b)");
  EXPECT_TRUE(s->Matches(LabelMap{
      {"app", "web"}, {"tier", "front"}, {"env", "qa"}, {"owner", "me"}}));
  EXPECT_FALSE(s->Matches(LabelMap{{"app", "web"},
                                   {"tier", "front"},
                                   {"env", "qa"},
                                   {"owner", "me"},
                                   {"canary", "1"}}));
}

TEST(FromLabelSelectorTest, NullAndEmpty) {
  rapidjson::Document null_doc = Json("null");
  absl::StatusOr<LabelSelector> nothing =
      LabelSelector::FromLabelSelector(null_doc);
  ASSERT_TRUE(nothing.ok());
  EXPECT_TRUE(nothing->IsNothing());
  rapidjson::Document empty =
      Json(R"({"matchLabels": {}, "matchExpressions": null})");
  absl::StatusOr<LabelSelector> everything =
      LabelSelector::FromLabelSelector(empty);
  ASSERT_TRUE(everything.ok());
  EXPECT_TRUE(everything->Empty());
}

TEST(FromLabelSelectorTest, BadInput) {
  struct Case {
    const char* json;
    const char* message;
  } cases[] = {
      {"[]", "must be an object"},
      {R"({"matchLabels": []})", "matchLabels: must be an object"},
      {R"({"matchLabels": {"a": 1}})", "matchLabels[a]: must be a string"},
      {R"({"matchLabels": {"a b": "1"}})", "invalid label key"},
      {R"({"matchLabels": {"a": "-"}})", "invalid label value"},
      {R"({"matchExpressions": {}})", "matchExpressions: must be an array"},
      {R"({"matchExpressions": [1]})",
       "matchExpressions[0]: must be an object"},
      {R"({"matchExpressions": [{"operator": "Exists"}]})", "key must be"},
      {R"({"matchExpressions": [{"key": "a"}]})", "operator must be"},
      {R"({"matchExpressions": [{"key": "a", "operator": "in", "values": ["x"]}]})",
       "\"in\" is not a valid label selector operator"},
      {R"({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})",
       "not a valid label selector operator"},
      {R"({"matchExpressions": [{"key": "a", "operator": "In"}]})",
       "values set can't be empty"},
      {R"({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})",
       "values set can't be empty"},
      {R"({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})",
       "values set must be empty"},
      {R"({"matchExpressions": [{"key": "a", "operator": "In", "values": [1]}]})",
       "values must be an array of strings"},
      {R"({"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]})",
       "values must be an array of strings"},
  };
  for (const Case& c : cases) {
    rapidjson::Document d = Json(c.json);
    absl::StatusOr<LabelSelector> s = LabelSelector::FromLabelSelector(d);
    ASSERT_FALSE(s.ok()) << c.json;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(c.message))
        << c.json;
  }
}

}  // namespace
}  // namespace api
}  // namespace kcr
