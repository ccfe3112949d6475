#include "apiserver/apply/patch_request.h"

#include <string>

#include "api/patch/patch_schema.h"
#include "base/string_view.h"
#include "gtest/gtest.h"
#include "test/api/json/json_test_util.h"

namespace kcr {
namespace apiserver {
namespace {

using ::kcr::json::testing::Json;
using ::kcr::json::testing::Str;

constexpr absl::string_view kCm =
    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1","namespace":"default"},"data":{"a":"1"}})";
constexpr absl::string_view kUserAgent =
    "kubectl.1.32/v1.32.0 (linux/amd64) kubernetes/70d3cc9";

PatchRequest Request(api::PatchType type, absl::string_view body,
                     const rapidjson::Value* live) {
  PatchRequest r;
  r.type = type;
  r.body = ToStd(body);
  r.live = live;
  r.schema = api::BuiltinPatchSchema("", "ConfigMap");
  r.user_agent = std::string(kUserAgent);
  r.now = absl::FromUnixSeconds(1700000000);
  return r;
}

TEST(PatchRequestTest, UnsupportedMediaTypeMessage) {
  EXPECT_EQ(UnsupportedPatchMediaTypeMessage(false),
            "the body of the request was in an unknown format - accepted media "
            "types include: application/json-patch+json, "
            "application/merge-patch+json, application/apply-patch+yaml");
  EXPECT_EQ(
      UnsupportedPatchMediaTypeMessage(true),
      "the body of the request was in an unknown format - accepted media "
      "types include: application/json-patch+json, "
      "application/merge-patch+json, application/strategic-merge-patch+json, "
      "application/apply-patch+yaml");
}

TEST(PatchRequestTest, StrategicMergeOnCustomResourceIs415) {
  rapidjson::Document live =
      Json(R"({"apiVersion":"example.com/v1","kind":"Widget"})");
  PatchRequest r = Request(api::PatchType::kStrategicMerge, "{}", &live);
  r.schema = nullptr;
  PatchResult got = ApplyPatchRequest(r);
  ASSERT_TRUE(got.error.has_value());
  EXPECT_EQ(got.error->code, 415);
  EXPECT_EQ(got.error->reason, "UnsupportedMediaType");
  EXPECT_EQ(got.error->message, UnsupportedPatchMediaTypeMessage(false));
}

TEST(PatchRequestTest, EachPatchTypeRecordsTheManager) {
  rapidjson::Document live = Json(kCm);
  struct Case {
    api::PatchType type;
    absl::string_view body;
  } cases[] = {
      {api::PatchType::kJson,
       R"([{"op":"replace","path":"/data/a","value":"2"}])"},
      {api::PatchType::kMerge, R"({"data":{"a":"2"}})"},
      {api::PatchType::kStrategicMerge, R"({"data":{"a":"2"}})"},
  };
  for (const Case& c : cases) {
    PatchRequest r = Request(c.type, c.body, &live);
    r.field_manager = "kubectl-patch";
    PatchResult got = ApplyPatchRequest(r);
    ASSERT_FALSE(got.error.has_value()) << got.error->message;
    EXPECT_FALSE(got.created);
    EXPECT_EQ(Str(got.object["data"]), R"({"a":"2"})");
    EXPECT_EQ(
        Str(got.object["metadata"]["managedFields"]),
        R"([{"manager":"kubectl-patch","operation":"Update","apiVersion":"v1",)"
        R"("time":"2023-11-14T22:13:20Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}])");
  }
  // Without fieldManager the User-Agent names the manager.
  PatchResult got = ApplyPatchRequest(
      Request(api::PatchType::kMerge, R"({"data":{"b":"1"}})", &live));
  ASSERT_FALSE(got.error.has_value());
  EXPECT_EQ(
      std::string(
          got.object["metadata"]["managedFields"][0]["manager"].GetString()),
      "kubectl.1.32");
}

TEST(PatchRequestTest, ApplyCreatesThenConflicts) {
  PatchRequest r = Request(api::PatchType::kApply, kCm, nullptr);
  r.field_manager = "kubectl";
  r.force = false;
  PatchResult created = ApplyPatchRequest(r);
  ASSERT_FALSE(created.error.has_value()) << created.error->message;
  EXPECT_TRUE(created.created);

  PatchRequest other = Request(api::PatchType::kApply,
                               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  "
                               "name: cm1\ndata:\n  a: \"9\"\n",
                               &created.object);
  other.field_manager = "other";
  PatchResult conflict = ApplyPatchRequest(other);
  ASSERT_TRUE(conflict.error.has_value());
  EXPECT_EQ(conflict.error->code, 409);
  EXPECT_EQ(conflict.error->reason, "Conflict");
  EXPECT_EQ(conflict.error->message,
            "Apply failed with 1 conflict: conflict with \"kubectl\": .data.a");
  ASSERT_EQ(conflict.error->causes.size(), 1u);
  EXPECT_EQ(conflict.error->causes[0].reason, "FieldManagerConflict");
  EXPECT_EQ(conflict.error->causes[0].message, "conflict with \"kubectl\"");
  EXPECT_EQ(conflict.error->causes[0].field, ".data.a");

  other.force = true;
  PatchResult forced = ApplyPatchRequest(other);
  ASSERT_FALSE(forced.error.has_value());
  EXPECT_EQ(std::string(forced.object["data"]["a"].GetString()), "9");
}

TEST(PatchRequestTest, OptionErrorsAreInvalidPatchOptions) {
  rapidjson::Document live = Json(kCm);
  PatchResult no_manager =
      ApplyPatchRequest(Request(api::PatchType::kApply, kCm, &live));
  ASSERT_TRUE(no_manager.error.has_value());
  EXPECT_EQ(no_manager.error->code, 422);
  EXPECT_EQ(no_manager.error->reason, "Invalid");
  EXPECT_EQ(no_manager.error->message,
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required "
            "value: is required for apply patch");
  EXPECT_EQ(no_manager.error->kind, "PatchOptions");
  ASSERT_EQ(no_manager.error->causes.size(), 1u);
  EXPECT_EQ(no_manager.error->causes[0].reason, "FieldValueRequired");
  EXPECT_EQ(no_manager.error->causes[0].field, "fieldManager");

  PatchRequest forced = Request(api::PatchType::kMerge, "{}", &live);
  forced.force = true;
  PatchResult got = ApplyPatchRequest(forced);
  ASSERT_TRUE(got.error.has_value());
  EXPECT_EQ(got.error->code, 422);
  EXPECT_EQ(
      got.error->message,
      "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not "
      "be specified for non-apply patch");
}

TEST(PatchRequestTest, BadBodies) {
  rapidjson::Document live = Json(kCm);
  auto code = [&](api::PatchType type, absl::string_view body) {
    PatchRequest r = Request(type, body, &live);
    r.field_manager = "m";
    PatchResult got = ApplyPatchRequest(r);
    return got.error.has_value() ? got.error->code : 200;
  };
  EXPECT_EQ(code(api::PatchType::kMerge, "{"), 400);
  EXPECT_EQ(code(api::PatchType::kMerge, "3"), 400);
  EXPECT_EQ(code(api::PatchType::kJson, "{}"), 400);
  EXPECT_EQ(code(api::PatchType::kJson, R"([{"op":"remove","path":"/nope"}])"),
            422);
  EXPECT_EQ(code(api::PatchType::kStrategicMerge, R"({"$bad":1})"), 400);
  EXPECT_EQ(code(api::PatchType::kStrategicMerge, "[]"), 400);
  EXPECT_EQ(code(api::PatchType::kApply, "a: ["), 400);
  EXPECT_EQ(code(api::PatchType::kApply, "- 1"), 400);
  EXPECT_EQ(code(api::PatchType::kApply, R"({"metadata":{}})"), 400);
  PatchRequest missing = Request(api::PatchType::kMerge, "{}", nullptr);
  EXPECT_EQ(ApplyPatchRequest(missing).error->code, 400);
}

TEST(PatchRequestTest, RecordWriteManager) {
  rapidjson::Document obj = Json(kCm);
  ASSERT_TRUE(RecordWriteManager(nullptr, &obj, obj.GetAllocator(),
                                 api::BuiltinPatchSchema("", "ConfigMap"), "",
                                 ToStd(kUserAgent), "", FieldScope::kAll,
                                 absl::FromUnixSeconds(0))
                  .ok());
  EXPECT_EQ(
      std::string(obj["metadata"]["managedFields"][0]["manager"].GetString()),
      "kubectl.1.32");
  rapidjson::Document anonymous = Json(kCm);
  ASSERT_TRUE(RecordWriteManager(nullptr, &anonymous, anonymous.GetAllocator(),
                                 nullptr, "", "", "", FieldScope::kAll,
                                 absl::FromUnixSeconds(0))
                  .ok());
  EXPECT_FALSE(anonymous["metadata"].HasMember("managedFields"));
  EXPECT_FALSE(RecordWriteManager(nullptr, &anonymous, anonymous.GetAllocator(),
                                  nullptr, std::string(200, 'x'), "", "",
                                  FieldScope::kAll, absl::FromUnixSeconds(0))
                   .ok());
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
