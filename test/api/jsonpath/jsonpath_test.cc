#include "api/jsonpath/jsonpath.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr::api::jsonpath {
namespace {

using ::testing::HasSubstr;

constexpr char kPodList[] = R"({
  "kind": "List",
  "items": [
    {"metadata": {"name": "web-0", "labels": {"app": "web", "app.kubernetes.io/name": "w"}},
     "spec": {"replicas": 3, "containers": [{"name": "nginx", "image": "nginx:1"},
                                            {"name": "side", "image": "busybox"}]},
     "status": {"phase": "Running", "ratio": 0.5,
                "conditions": [{"type": "Initialized", "status": "True"},
                               {"type": "Ready", "status": "True"}]}},
    {"metadata": {"name": "web-1", "labels": {"app": "web"}},
     "spec": {"replicas": 1, "containers": [{"name": "nginx", "image": "nginx:2"}]},
     "status": {"phase": "Pending", "ratio": 1e21,
                "conditions": [{"type": "Ready", "status": "False"}]}}
  ]
})";

class JsonPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    doc_.Parse(kPodList);
    ASSERT_FALSE(doc_.HasParseError());
  }

  // Executes `tmpl` over the pod list; "ERROR: <message>" on failure.
  std::string Run(const std::string& tmpl, bool allow_missing = false) {
    absl::StatusOr<JsonPath> path = JsonPath::Parse(tmpl);
    if (!path.ok()) return "PARSE: " + std::string(path.status().message());
    EvalOptions options;
    options.allow_missing_keys = allow_missing;
    absl::StatusOr<std::string> out = path->Execute(doc_, options);
    if (!out.ok()) return "ERROR: " + std::string(out.status().message());
    return *out;
  }

  rapidjson::Document doc_;
};

TEST_F(JsonPathTest, Fields) {
  EXPECT_EQ(Run("{.items[0].metadata.name}"), "web-0");
  EXPECT_EQ(Run("{$.items[1].status.phase}"), "Pending");
  EXPECT_EQ(Run("{@.kind}"), "List");
  EXPECT_EQ(
      Run("name={.items[0].metadata.name} phase={.items[0].status.phase}"),
      "name=web-0 phase=Running");
}

TEST_F(JsonPathTest, EscapedAndQuotedKeys) {
  EXPECT_EQ(Run(R"({.items[0].metadata.labels.app\.kubernetes\.io/name})"),
            "w");
  EXPECT_EQ(Run("{.items[0].metadata.labels['app.kubernetes.io/name']}"), "w");
  EXPECT_EQ(Run("{.items[0]['metadata']['name']}"), "web-0");
}

TEST_F(JsonPathTest, IndexesAndSlices) {
  EXPECT_EQ(Run("{.items[-1].metadata.name}"), "web-1");
  EXPECT_EQ(Run("{.items[0:2].metadata.name}"), "web-0 web-1");
  EXPECT_EQ(Run("{.items[::2].metadata.name}"), "web-0");
  EXPECT_EQ(Run("{.items[1:].metadata.name}"), "web-1");
  EXPECT_EQ(Run("{.items[0].spec.containers[0,1].name}"), "nginx side");
  EXPECT_EQ(Run("{.items[2].metadata.name}"),
            "ERROR: array index out of bounds: index 2, length 2");
  EXPECT_EQ(Run("{.items[0:0].metadata.name}", true), "");
  EXPECT_EQ(Run("{.kind[0]}"), "ERROR: string is not array or slice");
  EXPECT_EQ(Run("{.items[0].spec[0]}"),
            "ERROR: map[string]interface {} is not array or slice");
  EXPECT_EQ(Run("{.items[::0]}"), "ERROR: step must be > 0");
}

TEST_F(JsonPathTest, Wildcards) {
  EXPECT_EQ(Run("{.items[*].metadata.name}"), "web-0 web-1");
  EXPECT_EQ(Run("{.items[*].spec.containers[*].image}"),
            "nginx:1 busybox nginx:2");
  // An object's values come in sorted key order.
  EXPECT_EQ(Run("{.items[0].metadata.labels.*}"), "web w");
}

TEST_F(JsonPathTest, RecursiveDescent) {
  EXPECT_EQ(Run("{..image}"), "nginx:1 busybox nginx:2");
  EXPECT_EQ(Run("{.items[1]..type}"), "Ready");
  EXPECT_EQ(Run("{....a}"), "PARSE: invalid multiple recursive descent");
}

TEST_F(JsonPathTest, Filters) {
  EXPECT_EQ(Run(R"({.items[0].status.conditions[?(@.type=="Ready")].status})"),
            "True");
  EXPECT_EQ(Run(R"({.items[?(@.status.phase=='Pending')].metadata.name})"),
            "web-1");
  EXPECT_EQ(Run(R"({.items[?(@.status.phase!="Pending")].metadata.name})"),
            "web-0");
  EXPECT_EQ(Run("{.items[?(@.spec.replicas>1)].metadata.name}"), "web-0");
  EXPECT_EQ(Run("{.items[?(@.spec.replicas==1)].metadata.name}"), "web-1");
  EXPECT_EQ(Run("{.items[?(@.status.ratio<=0.5)].metadata.name}"), "web-0");
  EXPECT_EQ(Run("{.items[?(@.metadata.labels.app\\.kubernetes\\.io/name)]"
                ".metadata.name}",
                true),
            "web-0");
  // A string never equals a number.
  EXPECT_EQ(Run(R"({.items[?(@.spec.replicas=="3")].metadata.name})"), "");
  // Missing keys on the left are an error unless allowed.
  EXPECT_THAT(Run(R"({.items[?(@.nope=="x")].metadata.name})"),
              HasSubstr("nope is not found"));
  EXPECT_EQ(Run(R"({.items[?(@.nope=="x")].metadata.name})", true), "");
}

TEST_F(JsonPathTest, Range) {
  EXPECT_EQ(
      Run(R"({range .items[*]}{.metadata.name}{"\t"}{.status.phase}{"\n"}{end})"),
      "web-0\tRunning\nweb-1\tPending\n");
  EXPECT_EQ(
      Run(R"({range .items[*]}[{range .spec.containers[*]}{.name},{end}]{end})"),
      "[nginx,side,][nginx,]");
  // Without {end} the body runs to the end of the template.
  EXPECT_EQ(Run("{range .items[*]}{.metadata.name};"), "web-0;web-1;");
  EXPECT_EQ(Run("{end}"), "PARSE: not in range, nothing to end");
}

TEST_F(JsonPathTest, PrintingFollowsGo) {
  EXPECT_EQ(Run("{.items[0].spec.replicas}"), "3");
  EXPECT_EQ(Run("{.items[0].status.ratio}"), "0.5");
  EXPECT_EQ(Run("{.items[1].status.ratio}"), "1e+21");
  EXPECT_EQ(Run("{.items[1].metadata.labels}"), R"({"app":"web"})");
  EXPECT_EQ(Run("{.items[1].spec.containers[0]}"),
            R"({"image":"nginx:2","name":"nginx"})");
  EXPECT_EQ(Run("{.items[1].status.conditions}"),
            R"([{"status":"False","type":"Ready"}])");
  EXPECT_EQ(Run(R"({"lit"} {1} {2.5} {true})"), "lit 1 2.5 true");
}

TEST_F(JsonPathTest, MissingKeys) {
  EXPECT_EQ(Run("{.items[0].nope}"), "ERROR: nope is not found");
  EXPECT_EQ(Run("{.items[0].nope}", true), "");
  EXPECT_EQ(Run("{.items[*].metadata.nope}x", true), "x");
}

TEST_F(JsonPathTest, WholeValue) {
  rapidjson::Document d;
  d.Parse(R"({"b":1,"a":[true,null,"<&>"]})");
  absl::StatusOr<JsonPath> p = JsonPath::Parse("{}");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p->Execute(d), R"({"a":[true,null,"\u003c\u0026\u003e"],"b":1})");
  p = JsonPath::Parse("{.}");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p->Execute(d), R"({"a":[true,null,"\u003c\u0026\u003e"],"b":1})");
}

TEST(JsonPathParseTest, Errors) {
  const auto error = [](const std::string& t) {
    absl::StatusOr<JsonPath> p = JsonPath::Parse(t);
    return p.ok() ? std::string("OK") : std::string(p.status().message());
  };
  EXPECT_EQ(error("{.a"), "unclosed action");
  EXPECT_EQ(error("{.a[0}"), "unterminated array");
  EXPECT_EQ(error("{.a[x]}"), "invalid array index x");
  EXPECT_EQ(error("{.a[?(@.x=='y']}"), "unterminated filter");
  EXPECT_EQ(error("{.a[?(@.x)x}"), "unclosed array expect ]");
  EXPECT_EQ(error("{\"abc}"), "unterminated quoted string");
  EXPECT_EQ(error("{#}"), "unrecognized character in action: U+0023 '#'");
  EXPECT_EQ(error("{1.2.3}"), "cannot parse number 1.2.3");
  EXPECT_EQ(error("{foo}"), "unrecognized identifier foo");
  EXPECT_EQ(error("{.a[?(@.x=1)]}"), "unrecognized filter operator =");
  EXPECT_EQ(error("{.a[99999999999]}"),
            "array index 99999999999 is not a number");
  EXPECT_EQ(error(std::string(kMaxTemplateBytes + 1, 'a')),
            "jsonpath template longer than 65536 bytes");
  std::string deep;
  for (int i = 0; i <= kMaxRangeDepth; ++i) deep += "{range .a}";
  EXPECT_EQ(error(deep), "ranges nested deeper than 64");
  EXPECT_EQ(error("{.a}{\"x\\q\"}"),
            "unquote string \"x\\q\" error invalid syntax");
}

TEST(JsonPathParseTest, ParseExpression) {
  rapidjson::Document d;
  d.Parse(R"({"spec":{"size":7}})");
  absl::StatusOr<JsonPath> p = JsonPath::ParseExpression(".spec.size");
  ASSERT_TRUE(p.ok());
  absl::StatusOr<Results> r = p->FindResults(d);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  ASSERT_EQ((*r)[0].size(), 1u);
  EXPECT_EQ((*r)[0][0]->GetInt64(), 7);
}

TEST(JsonPathLimitsTest, ResultExplosionIsAnError) {
  rapidjson::Document d(rapidjson::kObjectType);
  rapidjson::Value items(rapidjson::kArrayType);
  for (size_t i = 0; i <= kMaxResults; ++i) items.PushBack(0, d.GetAllocator());
  d.AddMember("a", items, d.GetAllocator());
  absl::StatusOr<JsonPath> p = JsonPath::Parse("{.a[*]}");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->Execute(d).status().code(),
            absl::StatusCode::kResourceExhausted);
  p = JsonPath::Parse("{.a[0:1]}");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(*p->Execute(d), "0");
}

TEST(JsonPathLimitsTest, DeepDataDoesNotRecurse) {
  std::string json;
  for (int i = 0; i < 100000; ++i) json += "[";
  for (int i = 0; i < 100000; ++i) json += "]";
  rapidjson::Document d;
  d.Parse<rapidjson::kParseIterativeFlag>(json.c_str());
  ASSERT_FALSE(d.HasParseError());
  absl::StatusOr<JsonPath> p = JsonPath::Parse("{..x}");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->Execute(d, {true}).ok());
  EXPECT_EQ(JsonPath::PrintValue(d).size(), 200000u);
}

TEST(GoFloatTest, PercentV) {
  EXPECT_EQ(FormatGoFloat(0.1), "0.1");
  EXPECT_EQ(FormatGoFloat(100000), "100000");
  EXPECT_EQ(FormatGoFloat(1234567), "1.234567e+06");
  EXPECT_EQ(FormatGoFloat(0.0001), "0.0001");
  EXPECT_EQ(FormatGoFloat(0.00001), "1e-05");
  EXPECT_EQ(FormatGoFloat(-2.5), "-2.5");
  EXPECT_EQ(FormatGoFloat(1e21), "1e+21");
  EXPECT_EQ(FormatGoFloat(1e100), "1e+100");
}

TEST(GoFloatTest, Json) {
  EXPECT_EQ(FormatGoJsonFloat(1234567), "1234567");
  EXPECT_EQ(FormatGoJsonFloat(1.5), "1.5");
  EXPECT_EQ(FormatGoJsonFloat(1e21), "1e+21");
  EXPECT_EQ(FormatGoJsonFloat(1e-7), "1e-7");
  EXPECT_EQ(FormatGoJsonFloat(0.000001), "0.000001");
  EXPECT_EQ(FormatGoJsonFloat(-3.25e-10), "-3.25e-10");
}

}  // namespace
}  // namespace kcr::api::jsonpath
