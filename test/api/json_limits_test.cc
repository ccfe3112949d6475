// kMaxJsonDepth is one limit for every JSON reader, and a safe one: each
// routine that recurses per level of a body runs at the limit within half
// of the local API server's connection-thread stack (the other half is for
// the request's own frames above it), and every reader refuses one level
// more before anything recursive sees it.
#include "api/json_limits.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "api/json/json_util.h"
#include "api/json/yaml_to_json.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/patch/json_patch.h"
#include "api/patch/merge_patch.h"
#include "api/patch/patch_schema.h"
#include "api/patch/strategic_merge_patch.h"
#include "apiserver/apply/fieldmanager.h"
#include "apiserver/apply/patch_request.h"
#include "apiserver/endpoints/request_limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/fuzz/server_stack.h"

namespace kcr {
namespace api {
namespace {

using ::testing::HasSubstr;

// {"a":{"a":...<leaf>...}} with `levels` objects.
std::string NestedObjects(int levels, const std::string& leaf) {
  std::string s;
  for (int i = 0; i < levels; ++i) s += R"({"a":)";
  s += leaf;
  s += std::string(levels, '}');
  return s;
}

// A ConfigMap whose `spec` brings the whole document to `depth` levels.
std::string ObjectOfDepth(int depth) {
  return R"({"apiVersion":"v1","kind":"ConfigMap",)"
         R"("metadata":{"name":"deep","namespace":"default"},"spec":)" +
         NestedObjects(depth - 1, "1") + "}";
}

// A merge or strategic merge patch of `depth` levels that changes the
// deepest value of ObjectOfDepth.
std::string PatchOfDepth(int depth) {
  return R"({"spec":)" + NestedObjects(depth - 1, "2") + "}";
}

// Runs `fn` within half of a connection thread's stack.
void OnHalfServerStack(const std::function<void()>& fn) {
  fuzz::RunWithStack(apiserver::kConnectionThreadStackBytes / 2, fn);
}

const PatchSchema* ConfigMapSchema() {
  return BuiltinPatchSchema("", "ConfigMap");
}

TEST(JsonLimitsTest, ObjectAndRapidJsonRoutinesAtTheLimit) {
  const std::string text = ObjectOfDepth(kMaxJsonDepth);
  OnHalfServerStack([&] {
    absl::StatusOr<ObjectPtr> object = Object::Parse(text);
    ASSERT_TRUE(object.ok()) << object.status();
    EXPECT_EQ((*object)->ToJson(), text);
    EXPECT_TRUE((*object)->ToBuilder().Build().ok());
    rapidjson::Document doc;
    ASSERT_TRUE(json::ParseJson(text, &doc).ok());
    EXPECT_EQ(json::JsonDepth(doc), kMaxJsonDepth);
    rapidjson::Document copy;
    copy.CopyFrom(doc, copy.GetAllocator());
    EXPECT_TRUE(copy == doc);
    EXPECT_TRUE(json::JsonDeepEqual(copy, doc));
    EXPECT_TRUE(json::JsonToString(copy).ok());
  });
}

TEST(JsonLimitsTest, PatchAlgorithmsAtTheLimit) {
  rapidjson::Document live, patch;
  ASSERT_TRUE(json::ParseJson(ObjectOfDepth(kMaxJsonDepth), &live).ok());
  ASSERT_TRUE(json::ParseJson(PatchOfDepth(kMaxJsonDepth), &patch).ok());
  OnHalfServerStack([&] {
    rapidjson::Document merged;
    EXPECT_TRUE(
        ApplyMergePatch(live, patch, &merged, merged.GetAllocator()).ok());
    rapidjson::Document diff;
    EXPECT_TRUE(
        CreateMergePatch(live, merged, &diff, diff.GetAllocator()).ok());
    rapidjson::Document strategic;
    EXPECT_TRUE(ApplyStrategicMergePatch(live, patch, *ConfigMapSchema(),
                                         &strategic, strategic.GetAllocator())
                    .ok());
    apiserver::UpdateOptions update;
    update.field_manager = "deep";
    // Records fields 256 levels down, then finds managedFields too deep to
    // store: what matters here is that the walk completes.
    (void)apiserver::RecordUpdateManagedFields(&live, &strategic,
                                               ConfigMapSchema(), update);
    apiserver::ApplyOptions apply;
    apply.field_manager = "deep";
    (void)apiserver::ServerSideApply(&live, live, ConfigMapSchema(), apply);
  });
}

TEST(JsonLimitsTest, JsonPatchAtTheLimit) {
  rapidjson::Document live, patch;
  ASSERT_TRUE(json::ParseJson(ObjectOfDepth(kMaxJsonDepth), &live).ok());
  // The value is added one level down, so it may be one level shallower;
  // `test` compares the whole deep spec.
  const std::string value = NestedObjects(kMaxJsonDepth - 2, "1");
  ASSERT_TRUE(
      json::ParseJson(
          absl::StrCat(R"([{"op":"add","path":"/x","value":)", value,
                       R"(},{"op":"test","path":"/x","value":)", value, "}]"),
          &patch)
          .ok());
  OnHalfServerStack([&] {
    rapidjson::Document target;
    target.CopyFrom(live, target.GetAllocator());
    absl::Status s = ApplyJsonPatch(patch, &target);
    EXPECT_TRUE(s.ok()) << s;
  });
}

TEST(JsonLimitsTest, YamlAtTheLimit) {
  const std::string yaml =
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\nspec: " +
      NestedObjects(kMaxJsonDepth - 1, "1") + "\n";
  OnHalfServerStack([&] {
    auto doc = json::YamlToJson(yaml);
    ASSERT_TRUE(doc.ok()) << doc.status();
    EXPECT_EQ(json::JsonDepth(**doc), kMaxJsonDepth);
    EXPECT_TRUE(apiserver::ParseApplyConfiguration(yaml).ok());
  });
}

// The whole PATCH path, as the server runs it, for every patch type.
TEST(JsonLimitsTest, PatchRequestsAtTheLimit) {
  rapidjson::Document live;
  ASSERT_TRUE(json::ParseJson(ObjectOfDepth(kMaxJsonDepth), &live).ok());
  const std::string patch = PatchOfDepth(kMaxJsonDepth);
  const std::string apply = ObjectOfDepth(kMaxJsonDepth);
  const std::string json_patch =
      absl::StrCat(R"([{"op":"replace","path":"/spec","value":)",
                   NestedObjects(kMaxJsonDepth - 2, "3"), "}]");
  struct Case {
    PatchType type;
    const std::string* body;
  } cases[] = {{PatchType::kMerge, &patch},
               {PatchType::kStrategicMerge, &patch},
               {PatchType::kJson, &json_patch},
               {PatchType::kApply, &apply}};
  for (const Case& c : cases) {
    OnHalfServerStack([&] {
      apiserver::PatchRequest request;
      request.type = c.type;
      request.body = *c.body;
      request.live = &live;
      request.schema = ConfigMapSchema();
      request.field_manager = "deep";
      apiserver::PatchResult result = apiserver::ApplyPatchRequest(request);
      // Patched at full depth; recording managedFields 256 levels down may
      // then be refused as too deep, always as a client error.
      if (result.error.has_value()) {
        EXPECT_THAT(result.error->code, ::testing::AnyOf(400, 422))
            << result.error->message;
      }
    });
  }
}

TEST(JsonLimitsTest, EveryReaderRefusesOneLevelMore) {
  const int over = kMaxJsonDepth + 1;
  const std::string too_deep =
      absl::StrCat("nests deeper than ", kMaxJsonDepth, " levels");
  OnHalfServerStack([&] {
    rapidjson::Document doc;
    EXPECT_THAT(
        std::string(json::ParseJson(ObjectOfDepth(over), &doc).message()),
        HasSubstr(too_deep));
    EXPECT_THAT(
        std::string(Object::Parse(ObjectOfDepth(over)).status().message()),
        HasSubstr(too_deep));
    EXPECT_THAT(
        std::string(
            ObjectBuilder::FromJson(ObjectOfDepth(over)).status().message()),
        HasSubstr(too_deep));
    EXPECT_THAT(
        std::string(
            json::YamlToJson(NestedObjects(over, "1")).status().message()),
        HasSubstr(too_deep));
    EXPECT_THAT(
        std::string(ApplyMergePatch(ObjectOfDepth(3), PatchOfDepth(over))
                        .status()
                        .message()),
        HasSubstr(too_deep));
    rapidjson::Document live;
    ASSERT_TRUE(json::ParseJson(ObjectOfDepth(3), &live).ok());
    const std::string patch = PatchOfDepth(over);
    for (PatchType type :
         {PatchType::kMerge, PatchType::kStrategicMerge, PatchType::kApply}) {
      apiserver::PatchRequest request;
      request.type = type;
      request.body = patch;
      request.live = &live;
      request.schema = ConfigMapSchema();
      request.field_manager = "deep";
      apiserver::PatchResult result = apiserver::ApplyPatchRequest(request);
      ASSERT_TRUE(result.error.has_value());
      EXPECT_EQ(result.error->code, 400);
      EXPECT_THAT(result.error->message, HasSubstr(too_deep));
    }
  });
}

// What a hostile client sends: a million levels (100,000 for the slower
// paths), refused by the iterative readers without recursing.
TEST(JsonLimitsTest, MillionLevelsAreRefusedOnTheServerStack) {
  const std::string arrays =
      std::string(1000000, '[') + std::string(1000000, ']');
  const std::string objects = NestedObjects(100000, "1");
  fuzz::RunOnServerStack([&] {
    rapidjson::Document doc;
    EXPECT_FALSE(json::ParseJson(arrays, &doc).ok());
    EXPECT_FALSE(json::ParseJson(objects, &doc).ok());
    EXPECT_FALSE(Object::Parse(objects).ok());
    // yaml-cpp scans a flow collection whole before its guard stops the
    // parse (about a microsecond a byte): 100,000 levels make the point.
    EXPECT_FALSE(json::YamlToJson(arrays.substr(0, 100000)).ok());
    EXPECT_FALSE(json::YamlToJson(objects).ok());
    EXPECT_FALSE(ApplyMergePatch(ObjectOfDepth(3), objects).ok());
    EXPECT_FALSE(
        ApplyStrategicMergePatch(ObjectOfDepth(3), objects, *ConfigMapSchema())
            .ok());
    EXPECT_FALSE(ApplyJsonPatch(ObjectOfDepth(3), "[" + objects + "]").ok());
  });
}

}  // namespace
}  // namespace api
}  // namespace kcr
