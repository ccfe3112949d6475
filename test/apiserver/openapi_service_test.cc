// The OpenAPI endpoints over HTTP: documents follow the CRDs as they are
// created, updated and deleted, and the hash/ETag caching behaves as
// kube-openapi's handler3.
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/test_client.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kCrdPath[] =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

std::string WidgetCrd(const std::string& description) {
  return R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
  "metadata":{"name":"widgets.example.com"},
  "spec":{"group":"example.com","scope":"Namespaced",
    "names":{"plural":"widgets","singular":"widget","kind":"Widget"},
    "versions":[{"name":"v1","served":true,"storage":true,
      "schema":{"openAPIV3Schema":{"type":"object","properties":{
        "spec":{"type":"object","description":")" +
         description + R"(","properties":{"size":{"type":"integer"}}}}}}}]}})";
}

class OpenApiServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ApiServerOptions options;
    options.controllers.node_simulator = false;
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
  }

  // The index's URL of the group-version, or "".
  std::string UrlOf(const std::string& gv) {
    TestResponse index = client_->Get("/openapi/v3");
    EXPECT_EQ(index.status, 200);
    rapidjson::Document doc = index.Json();
    if (!doc.IsObject() || !doc.HasMember("paths")) return "";
    auto it = doc["paths"].FindMember(gv.c_str());
    if (it == doc["paths"].MemberEnd()) return "";
    return it->value["serverRelativeURL"].GetString();
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(OpenApiServiceTest, DocumentsFollowTheCrds) {
  EXPECT_EQ(UrlOf("apis/example.com/v1"), "");
  TestResponse created = client_->Post(kCrdPath, WidgetCrd("First."));
  ASSERT_EQ(created.status, 201) << created.body;

  const std::string url = UrlOf("apis/example.com/v1");
  ASSERT_THAT(url,
              ::testing::StartsWith("/openapi/v3/apis/example.com/v1?hash="));
  TestResponse doc = client_->Get(url);
  ASSERT_EQ(doc.status, 200);
  EXPECT_EQ(doc.Header("content-type"), "application/json");
  EXPECT_THAT(doc.body, HasSubstr("First."));
  EXPECT_THAT(doc.body, HasSubstr(R"("x-kubernetes-group-version-kind")"));
  const std::string hash = url.substr(url.find("hash=") + 5);
  EXPECT_EQ(doc.Header("etag"), "\"" + hash + "\"");
  EXPECT_EQ(doc.Header("cache-control"), "public, immutable");
  EXPECT_FALSE(doc.Header("expires").empty());

  // The v2 JSON document has the kind too.
  TestResponse v2 =
      client_->Get("/openapi/v2", {{"Accept", "application/json"}});
  EXPECT_EQ(v2.status, 200);
  EXPECT_THAT(v2.body, HasSubstr(R"("com.example.v1.Widget")"));

  // An update changes the document and its hash; the old URL redirects.
  TestResponse current =
      client_->Get(std::string(kCrdPath) + "/widgets.example.com");
  std::string rv = current.Str("/metadata/resourceVersion");
  std::string update = WidgetCrd("Second.");
  update.insert(update.find(R"("name":"widgets.example.com")"),
                R"("resourceVersion":")" + rv + R"(",)");
  TestResponse updated =
      client_->Put(std::string(kCrdPath) + "/widgets.example.com", update);
  ASSERT_EQ(updated.status, 200) << updated.body;
  const std::string new_url = UrlOf("apis/example.com/v1");
  ASSERT_NE(new_url, url);
  TestResponse moved = client_->Get(url);
  EXPECT_EQ(moved.status, 301);
  EXPECT_EQ(moved.Header("location"), new_url);
  TestResponse second = client_->Get(new_url);
  EXPECT_THAT(second.body, HasSubstr("Second."));
  EXPECT_THAT(second.body, Not(HasSubstr("First.")));

  // Deleting the CRD removes its group-version.
  TestResponse deleted =
      client_->Do("DELETE", std::string(kCrdPath) + "/widgets.example.com");
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(UrlOf("apis/example.com/v1"), "");
  EXPECT_EQ(client_->Get("/openapi/v3/apis/example.com/v1").status, 404);
  EXPECT_THAT(client_->Get("/openapi/v2").body,
              Not(HasSubstr("com.example.v1.Widget")));
}

TEST_F(OpenApiServiceTest, ConditionalRequestsAndNegotiation) {
  ASSERT_EQ(client_->Post(kCrdPath, WidgetCrd("Doc.")).status, 201);
  TestResponse index = client_->Get("/openapi/v3");
  const std::string etag = index.Header("etag");
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(client_->Get("/openapi/v3", {{"If-None-Match", etag}}).status, 304);

  // Without a hash: the document, no immutable caching.
  TestResponse plain = client_->Get("/openapi/v3/apis/example.com/v1");
  EXPECT_EQ(plain.status, 200);
  EXPECT_NE(plain.Header("cache-control"), "public, immutable");
  EXPECT_EQ(client_
                ->Get("/openapi/v3/apis/example.com/v1",
                      {{"If-None-Match", plain.Header("etag")}})
                .status,
            304);
  // v3 is served as JSON only.
  EXPECT_EQ(client_
                ->Get("/openapi/v3/apis/example.com/v1",
                      {{"Accept",
                        "application/com.github.proto-openapi.spec.v3.v1.0+"
                        "protobuf"}})
                .status,
            406);
  // v2 in protobuf: the empty document, never the '@' media type.
  for (const char* path : {"/openapi/v2", "/swagger-2.0.0.pb-v1"}) {
    TestResponse pb = client_->Get(
        path, {{"Accept",
                "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}});
    EXPECT_EQ(pb.status, 200) << path;
    EXPECT_EQ(pb.Header("content-type"), "application/octet-stream") << path;
    EXPECT_EQ(pb.body, "") << path;
  }
  EXPECT_EQ(client_->Get("/openapi/v2", {{"Accept", "text/html"}}).status, 406);
  EXPECT_EQ(client_->Do("POST", "/openapi/v3", "{}").status, 405);
}

// Readers on several connections while CRDs come and go: every answer is
// a whole document of some moment (run under TSan for the cache).
TEST_F(OpenApiServiceTest, ConcurrentReadersWhileCrdsChange) {
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) {
    readers.emplace_back([&] {
      TestClient client("127.0.0.1", server_->port());
      while (!stop.load()) {
        TestResponse index = client.Get("/openapi/v3");
        if (index.status != 200 || !index.Json().IsObject()) ++bad;
        TestResponse v2 = client.Get("/openapi/v2");
        if (v2.status != 200 || !v2.Json().IsObject()) ++bad;
        TestResponse doc = client.Get("/openapi/v3/apis/example.com/v1");
        if (doc.status != 404 &&
            (doc.status != 200 || !doc.Json().IsObject())) {
          ++bad;
        }
      }
    });
  }
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(client_->Post(kCrdPath, WidgetCrd("Round.")).status, 201);
    ASSERT_NE(UrlOf("apis/example.com/v1"), "");
    ASSERT_EQ(
        client_->Do("DELETE", std::string(kCrdPath) + "/widgets.example.com")
            .status,
        200);
  }
  stop = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(UrlOf("apis/example.com/v1"), "");
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
