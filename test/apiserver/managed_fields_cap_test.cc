// metadata.managedFields stays bounded however many field managers write
// an object: past kMaxUpdateManagers "Update" entries the oldest are merged
// into "ancient-changes", as kube-apiserver does, and the merged fields
// stay owned. Through real HTTP.
#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "apiserver/api_server.h"
#include "apiserver/registry/managed_fields.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/apiserver/test_client.h"

namespace kcr::apiserver {
namespace {

constexpr char kPath[] = "/api/v1/namespaces/default/configmaps";

TEST(ManagedFieldsCapTest, ManyUpdateManagersAreMergedIntoAncientChanges) {
  auto server = ApiServer::Start(ApiServerOptions());
  ASSERT_TRUE(server.ok()) << server.status();
  TestClient client("127.0.0.1", (*server)->port());
  ASSERT_EQ(client
                .Post(absl::StrCat(kPath, "?fieldManager=creator"),
                      R"({"apiVersion":"v1","kind":"ConfigMap",)"
                      R"("metadata":{"name":"cm"},"data":{"k":"v"}})")
                .status,
            201);
  constexpr int kWriters = 30;
  for (int i = 0; i < kWriters; ++i) {
    TestResponse r =
        client.Patch(absl::StrCat(kPath, "/cm?fieldManager=writer-", 100 + i),
                     absl::StrCat(R"({"data":{"key-)", 100 + i, R"(":"x"}})"),
                     "application/merge-patch+json");
    ASSERT_EQ(r.status, 200) << r.body;
  }
  TestResponse got = client.Get(absl::StrCat(kPath, "/cm"));
  ASSERT_EQ(got.status, 200);
  rapidjson::Document doc = got.Json();
  const rapidjson::Value& entries = doc["metadata"]["managedFields"];
  ASSERT_TRUE(entries.IsArray());
  EXPECT_LE(entries.Size(), kMaxUpdateManagers);
  std::set<std::string> managers;
  const rapidjson::Value* ancient = nullptr;
  for (const auto& e : entries.GetArray()) {
    EXPECT_STREQ(e["operation"].GetString(), "Update");
    const std::string manager = e["manager"].GetString();
    EXPECT_TRUE(managers.insert(manager).second) << "twice: " << manager;
    if (manager == kAncientChangesManager) ancient = &e;
  }
  ASSERT_NE(ancient, nullptr) << got.body;
  // The newest writer keeps its own entry; the oldest ones' fields, and the
  // creator's, are still owned, by the bucket.
  EXPECT_EQ(managers.count(absl::StrCat("writer-", 100 + kWriters - 1)), 1u);
  const rapidjson::Value& data = (*ancient)["fieldsV1"]["f:data"];
  EXPECT_TRUE(data.HasMember("f:key-100")) << got.body;
  EXPECT_TRUE(data.HasMember("f:k")) << got.body;
}

}  // namespace
}  // namespace kcr::apiserver
