// Fuzzes the local API server's request-body path, in process and without
// HTTP: the handler decodes the body (JSON, YAML, protobuf), validates
// custom resources against the project's LoadTest CRD schema (patterns
// included), runs every patch algorithm and records managed fields; a
// second mode compiles a fuzzed CRD schema (patterns included) and admits
// a fuzzed object with it. Each input runs on a thread
// with the server's connection stack. One server, built once, holds a
// LoadTest, a ConfigMap and a Deployment named "x"; every request is a dry
// run (dryRun=All), which decodes, validates, patches and records managed
// fields exactly as a write does but stores nothing, so inputs stay
// independent of each other.
//
// Input: the first byte picks the request (kRequests, or the schema mode),
// the rest is the body; in the schema mode, a schema and an object split at
// the first newline. Nothing may crash, every answer must be JSON, every
// failure a Status carrying the answer's code, and no request may make the
// server fail with 500.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "api/json/json_util.h"
#include "api/schema/structural_schema.h"
#include "apiserver/endpoints/faults.h"
#include "apiserver/endpoints/handler.h"
#include "apiserver/endpoints/patch_handlers.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "rapidjson/document.h"
#include "test/fuzz/server_stack.h"

namespace kcr {
namespace apiserver {
namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "request_body_fuzz_test: %s\n", what);
    std::abort();
  }
}

// Answers captured in place of a connection.
class CapturedExchange : public HttpExchange {
 public:
  void Respond(HttpResponse response) override {
    response_ = std::move(response);
    answered_ = true;
  }
  bool StartStream(
      int status, const std::string&,
      const std::vector<std::pair<std::string, std::string>>&) override {
    response_.status = status;
    answered_ = true;
    return true;
  }
  bool WriteChunk(std::string_view data) override {
    response_.body.append(data);
    return true;
  }
  void EndStream() override {}
  bool Cancelled() override { return true; }

  bool answered() const { return answered_; }
  const HttpResponse& response() const { return response_; }

 private:
  HttpResponse response_;
  bool answered_ = false;
};

struct Request {
  const char* method;
  const char* target;
  const char* content_type;
};

constexpr char kLoadTest[] =
    "/apis/example.org/v1/namespaces/default/loadtests";
constexpr char kConfigMaps[] = "/api/v1/namespaces/default/configmaps";
constexpr char kDeployments[] = "/apis/apps/v1/namespaces/default/deployments";

constexpr Request kRequests[] = {
    {"POST", "/apis/example.org/v1/namespaces/default/loadtests?dryRun=All",
     "application/json"},
    {"PUT", "/apis/example.org/v1/namespaces/default/loadtests/x?dryRun=All",
     "application/json"},
    {"PATCH", "/apis/example.org/v1/namespaces/default/loadtests/x?dryRun=All",
     "application/merge-patch+json"},
    {"PATCH", "/apis/example.org/v1/namespaces/default/loadtests/x?dryRun=All",
     "application/json-patch+json"},
    {"PATCH",
     "/apis/example.org/v1/namespaces/default/loadtests/x?dryRun=All"
     "&fieldManager=fuzz&force=true",
     "application/apply-patch+yaml"},
    {"PUT",
     "/apis/example.org/v1/namespaces/default/loadtests/x/status?dryRun=All",
     "application/json"},
    {"POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
     "application/yaml"},
    {"DELETE", "/api/v1/namespaces/default/configmaps/x?dryRun=All",
     "application/json"},
    {"PATCH", "/apis/apps/v1/namespaces/default/deployments/x?dryRun=All",
     "application/strategic-merge-patch+json"},
    {"PATCH",
     "/apis/apps/v1/namespaces/default/deployments/x?dryRun=All"
     "&fieldManager=fuzz",
     "application/apply-patch+yaml"},
    {"POST", "/apis/apps/v1/namespaces/default/deployments?dryRun=All",
     "application/vnd.kubernetes.protobuf"},
    {"POST",
     "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All",
     "application/json"},
};
constexpr size_t kModes = sizeof(kRequests) / sizeof(kRequests[0]) + 1;

std::string ReadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// The project's LoadTest CRD; the fuzzer and its replay test both run from
// the workspace root.
const std::string& LoadTestCrd() {
  static const std::string* crd = [] {
    auto* text = new std::string(ReadFile("manifests/crds/loadtest.yaml"));
    Check(!text->empty(), "cannot read manifests/crds/loadtest.yaml");
    return text;
  }();
  return *crd;
}

// The server with the LoadTest CRD and one object of each kind the
// requests touch.
class Server {
 public:
  Server() {
    RegistryOptions options;
    options.patch_handlers = DefaultPatchHandlers(options.clock);
    registry_ = std::make_unique<Registry>(&storage_, &resources_, options);
    Check(registry_->Bootstrap().ok(), "bootstrap");
    HandlerOptions handler;
    handler.faults = &faults_;
    handler_ = std::make_unique<ApiHandler>(registry_.get(), handler);
    Setup("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
          LoadTestCrd(), "application/yaml");
    Setup("POST", kLoadTest,
          R"({"apiVersion":"example.org/v1","kind":"LoadTest",)"
          R"("metadata":{"name":"x"},"spec":{"replicas":2,"test":)"
          R"({"serviceName":"svc","servicePort":"http","path":"/a"}}})",
          "application/json");
    Setup("POST", kConfigMaps,
          R"({"metadata":{"name":"x","labels":{"a":"b"}},"data":{"k":"v"}})",
          "application/json");
    Setup("POST", kDeployments,
          R"({"metadata":{"name":"x"},"spec":{"replicas":1,"selector":)"
          R"({"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":)"
          R"({"a":"b"}},"spec":{"containers":[{"name":"c","image":"i",)"
          R"("ports":[{"containerPort":80}],"env":[{"name":"E",)"
          R"("value":"v"}]}]}}}})",
          "application/json");
  }

  // Sends one request and checks the answer.
  void Send(const Request& r, std::string body) {
    CapturedExchange exchange;
    handler_->Handle(
        MakeRequest(r.method, r.target, std::move(body), r.content_type),
        &exchange);
    Check(exchange.answered(), "no answer");
    const HttpResponse& response = exchange.response();
    Check(response.status != 500, "500 for a client's request");
    rapidjson::Document doc;
    Check(
        kcr::json::ParseJson(response.body, &doc, api::kMaxJsonDepth + 2).ok(),
        "answer is not JSON");
    if (response.status >= 400) {
      Check(doc.IsObject() && doc.HasMember("kind") && doc["kind"].IsString() &&
                absl::string_view(doc["kind"].GetString()) == "Status",
            "failure is not a Status");
      Check(doc.HasMember("code") && doc["code"].IsInt() &&
                doc["code"].GetInt() == response.status,
            "Status code differs from the answer's");
    }
  }

 private:
  static HttpRequest MakeRequest(const char* method, absl::string_view target,
                                 std::string body, const char* type) {
    HttpRequest r;
    r.method = method;
    r.target = std::string(target);
    const size_t q = target.find('?');
    r.path = std::string(target.substr(0, q));
    if (q != absl::string_view::npos) {
      absl::string_view query = target.substr(q + 1);
      while (!query.empty()) {
        const size_t amp = query.find('&');
        absl::string_view part = query.substr(0, amp);
        const size_t eq = part.find('=');
        r.query.emplace(std::string(part.substr(0, eq)),
                        eq == absl::string_view::npos
                            ? ""
                            : std::string(part.substr(eq + 1)));
        query = amp == absl::string_view::npos ? "" : query.substr(amp + 1);
      }
    }
    r.headers["content-type"] = type;
    r.headers["user-agent"] = "fuzz/1.0";
    r.body = std::move(body);
    return r;
  }

  void Setup(const char* method, const char* target, const std::string& body,
             const char* type) {
    CapturedExchange exchange;
    handler_->Handle(MakeRequest(method, target, body, type), &exchange);
    Check(exchange.response().status == 201, "setup request failed");
  }

  Storage storage_;
  ResourceRegistry resources_;
  FaultInjector faults_;
  std::unique_ptr<Registry> registry_;
  std::unique_ptr<ApiHandler> handler_;
};

// A fuzzed CRD schema, compiled; a fuzzed object admitted with it.
void AdmitWithSchema(absl::string_view input) {
  const std::string_view text(input.data(), input.size());
  const size_t newline = input.find('\n');
  rapidjson::Document schema, object;
  if (!kcr::json::ParseJson(text.substr(0, newline), &schema).ok()) return;
  absl::StatusOr<std::unique_ptr<api::StructuralSchema>> compiled =
      api::StructuralSchema::Create(schema);
  if (!compiled.ok() || newline == absl::string_view::npos) return;
  if (!kcr::json::ParseJson(text.substr(newline + 1), &object).ok()) return;
  (void)(*compiled)->Validate(object);
  (void)(*compiled)->Admit(&object, object.GetAllocator());
  Check(kcr::json::JsonToString(object).ok(), "admitted object does not print");
}

int FuzzOne(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t mode = data[0] % kModes;
  absl::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (mode == kModes - 1) {
    AdmitWithSchema(body);
    return 0;
  }
  // Built on first use, then shared: every request is a dry run.
  static Server* const server = new Server();
  server->Send(kRequests[mode], std::string(body));
  return 0;
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr

// On a thread with the local API server's connection stack, so that
// recursion the server could not afford fails here too.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kcr::fuzz::RunOnServerStack(
      [data, size] { kcr::apiserver::FuzzOne(data, size); });
  return 0;
}
