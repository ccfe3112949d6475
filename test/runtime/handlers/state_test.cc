#include "runtime/handlers/internal/state.h"

#include <string>

#include "absl/strings/escaping.h"
#include "absl/time/time.h"
#include "api/json/json_util.h"
#include "api/object.h"
#include "base/str_cat.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr::handlers::internal {
namespace {

api::ObjectPtr Parse(std::string_view json) {
  auto o = api::Object::Parse(json);
  EXPECT_TRUE(o.ok()) << o.status();
  return o.ok() ? *o : nullptr;
}

std::string Json(const rapidjson::Value& v) {
  auto s = json::JsonToString(v);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : "";
}

const absl::Time kNow = absl::FromUnixSeconds(1700000000);

TEST(TimeTest, FormatsAsKopfAndParsesBack) {
  EXPECT_EQ(FormatIsoTime(absl::FromUnixSeconds(1581699505)),
            "2020-02-14T16:58:25");
  const absl::Time t =
      absl::FromUnixSeconds(1581699505) + absl::Microseconds(396364);
  EXPECT_EQ(FormatIsoTime(t), "2020-02-14T16:58:25.396364");
  EXPECT_EQ(*ParseIsoTime("2020-02-14T16:58:25.396364"), t);
  EXPECT_EQ(*ParseIsoTime("2020-02-14T16:58:25.396364Z"), t);
  EXPECT_EQ(*ParseIsoTime("2020-02-14T16:58:25.396364+00:00"), t);
  EXPECT_FALSE(ParseIsoTime("yesterday").ok());
  EXPECT_FALSE(ParseIsoTime("").ok());
  EXPECT_FALSE(ParseIsoTime("2020-13-45T99:00:00").ok());
}

TEST(KeyTest, Blake2bMatchesPythonHashlib) {
  // hashlib.blake2b(data, digest_size=4).hexdigest()
  EXPECT_EQ(absl::BytesToHexString(Blake2b4("abc")), "63906248");
  EXPECT_EQ(absl::BytesToHexString(Blake2b4("")), "1271cf25");
  EXPECT_EQ(absl::BytesToHexString(Blake2b4("create_fn")), "0198c5b8");
  // More than one 128-byte block.
  EXPECT_EQ(absl::BytesToHexString(Blake2b4(std::string(200, 'x'))),
            "01d7de14");
}

TEST(KeyTest, ShortIdsAreKeptAndLongOnesHashedAsKopf) {
  EXPECT_EQ(AnnotationKey("kcr.dev", "create_fn"), "kcr.dev/create_fn");
  EXPECT_EQ(AnnotationKey("kcr.dev", "fn/spec.field"), "kcr.dev/fn.spec.field");
  // kopf's make_v2_key for the same key.
  EXPECT_EQ(AnnotationKey("kcr.dev",
                          "a_very_long_handler_id_that_goes_on_and_on_and_on_"
                          "beyond_the_limit/spec.field"),
            "kcr.dev/a_very_long_handler_id_that_goes_on_and_on_and_on_beyond-"
            "mKQUhQ");
}

TEST(KeyTest, InvalidCharactersGiveAValidHashedName) {
  const std::string a = AnnotationKey("kcr.dev", "my handler!");
  const std::string b = AnnotationKey("kcr.dev", "my handler?");
  EXPECT_NE(a, b);  // the hash tells them apart
  for (const std::string& key :
       {a, b, AnnotationKey("kcr.dev", "_x_"), AnnotationKey("kcr.dev", "")}) {
    const std::string name = key.substr(key.find('/') + 1);
    ASSERT_FALSE(name.empty()) << key;
    EXPECT_LE(name.size(), 63u) << key;
    EXPECT_TRUE(isalnum(name.front())) << key;
    EXPECT_TRUE(isalnum(name.back())) << key;
    for (char c : name) {
      EXPECT_TRUE(isalnum(c) || c == '-' || c == '_' || c == '.') << key;
    }
  }
}

TEST(EssenceTest, KeepsSpecLabelsAndForeignAnnotationsOnly) {
  auto obj = Parse(R"({
    "apiVersion": "example.org/v1", "kind": "Thing",
    "metadata": {"name": "a", "namespace": "ns", "uid": "u1",
      "resourceVersion": "7", "generation": 3,
      "labels": {"app": "x"},
      "annotations": {"team": "blue",
        "kcr.dev/last-handled-configuration": "{}",
        "kcr.dev/create_fn": "{}",
        "kcr.devious/keep": "yes",
        "kubectl.kubernetes.io/last-applied-configuration": "{...}"},
      "finalizers": ["kcr.dev/handlers"]},
    "spec": {"size": 1, "nested": {"a": [1, 2]}},
    "data": {"k": "v"},
    "status": {"phase": "Running"}})");
  auto essence = BuildEssence(*obj, "kcr.dev");
  EXPECT_EQ(Json(*essence),
            R"({"spec":{"size":1,"nested":{"a":[1,2]}},"data":{"k":"v"},)"
            R"("metadata":{"labels":{"app":"x"},"annotations":{"team":"blue",)"
            R"("kcr.devious/keep":"yes"}}})");
}

TEST(EssenceTest, DropsEmptyStanzas) {
  auto obj = Parse(R"({"kind": "Thing", "metadata": {"name": "a",
      "labels": {}, "annotations": {"kcr.dev/x": "1"}}, "spec": {}})");
  EXPECT_EQ(Json(*BuildEssence(*obj, "kcr.dev")), R"({"spec":{}})");
}

TEST(ProgressRecordTest, RoundTripsThroughJson) {
  ProgressRecord r;
  r.started = kNow - absl::Seconds(30);
  r.delayed = kNow + absl::Seconds(60);
  r.purpose = "create";
  r.retries = 2;
  r.message = "not yet";
  const std::string text = r.ToJsonString();
  EXPECT_EQ(
      text,
      R"({"started":"2023-11-14T22:12:50","delayed":"2023-11-14T22:14:20",)"
      R"("purpose":"create","retries":2,"success":false,"failure":false,)"
      R"("message":"not yet"})");
  rapidjson::Document doc;
  ASSERT_TRUE(json::ParseJson(text, &doc).ok());
  auto back = ProgressRecord::FromJson(doc, kNow);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, r);
  EXPECT_TRUE(back->sleeping(kNow));
  EXPECT_FALSE(back->sleeping(kNow + absl::Seconds(61)));
}

TEST(ProgressRecordTest, RefusesMalformedRecords) {
  for (const char* text : {
           R"([1, 2])",
           R"("done")",
           R"({"started": 12})",
           R"({"started": "not a time"})",
           R"({"retries": "three"})",
           R"({"retries": -1})",
           R"({"retries": 1.5})",
           R"({"success": "yes"})",
           R"({"message": {"nested": true}})",
       }) {
    rapidjson::Document doc;
    ASSERT_TRUE(json::ParseJson(text, &doc).ok()) << text;
    EXPECT_FALSE(ProgressRecord::FromJson(doc, kNow).ok()) << text;
  }
}

TEST(ProgressRecordTest, RefusesRecordsFromTheFuture) {
  rapidjson::Document doc;
  ASSERT_TRUE(
      json::ParseJson(Cat(R"({"started": ")",
                          FormatIsoTime(kNow + absl::Minutes(6)), R"("})"),
                      &doc)
          .ok());
  auto r = ProgressRecord::FromJson(doc, kNow);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("future"), std::string::npos);
  // Within the allowed skew.
  ASSERT_TRUE(
      json::ParseJson(Cat(R"({"stopped": ")",
                          FormatIsoTime(kNow + absl::Minutes(4)), R"("})"),
                      &doc)
          .ok());
  EXPECT_TRUE(ProgressRecord::FromJson(doc, kNow).ok());
  ASSERT_TRUE(
      json::ParseJson(Cat(R"({"stopped": ")",
                          FormatIsoTime(kNow + absl::Hours(24 * 365)), R"("})"),
                      &doc)
          .ok());
  EXPECT_FALSE(ProgressRecord::FromJson(doc, kNow).ok());
}

TEST(StateStorageTest, AnnotationsStoreFetchAndPurge) {
  StateStorage storage(StorageOptions{});
  EXPECT_EQ(storage.finalizer(), "kcr.dev/handlers");
  EXPECT_EQ(storage.last_handled_key(), "kcr.dev/last-handled-configuration");

  ProgressRecord r;
  r.started = kNow;
  r.retries = 1;
  rapidjson::Document patch = NewPatch();
  storage.StoreProgress("create_fn", r, &patch);
  storage.StoreLastHandled(*BuildEssence(*Parse(R"({"metadata":{"name":"a"},
      "spec":{"x":1}})"),
                                         "kcr.dev"),
                           &patch);
  EXPECT_EQ(
      Json(patch),
      R"({"metadata":{"annotations":{"kcr.dev/create_fn":)"
      R"("{\"started\":\"2023-11-14T22:13:20\",\"retries\":1,)"
      R"(\"success\":false,\"failure\":false}",)"
      R"("kcr.dev/last-handled-configuration":"{\"spec\":{\"x\":1}}"}}})");

  // The object as the patch left it.
  auto obj = Parse(Cat(
      R"({"metadata":{"name":"a","annotations":{"other":"keep","kcr.dev/create_fn":)",
      Json(patch["metadata"]["annotations"]["kcr.dev/create_fn"]),
      R"(,"kcr.dev/last-handled-configuration":)",
      Json(patch["metadata"]["annotations"]
                ["kcr.dev/last-handled-configuration"]),
      R"(}},"spec":{"x":1}})"));
  auto fetched = storage.FetchProgress(*obj, "create_fn", kNow);
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  ASSERT_TRUE(fetched->has_value());
  EXPECT_EQ(**fetched, r);
  auto none = storage.FetchProgress(*obj, "update_fn", kNow);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto last = storage.FetchLastHandled(*obj);
  ASSERT_TRUE(last.ok());
  ASSERT_NE(*last, nullptr);
  EXPECT_EQ(Json(**last), R"({"spec":{"x":1}})");

  rapidjson::Document purge = NewPatch();
  storage.PurgeProgress(*obj, "create_fn", &purge);
  storage.PurgeProgress(*obj, "update_fn", &purge);  // absent: nothing
  EXPECT_EQ(Json(purge),
            R"({"metadata":{"annotations":{"kcr.dev/create_fn":null}}})");
}

TEST(StateStorageTest, PurgeDropsWhatThePatchWouldSet) {
  StateStorage storage(StorageOptions{});
  auto obj = Parse(R"({"metadata":{"name":"a"}})");
  rapidjson::Document patch = NewPatch();
  storage.StoreProgress("fn", ProgressRecord{}, &patch);
  storage.PurgeProgress(*obj, "fn", &patch);
  EXPECT_EQ(Json(patch), R"({"metadata":{"annotations":{}}})");
}

TEST(StateStorageTest, StatusStorageWritesNullsSoMergesClearOldFields) {
  StorageOptions options;
  options.progress_in_status = true;
  options.status_field = "op";
  StateStorage storage(options);
  ProgressRecord r;
  r.started = kNow;
  r.success = true;
  rapidjson::Document patch = NewPatch();
  storage.StoreProgress("fn", r, &patch);
  EXPECT_EQ(
      Json(patch),
      R"({"status":{"op":{"progress":{"fn":{"started":"2023-11-14T22:13:20",)"
      R"("stopped":null,"delayed":null,"purpose":null,"retries":0,)"
      R"("success":true,"failure":false,"message":null}}}}})");
  auto obj = Parse(Cat(R"({"metadata":{"name":"a"},"status":{"x":1,"op":)",
                       Json(patch["status"]["op"]), "}}"));
  auto fetched = storage.FetchProgress(*obj, "fn", kNow);
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  ASSERT_TRUE(fetched->has_value());
  EXPECT_EQ(**fetched, r);
  rapidjson::Document purge = NewPatch();
  storage.PurgeProgress(*obj, "fn", &purge);
  EXPECT_EQ(Json(purge), R"({"status":{"op":{"progress":{"fn":null}}}})");
}

TEST(StateStorageTest, HostileStateIsAnErrorNotACrash) {
  StateStorage storage(StorageOptions{});
  auto obj = Parse(R"({"metadata":{"name":"a","annotations":{
      "kcr.dev/last-handled-configuration":"{not json",
      "kcr.dev/a":"[1,2]",
      "kcr.dev/b":"{\"retries\":\"many\"}",
      "kcr.dev/c":"{\"started\":\"2999-01-01T00:00:00\"}",
      "kcr.dev/d":"\"\\ud800\"",
      "kcr.dev/e":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}}})");
  EXPECT_FALSE(storage.FetchLastHandled(*obj).ok());
  for (const char* id : {"a", "b", "c", "d", "e"}) {
    EXPECT_FALSE(storage.FetchProgress(*obj, id, kNow).ok()) << id;
  }
  auto not_object = Parse(R"({"metadata":{"name":"a","annotations":{
      "kcr.dev/last-handled-configuration":"[1]"}}})");
  EXPECT_FALSE(storage.FetchLastHandled(*not_object).ok());
}

}  // namespace
}  // namespace kcr::handlers::internal
