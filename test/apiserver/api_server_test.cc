// Integration tests of the local API server through real HTTP: each test
// starts a server on a free loopback port and checks one semantic the way a
// client sees it.
#include "apiserver/api_server.h"

#include <memory>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/test_client.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(ApiServerOptions()); }

  void StartServer(ApiServerOptions options) {
    server_.reset();
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
  }

  TestResponse CreateConfigMap(const std::string& ns, const std::string& name,
                               const std::string& labels = "{}") {
    return client_->Post(
        "/api/v1/namespaces/" + ns + "/configmaps",
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
            R"(","labels":)" + labels + R"(},"data":{"k":"v"}})");
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(ApiServerTest, VersionReportsMinor32) {
  TestResponse r = client_->Get("/version");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Str("/minor"), "32");
  EXPECT_THAT(r.Str("/gitVersion"), StartsWith("v1.32."));
}

TEST(ApiServerVersionTest, MinorOfGitVersion) {
  EXPECT_EQ(*MinorOfGitVersion("v1.30.2"), "30");
  EXPECT_EQ(*MinorOfGitVersion("v1.33.0-kcr.1"), "33");
  for (const char* bad : {"1.30.2", "v1.30", "v1.x.2", "v1.30.", ""}) {
    EXPECT_FALSE(MinorOfGitVersion(bad).ok()) << bad;
  }
  EXPECT_TRUE(ValidateVersion("v1.31.1", "31").ok());
  EXPECT_FALSE(ValidateVersion("v1.31.1", "32").ok());
  ApiServerOptions options;
  options.port = 0;
  options.git_version = "v1.31.1";
  absl::StatusOr<std::unique_ptr<ApiServer>> server = ApiServer::Start(options);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ApiServerTest, HealthEndpointsSayOk) {
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    TestResponse r = client_->Get(path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.body, "ok") << path;
  }
}

TEST_F(ApiServerTest, HealthChecksByNameAndUnknownOnesAreNotFound) {
  EXPECT_EQ(client_->Get("/healthz/ping").body, "ok");
  EXPECT_EQ(client_->Get("/livez/etcd").body, "ok");
  EXPECT_EQ(client_->Get("/readyz/informer-sync").body, "ok");
  for (const char* path :
       {"/healthz/bogus", "/livez/bogus", "/readyz/bogus", "/healthz/"}) {
    TestResponse r = client_->Get(path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(r.body, "404 page not found\n") << path;
  }
  TestResponse verbose = client_->Get("/readyz?verbose");
  EXPECT_EQ(verbose.status, 200);
  EXPECT_THAT(verbose.body, HasSubstr("[+]informer-sync ok\n"));
  EXPECT_THAT(verbose.body, ::testing::EndsWith("readyz check passed\n"));
}

TEST_F(ApiServerTest, OpenApiDocumentsOfTheBuiltinKinds) {
  // kubectl asks for protobuf (with the '@' form): an empty document.
  TestResponse v2 = client_->Get(
      "/openapi/v2",
      {{"Accept",
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}});
  EXPECT_EQ(v2.status, 200);
  EXPECT_EQ(v2.Header("content-type"), "application/octet-stream");
  EXPECT_EQ(v2.body, "");
  TestResponse json = client_->Get("/openapi/v2");
  EXPECT_EQ(json.status, 200);
  EXPECT_EQ(json.Str("/swagger"), "2.0");
  TestResponse v3 = client_->Get("/openapi/v3");
  EXPECT_EQ(v3.status, 200);
  EXPECT_THAT(v3.body, HasSubstr(R"("api/v1":{"serverRelativeURL":)"));
  EXPECT_THAT(v3.body, HasSubstr(R"("apis/apps/v1":)"));
  EXPECT_EQ(client_->Get("/openapi/v3/apis/apps/v1").status, 200);
  EXPECT_EQ(client_->Get("/openapi/v3/apis/example.com/v1").status, 404);
}

TEST_F(ApiServerTest, UnknownPathIsNotFoundStatus) {
  TestResponse r = client_->Get("/apis/nope.example.com/v1/things");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.Str("/kind"), "Status");
  EXPECT_EQ(r.Str("/reason"), "NotFound");
  EXPECT_EQ(r.Str("/message"),
            "the server could not find the requested resource");
}

TEST_F(ApiServerTest, LegacyDiscovery) {
  TestResponse api = client_->Get("/api");
  EXPECT_EQ(api.Str("/kind"), "APIVersions");
  EXPECT_EQ(api.Str("/versions/0"), "v1");
  TestResponse apis = client_->Get("/apis");
  EXPECT_EQ(apis.Str("/kind"), "APIGroupList");
  EXPECT_THAT(apis.body, HasSubstr(R"("groupVersion":"apps/v1")"));
  TestResponse v1 = client_->Get("/api/v1");
  EXPECT_EQ(v1.Str("/kind"), "APIResourceList");
  EXPECT_THAT(v1.body, HasSubstr(R"("name":"pods/status")"));
  EXPECT_THAT(v1.body, HasSubstr(R"("shortNames":["cm"])"));
  TestResponse apps = client_->Get("/apis/apps/v1");
  EXPECT_THAT(apps.body, HasSubstr(R"("name":"deployments/scale")"));
}

TEST_F(ApiServerTest, AggregatedDiscoveryWhenAsked) {
  const std::string accept =
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
      "application/json;g=apidiscovery.k8s.io;v=v2beta1;as="
      "APIGroupDiscoveryList,application/json";
  TestResponse r = client_->Get("/apis", {{"Accept", accept}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("content-type"),
            "application/json;g=apidiscovery.k8s.io;v=v2;as="
            "APIGroupDiscoveryList");
  EXPECT_EQ(r.Str("/kind"), "APIGroupDiscoveryList");
  EXPECT_EQ(r.Str("/items/0/metadata/name"), "apps");
  TestResponse beta = client_->Get(
      "/api", {{"Accept",
                "application/json;g=apidiscovery.k8s.io;v=v2beta1;as="
                "APIGroupDiscoveryList,application/json"}});
  EXPECT_EQ(beta.Str("/apiVersion"), "apidiscovery.k8s.io/v2beta1");
  EXPECT_EQ(beta.Str("/items/0/metadata/name"), "");
}

TEST_F(ApiServerTest, CreateFillsSystemFields) {
  TestResponse r = CreateConfigMap("default", "cm1");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_TRUE(std::regex_match(r.Str("/metadata/uid"),
                               std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}"
                                          "-[89ab][0-9a-f]{3}-[0-9a-f]{12}")));
  EXPECT_TRUE(std::regex_match(
      r.Str("/metadata/creationTimestamp"),
      std::regex("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ")));
  EXPECT_FALSE(r.Str("/metadata/resourceVersion").empty());
  EXPECT_EQ(r.Int("/metadata/generation"), -1);  // configmaps have none
  EXPECT_EQ(r.Str("/metadata/namespace"), "default");
}

TEST_F(ApiServerTest, ResourceVersionIsGlobalAndIncreasing) {
  int64_t a = std::stoll(
      CreateConfigMap("default", "a").Str("/metadata/resourceVersion"));
  TestResponse s =
      client_->Post("/api/v1/namespaces/default/secrets",
                    R"({"metadata":{"name":"s"},"stringData":{"x":"y"}})");
  int64_t b = std::stoll(s.Str("/metadata/resourceVersion"));
  int64_t c = std::stoll(
      CreateConfigMap("default", "c").Str("/metadata/resourceVersion"));
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
}

TEST_F(ApiServerTest, GenerateNameAddsFiveCharacters) {
  TestResponse r = client_->Post("/api/v1/namespaces/default/configmaps",
                                 R"({"metadata":{"generateName":"web-"}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_TRUE(
      std::regex_match(r.Str("/metadata/name"),
                       std::regex("web-[bcdfghjklmnpqrstvwxz2456789]{5}")));
}

TEST_F(ApiServerTest, CreateExistingIsAlreadyExists) {
  ASSERT_EQ(CreateConfigMap("default", "cm1").status, 201);
  TestResponse r = CreateConfigMap("default", "cm1");
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(
      r.body,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"cm1\" already exists","reason":"AlreadyExists","details":{"name":"cm1","kind":"configmaps"},"code":409})");
}

TEST_F(ApiServerTest, GetMissingIsNotFoundWithQualifiedName) {
  TestResponse r =
      client_->Get("/apis/apps/v1/namespaces/default/deployments/x");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.Str("/message"), R"(deployments.apps "x" not found)");
  EXPECT_EQ(r.Str("/details/group"), "apps");
  EXPECT_EQ(r.Str("/details/kind"), "deployments");
}

TEST_F(ApiServerTest, StaleUpdateIsConflict) {
  TestResponse c = CreateConfigMap("default", "cm1");
  std::string rv = c.Str("/metadata/resourceVersion");
  std::string body = R"({"metadata":{"name":"cm1","resourceVersion":")" + rv +
                     R"("},"data":{"k":"2"}})";
  EXPECT_EQ(
      client_->Put("/api/v1/namespaces/default/configmaps/cm1", body).status,
      200);
  TestResponse r =
      client_->Put("/api/v1/namespaces/default/configmaps/cm1", body);
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.Str("/reason"), "Conflict");
  EXPECT_EQ(r.Str("/message"),
            "Operation cannot be fulfilled on configmaps \"cm1\": the object "
            "has been modified; please apply your changes to the latest "
            "version and try again");
}

TEST_F(ApiServerTest, PutWithoutResourceVersionIsUnconditionalForBuiltins) {
  CreateConfigMap("default", "cm1");
  TestResponse r =
      client_->Put("/api/v1/namespaces/default/configmaps/cm1",
                   R"({"metadata":{"name":"cm1"},"data":{"k":"3"}})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Str("/data/k"), "3");
}

TEST_F(ApiServerTest, CreateInMissingNamespaceIsNotFound) {
  TestResponse r = CreateConfigMap("nope", "cm1");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.Str("/message"), R"(namespaces "nope" not found)");
}

TEST_F(ApiServerTest, DeleteConfigMapAnswersSuccessStatus) {
  TestResponse c = CreateConfigMap("default", "cm1");
  TestResponse r = client_->Delete("/api/v1/namespaces/default/configmaps/cm1",
                                   R"({"propagationPolicy":"Background"})");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Str("/kind"), "Status");
  EXPECT_EQ(r.Str("/status"), "Success");
  EXPECT_EQ(r.Str("/details/kind"), "configmaps");
  EXPECT_EQ(r.Str("/details/uid"), c.Str("/metadata/uid"));
  EXPECT_EQ(client_->Get("/api/v1/namespaces/default/configmaps/cm1").status,
            404);
}

TEST_F(ApiServerTest, WatchFromZeroSendsStateThenChanges) {
  CreateConfigMap("default", "a");
  // Not the namespace's kube-root-ca.crt, which appears when it likes.
  auto w = client_->Watch(
      "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0&"
      "fieldSelector=metadata.name!%3Dkube-root-ca.crt");
  ASSERT_EQ(w->status(), 200);
  auto first = w->Next();
  ASSERT_TRUE(first.has_value());
  EXPECT_THAT(*first, StartsWith(R"({"type":"ADDED","object":{)"));
  EXPECT_THAT(*first, HasSubstr(R"("name":"a")"));
  CreateConfigMap("default", "b");
  auto second = w->Next();
  ASSERT_TRUE(second.has_value());
  EXPECT_THAT(*second, HasSubstr(R"("name":"b")"));
  client_->Delete("/api/v1/namespaces/default/configmaps/a");
  auto third = w->Next();
  ASSERT_TRUE(third.has_value());
  EXPECT_THAT(*third, StartsWith(R"({"type":"DELETED")"));
}

TEST_F(ApiServerTest, WatchFromTooOldVersionGetsExpiredErrorEvent) {
  ApiServerOptions options;
  options.history_size = 2;
  StartServer(options);
  std::string rv =
      CreateConfigMap("default", "a").Str("/metadata/resourceVersion");
  CreateConfigMap("default", "b");
  CreateConfigMap("default", "c");
  CreateConfigMap("default", "d");
  auto w = client_->Watch(
      "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + rv);
  ASSERT_EQ(w->status(), 200);
  auto line = w->Next();
  ASSERT_TRUE(line.has_value());
  EXPECT_THAT(*line,
              StartsWith(R"({"type":"ERROR","object":{"kind":"Status")"));
  EXPECT_THAT(*line, HasSubstr(R"("reason":"Expired")"));
  EXPECT_THAT(*line, HasSubstr(R"("code":410)"));
  EXPECT_THAT(*line, HasSubstr("too old resource version: " + rv + " ("));
  EXPECT_FALSE(w->Next().has_value());
  EXPECT_TRUE(w->ended());
}

TEST_F(ApiServerTest, TokenRequiredWhenConfigured) {
  ApiServerOptions options;
  options.token = "secret";
  StartServer(options);
  TestResponse r = client_->Get("/api/v1/namespaces");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.Str("/reason"), "Unauthorized");
  EXPECT_EQ(client_->Get("/healthz").status, 200);
  client_->SetHeader("Authorization", "Bearer secret");
  EXPECT_EQ(client_->Get("/api/v1/namespaces").status, 200);
}

// Every error a client can meet is a Status object byte for byte as
// kube-apiserver writes it: empty fields omitted, details.kind the resource
// plural (the Kind for Invalid), the causes of an Invalid, the Retry-After
// of a 429.
TEST_F(ApiServerTest, ErrorsAreStatusObjectsAsKubeApiserverWritesThem) {
  ApiServerOptions options;
  options.enable_fault_endpoint = true;
  options.controllers.namespace_controller = false;
  options.controllers.node_simulator = false;
  StartServer(options);
  auto expect = [](const TestResponse& r, int code, const std::string& body) {
    EXPECT_EQ(r.status, code) << body;
    EXPECT_EQ(r.Header("content-type"), "application/json");
    EXPECT_EQ(r.body, body);
  };

  expect(
      client_->Get("/apis/apps/v1/namespaces/default/deployments/x"), 404,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \"x\" not found","reason":"NotFound","details":{"name":"x","group":"apps","kind":"deployments"},"code":404})");

  std::string rv =
      CreateConfigMap("default", "cm1").Str("/metadata/resourceVersion");
  const std::string stale = R"({"metadata":{"name":"cm1","resourceVersion":")" +
                            rv + R"("},"data":{"k":"2"}})";
  ASSERT_EQ(
      client_->Put("/api/v1/namespaces/default/configmaps/cm1", stale).status,
      200);
  expect(
      client_->Put("/api/v1/namespaces/default/configmaps/cm1", stale), 409,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on configmaps \"cm1\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"cm1","kind":"configmaps"},"code":409})");

  expect(
      client_->Post("/api/v1/namespaces/default/configmaps",
                    R"({"metadata":{}})"),
      422,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required","reason":"Invalid","details":{"kind":"ConfigMap","causes":[{"reason":"FieldValueRequired","message":"Required value: name or generateName is required","field":"metadata.name"}]},"code":422})");

  expect(
      client_->Get(
          "/api/v1/namespaces/default/configmaps?fieldSelector=spec.x%3Dy"),
      400,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"field label not supported: spec.x","reason":"BadRequest","code":400})");

  ASSERT_EQ(
      client_->Post("/api/v1/namespaces", R"({"metadata":{"name":"gone"}})")
          .status,
      201);
  ASSERT_EQ(client_->Delete("/api/v1/namespaces/gone").status, 200);
  expect(
      client_->Post("/api/v1/namespaces/gone/configmaps",
                    R"({"metadata":{"name":"a"}})"),
      403,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"a\" is forbidden: unable to create new content in namespace gone because it is being terminated","reason":"Forbidden","details":{"name":"a","kind":"configmaps","causes":[{"reason":"NamespaceTerminating","message":"namespace gone is being terminated","field":"metadata.namespace"}]},"code":403})");

  ASSERT_EQ(
      client_
          ->Post(
              "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
              R"({"metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"kind":"Widget","plural":"widgets"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}})")
          .status,
      201);
  const std::string widget =
      "/apis/example.com/v1/namespaces/default/widgets/w";
  ASSERT_EQ(
      client_
          ->Post(
              "/apis/example.com/v1/namespaces/default/widgets",
              R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}})")
          .status,
      201);
  expect(
      client_->Patch(widget, "{}", "application/strategic-merge-patch+json"),
      415,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml","reason":"UnsupportedMediaType","code":415})");

  ASSERT_EQ(client_
                ->Put("/fault-injection",
                      R"({"throttleFraction":1,"retryAfterSeconds":2})")
                .status,
            200);
  TestResponse throttled =
      client_->Get("/api/v1/namespaces/default/configmaps");
  expect(
      throttled, 429,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server has received too many requests and has asked us to try again later","reason":"TooManyRequests","details":{"retryAfterSeconds":2},"code":429})");
  EXPECT_EQ(throttled.Header("retry-after"), "2");
  ASSERT_EQ(
      client_->Put("/fault-injection", R"({"throttleFraction":0})").status,
      200);

  ApiServerOptions secured;
  secured.token = "t";
  StartServer(secured);
  expect(
      client_->Get("/api/v1/namespaces"), 401,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})");
}

// Every built-in resource of the issue is served: listed in discovery and
// answering a list of its kind.
TEST_F(ApiServerTest, BuiltinResourcesAreServed) {
  const std::vector<std::pair<std::string, std::string>> lists = {
      {"/api/v1/namespaces", "NamespaceList"},
      {"/api/v1/namespaces/default/pods", "PodList"},
      {"/api/v1/namespaces/default/configmaps", "ConfigMapList"},
      {"/api/v1/namespaces/default/secrets", "SecretList"},
      {"/api/v1/namespaces/default/services", "ServiceList"},
      {"/api/v1/namespaces/default/serviceaccounts", "ServiceAccountList"},
      {"/api/v1/namespaces/default/events", "EventList"},
      {"/apis/apps/v1/namespaces/default/deployments", "DeploymentList"},
      {"/apis/coordination.k8s.io/v1/namespaces/default/leases", "LeaseList"},
      {"/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
       "CustomResourceDefinitionList"},
  };
  for (const auto& [path, kind] : lists) {
    TestResponse r = client_->Get(path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.Str("/kind"), kind) << path;
  }
  const std::string core = client_->Get("/api/v1").body;
  for (const char* name :
       {"namespaces", "pods", "pods/status", "configmaps", "secrets",
        "services", "serviceaccounts", "events"}) {
    EXPECT_THAT(core, HasSubstr(std::string(R"("name":")") + name + "\""))
        << name;
  }
  const std::string apps = client_->Get("/apis/apps/v1").body;
  for (const char* name :
       {"deployments", "deployments/status", "deployments/scale"}) {
    EXPECT_THAT(apps, HasSubstr(std::string(R"("name":")") + name + "\""))
        << name;
  }
  EXPECT_THAT(client_->Get("/apis/coordination.k8s.io/v1").body,
              HasSubstr(R"("name":"leases")"));
  EXPECT_THAT(client_->Get("/apis/apiextensions.k8s.io/v1").body,
              HasSubstr(R"("name":"customresourcedefinitions/status")"));
  EXPECT_THAT(
      core,
      HasSubstr(
          R"({"name":"namespaces","singularName":"namespace","namespaced":false,)"));
  EXPECT_THAT(
      core,
      HasSubstr(R"({"name":"pods","singularName":"pod","namespaced":true,)"));
  // Verbs as kube-apiserver lists them.
  EXPECT_THAT(
      core,
      HasSubstr(
          R"("verbs":["create","delete","deletecollection","get","list","patch","update","watch"])"));
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
