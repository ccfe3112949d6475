// The shapes of the local API server's answers that clients read field by
// field: the details of a failure Status, the continue token of a 410 for
// an expired one, protobuf DeleteOptions, and the legacy watch path of one
// object. Each is checked over real HTTP, as kube-apiserver answers it.
#include <memory>
#include <string>
#include <utility>

#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"
#include "test/apiserver/protobuf_wire.h"
#include "test/apiserver/test_client.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;

class ErrorShapesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ApiServerOptions options;
    options.enable_fault_endpoint = true;
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
  }

  TestResponse CreateConfigMap(const std::string& name) {
    return client_->Post(
        "/api/v1/namespaces/default/configmaps",
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
            R"("},"data":{"k":"v"}})");
  }

  // Whether the body's Status has a details member.
  static bool HasDetails(const TestResponse& r) {
    rapidjson::Document d = r.Json();
    return d.IsObject() && d.HasMember("details") && d["details"].IsObject();
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
};

using testing::Bytes;
using testing::Envelope;
// Envelopes here carry no contentType, as the bodies these tests mimic.
std::string Number(int field, uint64_t v) {
  return testing::VarintField(field, v);
}

TEST_F(ErrorShapesTest, NotFoundCarriesDetailsAsKubeApiserver) {
  TestResponse r = client_->Get("/api/v1/namespaces/default/configmaps/none");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.Str("/details/name"), "none");
  EXPECT_EQ(r.Str("/details/kind"), "configmaps");

  // An unknown path or subresource: details present, every member empty —
  // kubectl debug reads details.name of the 404 of pods/ephemeralcontainers.
  for (const char* path :
       {"/api/v1/namespaces/default/pods/p/nosuchsubresource", "/nowhere",
        "/apis/nosuch.group/v1"}) {
    r = client_->Get(path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.Str("/reason"), "NotFound") << path;
    EXPECT_TRUE(HasDetails(r)) << path << " " << r.body;
  }
}

TEST_F(ErrorShapesTest, DetailsOnlyWhereApimachinerySetsThem) {
  ASSERT_EQ(CreateConfigMap("a").status, 201);
  TestResponse r = CreateConfigMap("a");
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.Str("/reason"), "AlreadyExists");
  EXPECT_EQ(r.Str("/details/name"), "a");
  EXPECT_EQ(r.Str("/details/kind"), "configmaps");

  r = client_->Put(
      "/api/v1/namespaces/default/configmaps/a",
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"1"}})");
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.Str("/reason"), "Conflict");
  EXPECT_EQ(r.Str("/details/name"), "a");

  r = client_->Post("/api/v1/namespaces/default/configmaps",
                    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{}})");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(r.Str("/reason"), "Invalid");
  EXPECT_EQ(r.Str("/details/kind"), "ConfigMap");
  EXPECT_EQ(r.Str("/details/causes/0/field"), "metadata.name");

  r = client_->Do("POST", "/api/v1/namespaces/default/configmaps/a");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.Str("/details/kind"), "configmaps");

  // NewBadRequest and NewResourceExpired set no details.
  r = client_->Post("/api/v1/namespaces/default/configmaps", "{not json");
  EXPECT_EQ(r.status, 400);
  EXPECT_FALSE(HasDetails(r)) << r.body;
}

TEST_F(ErrorShapesTest, ExpiredContinueCarriesAFreshToken) {
  for (const char* name : {"c1", "c2", "c3"}) {
    ASSERT_EQ(CreateConfigMap(name).status, 201);
  }
  TestResponse page =
      client_->Get("/api/v1/namespaces/default/configmaps?limit=1");
  ASSERT_EQ(page.status, 200);
  const std::string token = page.Str("/metadata/continue");
  ASSERT_FALSE(token.empty());
  ASSERT_EQ(CreateConfigMap("c4").status, 201);
  ASSERT_EQ(client_->Post("/fault-injection/compact", "").status, 200);

  TestResponse r = client_->Get(
      "/api/v1/namespaces/default/configmaps?limit=1&continue=" + token);
  EXPECT_EQ(r.status, 410);
  EXPECT_EQ(r.Str("/reason"), "Expired");
  EXPECT_THAT(r.Str("/message"),
              HasSubstr("use the continue token in this response"));
  const std::string fresh = r.Str("/metadata/continue");
  ASSERT_FALSE(fresh.empty()) << r.body;

  // The fresh token goes on from where the expired one stopped, at the
  // latest revision: c2, then c3 and c4.
  r = client_->Get("/api/v1/namespaces/default/configmaps?limit=1&continue=" +
                   fresh);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Str("/items/0/metadata/name"), "c2");
  r = client_->Get("/api/v1/namespaces/default/configmaps?continue=" +
                   r.Str("/metadata/continue"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Str("/items/0/metadata/name"), "c3");
  EXPECT_EQ(r.Str("/items/1/metadata/name"), "c4");
}

TEST_F(ErrorShapesTest, ProtobufDeleteOptionsAreDecoded) {
  TestResponse created = CreateConfigMap("d");
  ASSERT_EQ(created.status, 201);
  const std::string path = "/api/v1/namespaces/default/configmaps/d";
  const std::string pb = "application/vnd.kubernetes.protobuf";

  // preconditions.uid that does not match: 409, nothing deleted.
  std::string wrong_uid = Envelope(
      "v1", "DeleteOptions",
      Number(1, 0) + Bytes(2, Bytes(1, "not-the-uid")) + Bytes(4, "Background"),
      "");
  TestResponse r = client_->Do("DELETE", path, wrong_uid, pb);
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(client_->Get(path).status, 200);

  // dryRun: [All]: answered, nothing deleted.
  r = client_->Do(
      "DELETE", path,
      Envelope("meta.k8s.io/v1", "DeleteOptions", Bytes(5, "All"), ""), pb);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(client_->Get(path).status, 200);

  // What kubectl delete --grace-period=0 sends.
  std::string uid = created.Str("/metadata/uid");
  r = client_->Do(
      "DELETE", path,
      Envelope("v1", "DeleteOptions",
               Number(1, 0) + Bytes(2, Bytes(1, uid)) + Bytes(4, "Background"),
               ""),
      pb);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(client_->Get(path).status, 404);
}

TEST_F(ErrorShapesTest, UnsupportedProtobufBodyIsUnsupportedMediaType) {
  // A kind the server has no protobuf decoding for (as a CR in
  // kube-apiserver).
  TestResponse r = client_->Do(
      "POST", "/api/v1/namespaces/default/configmaps",
      Envelope("v1", "ReplicationController", Bytes(1, Bytes(1, "x")), ""),
      "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(r.status, 415) << r.body;
  EXPECT_EQ(r.Str("/reason"), "UnsupportedMediaType");
  // A field of DeleteOptions that does not exist.
  r = client_->Do("DELETE", "/api/v1/namespaces/default/configmaps/x",
                  Envelope("v1", "DeleteOptions", Number(99, 1), ""),
                  "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(r.status, 415) << r.body;
}

TEST_F(ErrorShapesTest, LegacyWatchOfOneObjectStreamsItsEvents) {
  ASSERT_EQ(CreateConfigMap("w").status, 201);
  ASSERT_EQ(CreateConfigMap("other").status, 201);
  std::unique_ptr<WatchStream> w =
      client_->Watch("/api/v1/watch/namespaces/default/configmaps/w");
  ASSERT_EQ(w->status(), 200);
  std::optional<std::string> e = w->Next();
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr(R"("type":"ADDED")"));
  EXPECT_THAT(*e, HasSubstr(R"("name":"w")"));
  ASSERT_EQ(
      client_->Delete("/api/v1/namespaces/default/configmaps/other").status,
      200);
  ASSERT_EQ(client_->Delete("/api/v1/namespaces/default/configmaps/w").status,
            200);
  e = w->Next();
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr(R"("type":"DELETED")"));
  EXPECT_THAT(*e, HasSubstr(R"("name":"w")"));
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
