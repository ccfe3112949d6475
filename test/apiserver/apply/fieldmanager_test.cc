#include "apiserver/apply/fieldmanager.h"

#include <string>

#include "absl/time/time.h"
#include "api/patch/patch_schema.h"
#include "gtest/gtest.h"
#include "test/api/json/json_test_util.h"

namespace kcr {
namespace apiserver {
namespace {

using ::kcr::json::testing::Json;
using ::kcr::json::testing::JsonEq;
using ::kcr::json::testing::Str;

const absl::Time kT0 =
    absl::FromUnixSeconds(1700000000);  // 2023-11-14T22:13:20Z
const absl::Time kT1 = absl::FromUnixSeconds(1700000060);

const api::PatchSchema* ConfigMap() {
  return api::BuiltinPatchSchema("", "ConfigMap");
}
const api::PatchSchema* Deployment() {
  return api::BuiltinPatchSchema("apps", "Deployment");
}

ApplyOptions As(const std::string& manager, bool force = false,
                absl::Time now = kT0) {
  ApplyOptions o;
  o.field_manager = manager;
  o.force = force;
  o.now = now;
  return o;
}

// Applies and expects success.
rapidjson::Document MustApply(const rapidjson::Value* live,
                              absl::string_view config,
                              const api::PatchSchema* schema,
                              const ApplyOptions& o) {
  absl::StatusOr<ApplyResult> r =
      ServerSideApply(live, Json(config), schema, o);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return rapidjson::Document();
  EXPECT_TRUE(r->conflicts.empty()) << ApplyConflictMessage(r->conflicts);
  return std::move(r->object);
}

std::string Conflicts(const rapidjson::Value* live, absl::string_view config,
                      const api::PatchSchema* schema, const ApplyOptions& o) {
  absl::StatusOr<ApplyResult> r =
      ServerSideApply(live, Json(config), schema, o);
  if (!r.ok()) return "error: " + std::string(r.status().message());
  if (r->conflicts.empty()) return "no conflict";
  EXPECT_TRUE(r->object.IsNull());
  return ApplyConflictMessage(r->conflicts);
}

// metadata.managedFields without the times, for comparison.
std::string Managed(const rapidjson::Value& object) {
  rapidjson::Document d;
  d.CopyFrom(object["metadata"]["managedFields"], d.GetAllocator());
  for (auto& e : d.GetArray()) e.EraseMember("time");
  return Str(d);
}

constexpr absl::string_view kCm =
    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1","namespace":"default","labels":{"app":"demo"}},"data":{"a":"1","b":"2"}})";

TEST(ApplyTest, CreatesAndRecordsTheApplier) {
  absl::StatusOr<ApplyResult> r =
      ServerSideApply(nullptr, Json(kCm), ConfigMap(), As("kubectl"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->created);
  EXPECT_EQ(Str(r->object["data"]), R"({"a":"1","b":"2"})");
  EXPECT_EQ(
      Str(r->object["metadata"]["managedFields"]),
      R"([{"manager":"kubectl","operation":"Apply","apiVersion":"v1",)"
      R"("time":"2023-11-14T22:13:20Z","fieldsType":"FieldsV1","fieldsV1":)"
      R"({"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}}])");
}

TEST(ApplyTest, ReapplyChangesAndRemovesOmittedFields) {
  rapidjson::Document live =
      MustApply(nullptr, kCm, ConfigMap(), As("kubectl"));
  rapidjson::Document next = MustApply(
      &live,
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"},"data":{"a":"9"}})",
      ConfigMap(), As("kubectl", false, kT1));
  // b and the label were the applier's alone: gone, and the emptied labels.
  EXPECT_EQ(Str(next["data"]), R"({"a":"9"})");
  EXPECT_FALSE(next["metadata"].HasMember("labels"));
  EXPECT_EQ(Managed(next),
            R"([{"manager":"kubectl","operation":"Apply","apiVersion":"v1",)"
            R"("fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}])");
  EXPECT_EQ(
      std::string(next["metadata"]["managedFields"][0]["time"].GetString()),
      "2023-11-14T22:14:20Z");
}

TEST(ApplyTest, ConflictWithAnotherApplierAndForce) {
  rapidjson::Document live =
      MustApply(nullptr, kCm, ConfigMap(), As("kubectl"));
  const std::string other =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"},"data":{"a":"2","c":"3"}})";
  EXPECT_EQ(
      Conflicts(&live, other, ConfigMap(), As("other")),
      R"(Apply failed with 1 conflict: conflict with "kubectl": .data.a)");
  rapidjson::Document forced =
      MustApply(&live, other, ConfigMap(), As("other", true));
  EXPECT_EQ(Str(forced["data"]), R"({"a":"2","b":"2","c":"3"})");
  EXPECT_EQ(
      Managed(forced),
      R"([{"manager":"kubectl","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:data":{"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}},)"
      R"({"manager":"other","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:data":{"f:a":{},"f:c":{}}}}])");
  // The first applier now conflicts on a, which it no longer owns.
  EXPECT_EQ(Conflicts(&forced, kCm, ConfigMap(), As("kubectl")),
            R"(Apply failed with 1 conflict: conflict with "other": .data.a)");
}

TEST(ApplyTest, SameValueIsSharedAndSurvivesTheOtherApplierLeaving) {
  rapidjson::Document live =
      MustApply(nullptr, kCm, ConfigMap(), As("kubectl"));
  rapidjson::Document shared = MustApply(
      &live,
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"},"data":{"b":"2"}})",
      ConfigMap(), As("other"));
  // kubectl stops setting b; "other" still owns it, so it stays.
  rapidjson::Document after = MustApply(
      &shared,
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1","labels":{"app":"demo"}},"data":{"a":"1"}})",
      ConfigMap(), As("kubectl"));
  EXPECT_EQ(Str(after["data"]), R"({"a":"1","b":"2"})");
}

TEST(ApplyTest, MultipleConflictsMessage) {
  rapidjson::Document live = MustApply(nullptr, kCm, ConfigMap(), As("a"));
  live = MustApply(
      &live,
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"},"data":{"z":"1"}})",
      ConfigMap(), As("b"));
  EXPECT_EQ(
      Conflicts(
          &live,
          R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1","labels":{"app":"x"}},"data":{"a":"x","z":"x"}})",
          ConfigMap(), As("c")),
      "Apply failed with 3 conflicts: conflicts with \"a\":\n- .data.a\n"
      "- .metadata.labels.app\nconflicts with \"b\":\n- .data.z");
}

constexpr absl::string_view kDeploy =
    R"({"apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"d","namespace":"default"},
  "spec":{"replicas":1,"selector":{"matchLabels":{"app":"d"}},
    "template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[
      {"name":"a","image":"busybox:1","env":[{"name":"X","value":"1"}]},
      {"name":"b","image":"busybox:1"}]}}}})";

TEST(ApplyTest, KeyedListsAreOwnedPerElement) {
  rapidjson::Document live =
      MustApply(nullptr, kDeploy, Deployment(), As("kubectl"));
  const rapidjson::Value& fields =
      live["metadata"]["managedFields"][0]["fieldsV1"];
  EXPECT_EQ(
      Str(fields["f:spec"]["f:template"]["f:spec"]),
      R"({"f:containers":{"k:{\"name\":\"a\"}":{".":{},"f:env":{"k:{\"name\":\"X\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{}},)"
      R"("k:{\"name\":\"b\"}":{".":{},"f:image":{},"f:name":{}}}})");
  // The selector is atomic: owned as one field.
  EXPECT_EQ(Str(fields["f:spec"]["f:selector"]), "{}");

  // Another applier changing a's image conflicts at the element's field.
  EXPECT_EQ(
      Conflicts(
          &live,
          R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"spec":{"containers":[{"name":"a","image":"busybox:2"}]}}}})",
          Deployment(), As("ci")),
      "Apply failed with 1 conflict: conflict with \"kubectl\": "
      ".spec.template.spec.containers[name=\"a\"].image");

  // The applier dropping container b and env X removes them.
  rapidjson::Document next = MustApply(
      &live,
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
          "spec":{"replicas":3,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},
          "spec":{"containers":[{"name":"a","image":"busybox:2"}]}}}})",
      Deployment(), As("kubectl"));
  EXPECT_TRUE(JsonEq(Json(R"([{"name":"a","image":"busybox:2"}])"),
                     next["spec"]["template"]["spec"]["containers"]));
  EXPECT_EQ(next["spec"]["replicas"].GetInt(), 3);
}

TEST(ApplyTest, UpdateManagersConflictWithTheirApiVersion) {
  // kubectl client-side apply created it (an Update by
  // kubectl-client-side-apply); a server-side apply then changes replicas.
  rapidjson::Document live = Json(kDeploy);
  UpdateOptions u;
  u.field_manager = "kubectl-client-side-apply";
  u.now = kT0;
  ASSERT_TRUE(RecordUpdateManagedFields(nullptr, &live, Deployment(), u).ok());
  const std::string apply =
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":2}})";
  EXPECT_EQ(Conflicts(&live, apply, Deployment(), As("kubectl")),
            "Apply failed with 1 conflict: conflict with "
            "\"kubectl-client-side-apply\" using apps/v1: .spec.replicas");
  // The same value is no conflict.
  rapidjson::Document same = MustApply(
      &live,
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":1}})",
      Deployment(), As("kubectl"));
  EXPECT_EQ(same["metadata"]["managedFields"].Size(), 2u);
}

TEST(ApplyTest, UnmanagedObjectBelongsToBeforeFirstApply) {
  rapidjson::Document live = Json(kCm);
  EXPECT_EQ(
      Conflicts(
          &live,
          R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"},"data":{"a":"5"}})",
          ConfigMap(), As("kubectl")),
      "Apply failed with 1 conflict: conflict with \"before-first-apply\" "
      "using v1: .data.a");
}

TEST(ApplyTest, CustomResourcesHaveAtomicListsAndScopeHidesStatus) {
  ApplyOptions o = As("m");
  o.scope = FieldScope::kMainResource;
  rapidjson::Document cr = MustApply(
      nullptr,
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"items":[{"name":"a"}],"size":1},"status":{"x":1}})",
      nullptr, o);
  EXPECT_EQ(Str(cr["metadata"]["managedFields"][0]["fieldsV1"]),
            R"({"f:spec":{"f:items":{},"f:size":{}}})");
}

TEST(ApplyTest, BadInput) {
  rapidjson::Document live = Json(kCm);
  auto error = [&](absl::string_view config, const std::string& manager) {
    absl::StatusOr<ApplyResult> r =
        ServerSideApply(&live, Json(config), ConfigMap(), As(manager));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(r.status().message());
  };
  EXPECT_EQ(error(kCm, ""),
            "fieldManager: Required value: is required for apply patch");
  EXPECT_EQ(error(kCm, std::string(129, 'x')),
            "fieldManager: Too long: may not be longer than 128");
  EXPECT_EQ(error("[]", "m"), "the apply configuration must be an object");
  EXPECT_EQ(error(R"({"metadata":{}})", "m"),
            "the apply configuration must set apiVersion and kind");
  EXPECT_EQ(
      error(
          R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"managedFields":[]}})",
          "m"),
      "metadata.managedFields must be nil");
  absl::StatusOr<ApplyResult> r = ServerSideApply(
      nullptr,
      Json(
          R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}})"),
      Deployment(), As("m"));
  EXPECT_EQ(r.status().message(),
            "apply: spec.template.spec.containers: an element does not contain "
            "the declared merge key \"name\"");
}

TEST(ApplyTest, ParseApplyConfiguration) {
  absl::StatusOr<rapidjson::Document> json =
      ParseApplyConfiguration(R"( {"apiVersion":"v1","kind":"ConfigMap"})");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(Str(*json), R"({"apiVersion":"v1","kind":"ConfigMap"})");
  absl::StatusOr<rapidjson::Document> yaml = ParseApplyConfiguration(
      "apiVersion: v1\nkind: ConfigMap\ndata:\n  n: \"1\"\n  on: yes\n");
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  EXPECT_EQ(
      Str(*yaml),
      R"({"apiVersion":"v1","kind":"ConfigMap","data":{"n":"1","on":true}})");
  EXPECT_FALSE(ParseApplyConfiguration("- a\n- b\n").ok());
  EXPECT_FALSE(ParseApplyConfiguration("{").ok());
  EXPECT_FALSE(ParseApplyConfiguration("a: [").ok());
  EXPECT_FALSE(ParseApplyConfiguration("").ok());
  // Deep nesting is an error, never a stack overflow.
  EXPECT_FALSE(ParseApplyConfiguration(std::string(100000, '[')).ok());
  EXPECT_FALSE(ParseApplyConfiguration(std::string(100000, '{')).ok());
  std::string block;
  for (int i = 0; i < 5000; ++i) block += std::string(i, ' ') + "a:\n";
  EXPECT_FALSE(ParseApplyConfiguration(block).ok());
}

TEST(RecordUpdateTest, CreateOwnsEverythingAndUpdatesTakeOver) {
  rapidjson::Document obj = Json(kCm);
  UpdateOptions u;
  u.field_manager = "kubectl-create";
  u.now = kT0;
  ASSERT_TRUE(RecordUpdateManagedFields(nullptr, &obj, ConfigMap(), u).ok());
  EXPECT_EQ(
      Managed(obj),
      R"([{"manager":"kubectl-create","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}}])");

  // kubectl edit changes a, removes b and adds annotations.
  rapidjson::Document next;
  next.CopyFrom(obj, next.GetAllocator());
  next["data"]["a"] = "5";
  next["data"].RemoveMember("b");
  next["metadata"].AddMember(
      "annotations",
      rapidjson::Value(Json(R"({"x":"1"})"), next.GetAllocator()),
      next.GetAllocator());
  u.field_manager = "kubectl-edit";
  u.now = kT1;
  ASSERT_TRUE(RecordUpdateManagedFields(&obj, &next, ConfigMap(), u).ok());
  EXPECT_EQ(
      Managed(next),
      R"([{"manager":"kubectl-create","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:metadata":{"f:labels":{"f:app":{}}}}},)"
      R"({"manager":"kubectl-edit","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:data":{"f:a":{}},"f:metadata":{"f:annotations":{".":{},"f:x":{}}}}}])");

  // An update that changes nothing keeps the managers and their times.
  rapidjson::Document same;
  same.CopyFrom(next, same.GetAllocator());
  u.now = kT1 + absl::Seconds(60);
  ASSERT_TRUE(RecordUpdateManagedFields(&next, &same, ConfigMap(), u).ok());
  EXPECT_TRUE(JsonEq(next, same));
}

TEST(RecordUpdateTest, EmptyEntryResetsAndEmptyListKeeps) {
  rapidjson::Document obj = Json(kCm);
  UpdateOptions u;
  u.field_manager = "m";
  ASSERT_TRUE(RecordUpdateManagedFields(nullptr, &obj, ConfigMap(), u).ok());

  rapidjson::Document cleared;
  cleared.CopyFrom(obj, cleared.GetAllocator());
  cleared["metadata"]["managedFields"].CopyFrom(Json("[{}]"),
                                                cleared.GetAllocator());
  ASSERT_TRUE(RecordUpdateManagedFields(&obj, &cleared, ConfigMap(), u).ok());
  EXPECT_FALSE(cleared["metadata"].HasMember("managedFields"));

  rapidjson::Document kept;
  kept.CopyFrom(obj, kept.GetAllocator());
  kept["metadata"]["managedFields"].SetArray();
  ASSERT_TRUE(RecordUpdateManagedFields(&obj, &kept, ConfigMap(), u).ok());
  EXPECT_EQ(Managed(kept), Managed(obj));
}

TEST(RecordUpdateTest, BadInput) {
  rapidjson::Document obj = Json(kCm);
  UpdateOptions u;
  EXPECT_FALSE(RecordUpdateManagedFields(nullptr, &obj, ConfigMap(), u).ok());
  u.field_manager = "a\nb";
  EXPECT_EQ(RecordUpdateManagedFields(nullptr, &obj, ConfigMap(), u).message(),
            "fieldManager: Invalid value: \"a\\nb\": must only contain "
            "printable characters");
  // Undecodable managed fields count as none.
  u.field_manager = "m";
  rapidjson::Document junk = Json(
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"managedFields":[{"manager":1}]},"data":{"a":"1"}})");
  ASSERT_TRUE(RecordUpdateManagedFields(nullptr, &junk, ConfigMap(), u).ok());
  EXPECT_EQ(
      Managed(junk),
      R"([{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}])");
}

TEST(FieldManagerTest, FromUserAgent) {
  EXPECT_EQ(FieldManagerFromUserAgent(
                "kubectl.1.32/v1.32.0 (linux/amd64) kubernetes/70d3cc9"),
            "kubectl.1.32");
  EXPECT_EQ(FieldManagerFromUserAgent("OpenAPI-Generator/22.6.0/python"),
            "OpenAPI-Generator");
  EXPECT_EQ(FieldManagerFromUserAgent("a\tb"), "ab");
  EXPECT_EQ(FieldManagerFromUserAgent(std::string(300, 'x')).size(), 128u);
  EXPECT_TRUE(ValidateFieldManager("", false).ok());
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
