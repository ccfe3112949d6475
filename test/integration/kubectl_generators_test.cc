// kubectl's typed generators against the local API server: `kubectl create
// deployment` and `kubectl create service ...` send protobuf bodies
// (apiserver/protobuf.h), `kubectl run` and `kubectl expose` JSON. Each
// test runs the command, then reads the stored object through the API.
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "test/apiserver/test_client.h"
#include "test/integration/kubectl_apiserver_fixture.h"
#include "test/integration/kubectl_harness.h"

namespace kcr::integration {
namespace {

using ::testing::HasSubstr;

std::string ToJson(const rapidjson::Value* v) {
  if (v == nullptr) return "<absent>";
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v->Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

class KubectlGeneratorsTest : public KubectlApiServerFixture {
 protected:
  void SetUp() override {
    // The built-in controllers and the simulated node run, as by default.
    ASSERT_NO_FATAL_FAILURE(KubectlApiServerFixture::SetUp());
    client_ =
        std::make_unique<apiserver::TestClient>("127.0.0.1", server_->port());
  }

  void Kubectl(const std::vector<std::string>& args) {
    KubectlResult r = kubectl_->Run(args);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  }

  // The stored object at `path`, read through the API.
  rapidjson::Document Get(const std::string& path) {
    apiserver::TestResponse r = client_->Get(path);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return r.Json();
  }

  // A value of the stored object as compact JSON ("<absent>" when missing).
  static std::string At(const rapidjson::Document& d, const char* pointer) {
    return ToJson(rapidjson::Pointer(pointer).Get(d));
  }

  // Whether the value at `pointer` equals the JSON `want` (object members
  // in any order).
  static ::testing::AssertionResult Is(const rapidjson::Document& d,
                                       const char* pointer,
                                       const std::string& want) {
    rapidjson::Document w;
    w.Parse(want.c_str());
    const rapidjson::Value* got = rapidjson::Pointer(pointer).Get(d);
    if (w.HasParseError() ? got == nullptr && want == "<absent>"
                          : got != nullptr && *got == w) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << pointer << " is " << ToJson(got) << ", want " << want;
  }

  // Polls `path` until `pointer` holds `want` (JSON) or 20 s pass.
  bool WaitFor(const std::string& path, const char* pointer,
               const std::string& want) {
    absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (absl::Now() < deadline) {
      if (At(Get(path), pointer) == want) return true;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return false;
  }

  std::unique_ptr<apiserver::TestClient> client_;
};

constexpr char kDeployments[] = "/apis/apps/v1/namespaces/";

TEST_F(KubectlGeneratorsTest, CreateDeployment) {
  Kubectl({"create", "deployment", "web", "--image=nginx:1.7.9", "--replicas=2",
           "--port=80"});
  rapidjson::Document d =
      Get("/apis/apps/v1/namespaces/default/deployments/web");
  EXPECT_TRUE(Is(d, "/metadata/labels", R"({"app":"web"})"));
  EXPECT_TRUE(Is(d, "/spec/replicas", "2"));
  EXPECT_TRUE(Is(d, "/spec/selector", R"({"matchLabels":{"app":"web"}})"));
  EXPECT_TRUE(Is(d, "/spec/template/metadata/labels", R"({"app":"web"})"));
  EXPECT_TRUE(Is(d, "/spec/template/spec/containers/0/name", R"("nginx")"));
  EXPECT_TRUE(
      Is(d, "/spec/template/spec/containers/0/image", R"("nginx:1.7.9")"));
  // kube-apiserver defaults the protocol.
  EXPECT_TRUE(Is(d, "/spec/template/spec/containers/0/ports",
                 R"([{"containerPort":80,"protocol":"TCP"}])"));
  EXPECT_TRUE(
      Is(d, "/metadata/managedFields/0/manager", R"("kubectl-create")"));

  // The same command sent as JSON stores the same object, and both become
  // ready on the simulated node.
  Kubectl({"create", "namespace", "json"});
  KubectlResult dry = kubectl_->Run(
      {"create", "deployment", "web", "--image=nginx:1.7.9", "--replicas=2",
       "--port=80", "--dry-run=client", "-o", "json"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  KubectlResult created =
      kubectl_->Run({"create", "-n", "json", "-f", "-"}, dry.out);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  rapidjson::Document j = Get("/apis/apps/v1/namespaces/json/deployments/web");
  EXPECT_TRUE(Is(d, "/spec", At(j, "/spec")));
  EXPECT_TRUE(Is(d, "/metadata/labels", At(j, "/metadata/labels")));

  for (const char* ns : {"default", "json"}) {
    std::string path = std::string(kDeployments) + ns + "/deployments/web";
    EXPECT_TRUE(WaitFor(path, "/status/availableReplicas", "2"))
        << client_->Get(path).body;
    KubectlResult rollout = kubectl_->Run(
        {"rollout", "status", "-n", ns, "deployment/web", "--timeout=20s"});
    EXPECT_EQ(rollout.exit_code, 0) << rollout.err;
    EXPECT_THAT(rollout.out, HasSubstr("successfully rolled out"));
  }
}

TEST_F(KubectlGeneratorsTest, Run) {
  Kubectl({"run", "nginx", "--image=nginx", "--labels=app=x", "--env=A=B",
           "--port=8080", "--restart=Never", "--", "cmd", "args"});
  std::string path = "/api/v1/namespaces/default/pods/nginx";
  rapidjson::Document p = Get(path);
  EXPECT_TRUE(Is(p, "/metadata/labels", R"({"app":"x"})"));
  EXPECT_TRUE(Is(p, "/spec/restartPolicy", R"("Never")"));
  EXPECT_TRUE(Is(p, "/spec/containers/0/name", R"("nginx")"));
  EXPECT_TRUE(Is(p, "/spec/containers/0/image", R"("nginx")"));
  EXPECT_TRUE(Is(p, "/spec/containers/0/args", R"(["cmd","args"])"));
  EXPECT_TRUE(Is(p, "/spec/containers/0/env", R"([{"name":"A","value":"B"}])"));
  EXPECT_TRUE(Is(p, "/spec/containers/0/ports",
                 R"([{"containerPort":8080,"protocol":"TCP"}])"));
  // The simulated node runs it, then (restartPolicy Never) completes it.
  EXPECT_TRUE(WaitFor(path, "/status/phase", R"("Succeeded")"))
      << client_->Get(path).body;

  Kubectl({"run", "shell", "--image=busybox", "--overrides",
           R"({"spec":{"nodeSelector":{"disk":"ssd"},
               "terminationGracePeriodSeconds":5}})",
           "--command", "--", "sh", "-c", "sleep 1"});
  rapidjson::Document s = Get("/api/v1/namespaces/default/pods/shell");
  EXPECT_TRUE(Is(s, "/spec/nodeSelector", R"({"disk":"ssd"})"));
  EXPECT_TRUE(Is(s, "/spec/terminationGracePeriodSeconds", "5"));
  EXPECT_TRUE(Is(s, "/spec/containers/0/command", R"(["sh","-c","sleep 1"])"));
}

TEST_F(KubectlGeneratorsTest, CreateService) {
  Kubectl({"create", "service", "clusterip", "my-svc", "--tcp=80:8080"});
  Kubectl({"create", "service", "nodeport", "np", "--tcp=80:8080",
           "--node-port=30080"});
  Kubectl({"create", "service", "loadbalancer", "lb", "--tcp=443:https"});
  Kubectl({"create", "service", "externalname", "en",
           "--external-name=example.com"});
  Kubectl({"create", "service", "clusterip", "headless", "--clusterip=None"});

  const std::string services = "/api/v1/namespaces/default/services/";
  rapidjson::Document c = Get(services + "my-svc");
  EXPECT_TRUE(Is(c, "/spec/type", R"("ClusterIP")"));
  EXPECT_TRUE(Is(c, "/spec/selector", R"({"app":"my-svc"})"));
  EXPECT_TRUE(Is(c, "/metadata/labels", R"({"app":"my-svc"})"));
  EXPECT_TRUE(Is(
      c, "/spec/ports",
      R"([{"name":"80-8080","protocol":"TCP","port":80,"targetPort":8080}])"));

  rapidjson::Document n = Get(services + "np");
  EXPECT_TRUE(Is(n, "/spec/type", R"("NodePort")"));
  EXPECT_TRUE(Is(
      n, "/spec/ports",
      R"([{"name":"80-8080","protocol":"TCP","port":80,"targetPort":8080,"nodePort":30080}])"));

  rapidjson::Document l = Get(services + "lb");
  EXPECT_TRUE(Is(l, "/spec/type", R"("LoadBalancer")"));
  EXPECT_TRUE(Is(l, "/spec/ports/0/targetPort", R"("https")"));
  EXPECT_TRUE(Is(l, "/spec/ports/0/port", "443"));

  rapidjson::Document e = Get(services + "en");
  EXPECT_TRUE(Is(e, "/spec/type", R"("ExternalName")"));
  EXPECT_TRUE(Is(e, "/spec/externalName", R"("example.com")"));
  EXPECT_TRUE(Is(e, "/spec/ports", "<absent>"));

  rapidjson::Document h = Get(services + "headless");
  EXPECT_TRUE(Is(h, "/spec/clusterIP", R"("None")"));

  KubectlResult get = kubectl_->Run({"get", "services", "-o", "name"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  // default/kubernetes is there as on every cluster.
  EXPECT_EQ(get.out,
            "service/en\nservice/headless\nservice/kubernetes\nservice/lb\n"
            "service/my-svc\nservice/np\n");
}

TEST_F(KubectlGeneratorsTest, ExposeDeployment) {
  Kubectl({"create", "deployment", "web", "--image=nginx", "--port=8080"});
  Kubectl({"expose", "deployment", "web", "--port=80", "--target-port=8080"});
  rapidjson::Document s = Get("/api/v1/namespaces/default/services/web");
  EXPECT_TRUE(Is(s, "/spec/selector", R"({"app":"web"})"));
  EXPECT_TRUE(Is(s, "/spec/type", R"("ClusterIP")"));
  EXPECT_TRUE(Is(s, "/spec/ports",
                 R"([{"protocol":"TCP","port":80,"targetPort":8080}])"));
}

// What a client sees when its protobuf carries a field the server's decoder
// does not know (415, naming it) or is malformed (400).
TEST_F(KubectlGeneratorsTest, UnknownProtobufFieldIs415AndMalformedIs400) {
  // A Deployment whose DeploymentSpec carries field 99.
  const std::string type_meta = std::string("\x0a\x07", 2) + "apps/v1" +
                                std::string("\x12\x0a", 2) + "Deployment";
  const std::string object = std::string("\x0a\x05\x0a\x03", 4) + "web" +
                             std::string("\x12\x03\x98\x06\x01", 5);
  const std::string body =
      std::string("k8s\0", 4) + "\x0a" +
      std::string(1, static_cast<char>(type_meta.size())) + type_meta + "\x12" +
      std::string(1, static_cast<char>(object.size())) + object;
  apiserver::TestResponse r =
      client_->Do("POST", "/apis/apps/v1/namespaces/default/deployments", body,
                  "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(r.status, 415) << r.body;
  EXPECT_EQ(r.Str("/reason"), "UnsupportedMediaType");
  EXPECT_THAT(r.Str("/message"),
              HasSubstr("protobuf field 99 of apps/v1 DeploymentSpec"));
  EXPECT_EQ(
      client_->Get("/apis/apps/v1/namespaces/default/deployments/web").status,
      404);

  r = client_->Do("POST", "/apis/apps/v1/namespaces/default/deployments",
                  body.substr(0, body.size() - 2),
                  "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.Str("/reason"), "BadRequest");
}

}  // namespace
}  // namespace kcr::integration
