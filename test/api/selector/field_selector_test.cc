#include "api/selector/field_selector.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace {

using ::testing::HasSubstr;

FieldSelector MustParse(std::string_view s) {
  absl::StatusOr<FieldSelector> sel = FieldSelector::Parse(s);
  EXPECT_TRUE(sel.ok()) << s << ": " << sel.status();
  return sel.ok() ? *sel : FieldSelector();
}

rapidjson::Document Pod() {
  rapidjson::Document d;
  d.Parse(R"({
    "metadata": {"name": "web-1", "namespace": "default",
                 "labels": {"app": "web"}},
    "spec": {"nodeName": "node-a", "replicas": 3, "ratio": 1.5,
             "paused": false, "tolerations": [], "nothing": null},
    "status": {"phase": "Running"}
  })");
  EXPECT_FALSE(d.HasParseError());
  return d;
}

TEST(FieldSelectorParseTest, CanonicalStrings) {
  struct Case {
    const char* in;
    const char* out;
  } cases[] = {
      {"", ""},
      {",,", ""},
      {"metadata.name=web-1", "metadata.name=web-1"},
      {"metadata.name==web-1", "metadata.name=web-1"},
      {"status.phase!=Running", "status.phase!=Running"},
      {"b=1,a=2", "a=2,b=1"},
      {"a=2,,b=1,", "a=2,b=1"},
      {"a=", "a="},
      {"a!=", "a!="},
      {"a=x\\,y", "a=x\\,y"},
      {"a=x\\=y\\\\z", "a=x\\=y\\\\z"},
      {"a b=c d", "a b=c d"},
  };
  for (const Case& c : cases) {
    FieldSelector s = MustParse(c.in);
    EXPECT_EQ(s.ToString(), c.out) << c.in;
    EXPECT_EQ(MustParse(s.ToString()), s) << c.in;
  }
}

TEST(FieldSelectorParseTest, Requirements) {
  FieldSelector s = MustParse("status.phase!=Failed,metadata.name==a\\,b");
  ASSERT_EQ(s.requirements().size(), 2u);
  EXPECT_EQ(s.requirements()[0],
            (FieldRequirement{"metadata.name", FieldOperator::kEquals, "a,b"}));
  EXPECT_EQ(
      s.requirements()[1],
      (FieldRequirement{"status.phase", FieldOperator::kNotEquals, "Failed"}));
  EXPECT_EQ(s.RequiresExactMatch("metadata.name"), "a,b");
  EXPECT_EQ(s.RequiresExactMatch("status.phase"), std::nullopt);
}

TEST(FieldSelectorParseTest, BadInput) {
  struct Case {
    const char* in;
    const char* message;
  } cases[] = {
      {"a=b,spec.x", "at 4 \"spec.x\": expected '=', '==' or '!='"},
      {"=x", "at 0 \"=x\": expected a field name"},
      {"!=x", "expected a field name"},
      {"a=b=c", "at 0 \"a=b=c\": unescaped character in value: '='"},
      {"a==b=c", "unescaped character in value"},
      {"a=b\\", "invalid escape sequence"},
      {"a=b\\n", "invalid escape sequence: \"\\\\n\""},
      {"x=1,a", "at 4 \"a\""},
  };
  for (const Case& c : cases) {
    absl::StatusOr<FieldSelector> s = FieldSelector::Parse(c.in);
    ASSERT_FALSE(s.ok()) << c.in;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.status().message()), HasSubstr(c.message))
        << c.in;
  }
}

TEST(FieldSelectorMatchTest, JsonObject) {
  rapidjson::Document pod = Pod();
  struct Case {
    const char* selector;
    bool match;
  } cases[] = {
      {"", true},
      {"metadata.name=web-1", true},
      {"metadata.name=web-2", false},
      {"metadata.namespace=default,status.phase=Running", true},
      {"metadata.namespace=default,status.phase!=Running", false},
      {"spec.nodeName==node-a", true},
      {"spec.replicas=3", true},
      {"spec.ratio=1.5", true},
      {"spec.paused=false", true},
      {"spec.missing=", true},  // absent compares as ""
      {"spec.missing!=", false},
      {"spec.nothing=", true},  // null compares as ""
      {"metadata.name.deeper=", true},
      {"spec.tolerations=", false},  // arrays never equal a value
      {"spec.tolerations!=x", true},
      {"metadata.labels.app=web", true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(MustParse(c.selector).Matches(pod), c.match) << c.selector;
  }
}

TEST(FieldSelectorMatchTest, FlatFields) {
  absl::flat_hash_map<std::string, std::string> fields = {
      {"metadata.name", "x"}, {"status.phase", "Pending"}};
  EXPECT_TRUE(MustParse("metadata.name=x").Matches(fields));
  EXPECT_TRUE(MustParse("status.phase!=Running").Matches(fields));
  EXPECT_TRUE(MustParse("spec.nodeName=").Matches(fields));
  EXPECT_FALSE(MustParse("spec.nodeName=n").Matches(fields));
}

TEST(FieldSelectorTest, Constructors) {
  EXPECT_EQ(FieldSelector::OneTermEqual("metadata.name", "a,b").ToString(),
            "metadata.name=a\\,b");
  EXPECT_EQ(FieldSelector::FromSet({{"b", "1"}, {"a", "2"}}).ToString(),
            "a=2,b=1");
  EXPECT_TRUE(FieldSelector::Everything().Empty());
}

TEST(FieldSelectorTest, EscapeRoundTrip) {
  for (const char* v :
       {"", "plain", "a,b", "a=b", "a\\b", "\\\\,,==", "tail\\"}) {
    absl::StatusOr<std::string> back = UnescapeFieldValue(EscapeFieldValue(v));
    ASSERT_TRUE(back.ok()) << v;
    EXPECT_EQ(*back, v);
  }
}

}  // namespace
}  // namespace api
}  // namespace kcr
