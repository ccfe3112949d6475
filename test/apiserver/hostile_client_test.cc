// Requests a hostile or careless client might send, over real HTTP to a
// running local API server: each must be answered with a metav1 Status
// carrying kube-apiserver's code and reason, and the server must stay up
// (/healthz answers "ok" after every one).
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/api_server.h"
#include "test/apiserver/test_client.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;

constexpr char kCrds[] =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
constexpr char kLoadTests[] =
    "/apis/example.org/v1/namespaces/default/loadtests";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

class HostileClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ApiServerOptions options;
    options.controllers.garbage_collector = false;
    options.controllers.namespace_controller = false;
    options.controllers.node_simulator = false;
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
  }

  // The project's own LoadTest CRD, as `kubectl apply -f` sends it.
  void ApplyLoadTestCrd() {
    std::string yaml = ReadFile("manifests/crds/loadtest.yaml");
    ASSERT_FALSE(yaml.empty());
    TestResponse r = client_->Do("POST", kCrds, yaml, "application/yaml");
    ASSERT_EQ(r.status, 201) << r.body;
  }

  // The server still answers its health check.
  void ExpectHealthy() {
    TestResponse r = client_->Get("/healthz");
    EXPECT_EQ(r.status, 200) << r.error;
    EXPECT_EQ(r.body, "ok");
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
};

// A 3,000-character servicePort once ran std::regex's backtracking matcher
// over the CRD's pattern, one stack frame per character, and overflowed the
// connection thread's 1 MiB stack: the process died with SIGSEGV. A string
// the pattern accepts except for its last character makes a backtracking
// matcher work hardest.
TEST_F(HostileClientTest, LongStringAgainstCrdPatternIsInvalidNotACrash) {
  ApplyLoadTestCrd();
  for (size_t length : {size_t{3000}, size_t{100000}}) {
    std::string port(length, 'a');
    port.back() = '-';
    TestResponse r = client_->Post(
        kLoadTests,
        R"({"apiVersion":"example.org/v1","kind":"LoadTest",)"
        R"("metadata":{"name":"long-port"},)"
        R"("spec":{"replicas":1,"test":{"serviceName":"svc","servicePort":")" +
            port + R"("}}})");
    EXPECT_EQ(r.status, 422) << length << r.error;
    EXPECT_EQ(r.Str("/kind"), "Status");
    EXPECT_EQ(r.Str("/reason"), "Invalid");
    EXPECT_EQ(r.Int("/code"), 422);
    const std::string message = r.Str("/message");
    EXPECT_THAT(message, HasSubstr("spec.test.servicePort in body should be "
                                   "at most 15 chars long"));
    EXPECT_THAT(message, HasSubstr("spec.test.servicePort in body should "
                                   "match '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$'"));
    ExpectHealthy();
  }
}

// A CRD whose pattern Go's regexp (and RE2) refuses is itself invalid, with
// the keyword at fault named as kube-apiserver names it.
TEST_F(HostileClientTest, CrdWithInvalidPatternIsInvalid) {
  TestResponse r = client_->Post(
      kCrds,
      R"({"apiVersion":"apiextensions.k8s.io/v1",)"
      R"("kind":"CustomResourceDefinition",)"
      R"("metadata":{"name":"widgets.example.com"},)"
      R"("spec":{"group":"example.com","scope":"Namespaced",)"
      R"("names":{"kind":"Widget","plural":"widgets"},)"
      R"("versions":[{"name":"v1","served":true,"storage":true,)"
      R"("schema":{"openAPIV3Schema":{"type":"object","properties":{)"
      R"("spec":{"type":"object","properties":{)"
      R"("name":{"type":"string","pattern":"^(a+$"}}}}}}}]}})");
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(r.Str("/kind"), "Status");
  EXPECT_EQ(r.Str("/reason"), "Invalid");
  EXPECT_EQ(r.Str("/details/causes/0/reason"), "FieldValueInvalid");
  EXPECT_EQ(r.Str("/details/causes/0/field"),
            "spec.versions[0].schema.openAPIV3Schema.properties[spec]."
            "properties[name].pattern");
  EXPECT_THAT(r.Str("/message"),
              HasSubstr("Invalid value: \"^(a+$\": must be a valid regular "
                        "expression, but isn't: error parsing regexp: "
                        "missing closing ): `^(a+$`"));
  EXPECT_EQ(client_->Get("/apis/example.com/v1/namespaces/default/widgets")
                .status,
            404);
  ExpectHealthy();
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
