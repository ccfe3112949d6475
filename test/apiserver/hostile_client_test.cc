// Requests a hostile or careless client might send, over real HTTP to a
// running local API server: bodies nested 100,000 deep, bodies past the
// size limit, truncated bodies and requests, bytes that are not UTF-8,
// wrong content types, absurd query values. Each must be answered with a
// metav1 Status carrying kube-apiserver's code and reason (or served, where
// kube-apiserver serves it), and the server must stay up: /healthz answers
// "ok" after every one.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/json_limits.h"
#include "apiserver/api_server.h"
#include "apiserver/endpoints/request_limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/test_client.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kCrds[] =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
constexpr char kLoadTests[] =
    "/apis/example.org/v1/namespaces/default/loadtests";
constexpr char kCms[] = "/api/v1/namespaces/default/configmaps";
constexpr char kWidgets[] = "/apis/example.com/v1/namespaces/default/widgets";

// A custom resource that keeps whatever it is sent, to carry deep values.
constexpr char kWidgetCrd[] = R"({
  "apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
  "metadata":{"name":"widgets.example.com"},
  "spec":{"group":"example.com","scope":"Namespaced",
    "names":{"kind":"Widget","plural":"widgets"},
    "versions":[{"name":"v1","served":true,"storage":true,
      "schema":{"openAPIV3Schema":{"type":"object",
        "x-kubernetes-preserve-unknown-fields":true}}}]}})";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

std::string DeepArrays(int levels) {
  return std::string(levels, '[') + std::string(levels, ']');
}

std::string DeepObjects(int levels, const std::string& leaf = "1") {
  std::string s;
  for (int i = 0; i < levels; ++i) s += R"({"a":)";
  s += leaf;
  s += std::string(levels, '}');
  return s;
}

std::string ConfigMap(const std::string& name, const std::string& data) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"ConfigMap",)",
                      R"("metadata":{"name":")", name, R"("},"data":)", data,
                      "}");
}

// What came back on a raw connection.
struct RawResponse {
  int status = 0;  // 0: no status line
  std::string body;
};

// Sends `bytes` on a new connection to 127.0.0.1:`port`, half-closes it
// (the client has nothing more to say), and reads the answer until the
// server closes. For requests TestClient cannot send: cut short, malformed,
// or with headers that lie.
RawResponse RawExchange(int port, const std::string& bytes) {
  RawResponse out;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return out;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return out;
  }
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n =
        send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  std::string answer;
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  char buf[16 << 10];
  while (absl::Now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  // "HTTP/1.1 400 Bad Request\r\n...\r\n\r\n<body>"
  if (answer.compare(0, 9, "HTTP/1.1 ") != 0 || answer.size() < 12) {
    return out;
  }
  if (!absl::SimpleAtoi(answer.substr(9, 3), &out.status)) out.status = 0;
  size_t body = answer.find("\r\n\r\n");
  if (body != std::string::npos) out.body = answer.substr(body + 4);
  return out;
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

  // `body` (answered with HTTP `status`) is a failed metav1 Status with
  // `code` and `reason`, and the server is still healthy. Returns the
  // Status's message.
  std::string ExpectStatus(const std::string& what, int status,
                           const std::string& body, int code,
                           const std::string& reason) {
    SCOPED_TRACE(what);
    EXPECT_EQ(status, code) << body.substr(0, 300);
    rapidjson::Document d;
    d.Parse(body.data(), body.size());
    std::string message;
    if (d.HasParseError() || !d.IsObject()) {
      ADD_FAILURE() << "not a JSON object: " << body.substr(0, 300);
    } else {
      auto str = [&d](const char* key) -> std::string {
        auto it = d.FindMember(key);
        return it != d.MemberEnd() && it->value.IsString()
                   ? it->value.GetString()
                   : "";
      };
      EXPECT_EQ(str("kind"), "Status");
      EXPECT_EQ(str("apiVersion"), "v1");
      EXPECT_EQ(str("status"), "Failure");
      EXPECT_EQ(str("reason"), reason);
      auto c = d.FindMember("code");
      EXPECT_TRUE(c != d.MemberEnd() && c->value.IsInt() &&
                  c->value.GetInt() == code);
      message = str("message");
      EXPECT_FALSE(message.empty());
    }
    ExpectHealthy();
    return message;
  }
  std::string ExpectStatus(const std::string& what, const TestResponse& r,
                           int code, const std::string& reason) {
    EXPECT_EQ(r.Header("content-type"), "application/json") << what;
    return ExpectStatus(what, r.status, r.body, code, reason);
  }
  std::string ExpectStatus(const std::string& what, const RawResponse& r,
                           int code, const std::string& reason) {
    return ExpectStatus(what, r.status, r.body, code, reason);
  }

  void CreateWidgetCrd() {
    TestResponse r = client_->Post(kCrds, kWidgetCrd);
    ASSERT_EQ(r.status, 201) << r.body;
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
      kCrds, R"({"apiVersion":"apiextensions.k8s.io/v1",)"
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
  EXPECT_EQ(
      client_->Get("/apis/example.com/v1/namespaces/default/widgets").status,
      404);
  ExpectHealthy();
}

// JSON nested 100,000 deep, in every place a body is read: refused with 400
// BadRequest before anything recursive runs.
TEST_F(HostileClientTest, DeepBodiesAreBadRequests) {
  ApplyLoadTestCrd();
  ASSERT_EQ(client_->Post(kCms, ConfigMap("cm", "{}")).status, 201);
  const int kDeep = 100000;
  const std::string too_deep =
      absl::StrCat("nests deeper than ", api::kMaxJsonDepth, " levels");
  const std::string cm = std::string(kCms) + "/cm";
  struct Case {
    std::string what, method, target, body, content_type;
  } cases[] = {
      {"create: arrays", "POST", kCms, DeepArrays(kDeep), "application/json"},
      {"create: objects in data", "POST", kCms,
       ConfigMap("deep", DeepObjects(kDeep)), "application/json"},
      {"create: YAML flow", "POST", kCms, DeepArrays(kDeep),
       "application/yaml"},
      {"create: custom resource", "POST", kLoadTests,
       absl::StrCat(R"({"apiVersion":"example.org/v1","kind":"LoadTest",)",
                    R"("metadata":{"name":"deep"},"spec":)", DeepObjects(kDeep),
                    "}"),
       "application/json"},
      {"create: CRD schema", "POST", kCrds,
       absl::StrCat(R"({"metadata":{"name":"deeps.example.com"},"spec":)",
                    DeepObjects(kDeep), "}"),
       "application/json"},
      {"update", "PUT", cm, ConfigMap("cm", DeepObjects(kDeep)),
       "application/json"},
      {"merge patch", "PATCH", cm, DeepObjects(kDeep),
       "application/merge-patch+json"},
      {"strategic merge patch", "PATCH", cm, DeepObjects(kDeep),
       "application/strategic-merge-patch+json"},
      {"JSON patch", "PATCH", cm,
       absl::StrCat(R"([{"op":"add","path":"/data/x","value":)",
                    DeepArrays(kDeep), "}]"),
       "application/json-patch+json"},
      {"apply, JSON", "PATCH", cm + "?fieldManager=m",
       ConfigMap("cm", DeepObjects(kDeep)), "application/apply-patch+yaml"},
      {"apply, YAML", "PATCH", cm + "?fieldManager=m",
       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: " +
           DeepArrays(kDeep) + "\n",
       "application/apply-patch+yaml"},
      {"delete options", "DELETE", cm, DeepObjects(kDeep), "application/json"},
  };
  for (const Case& c : cases) {
    TestResponse r = client_->Do(c.method, c.target, c.body, c.content_type);
    std::string message = ExpectStatus(c.what, r, 400, "BadRequest");
    EXPECT_THAT(message, HasSubstr("nests deeper than")) << c.what;
    if (c.content_type != "application/yaml" &&
        c.content_type != "application/apply-patch+yaml") {
      EXPECT_THAT(message, HasSubstr(too_deep)) << c.what;
    }
  }
  // Nothing was written.
  EXPECT_EQ(client_->Get(std::string(kCms) + "/deep").status, 404);
}

// At the limit, bodies are served: a custom resource as deep as its
// managedFields allow (they record its fields five levels further down, so
// 251 levels) is created, patched three ways and read back. One level more
// is refused, as is a body past the limit itself.
TEST_F(HostileClientTest, BodiesAtTheDepthLimitAreServed) {
  CreateWidgetCrd();
  // The Widget's root is level 1 and spec level 2: spec's value nests
  // `depth - 1` levels.
  auto widget = [](const std::string& name, int depth) {
    return absl::StrCat(R"({"apiVersion":"example.com/v1","kind":"Widget",)",
                        R"("metadata":{"name":")", name, R"("},"spec":)",
                        DeepObjects(depth - 1), "}");
  };
  // With a field manager, so that managedFields are recorded.
  const std::string widgets = std::string(kWidgets) + "?fieldManager=deep";
  const int kDeepest = api::kMaxJsonDepth - 5;
  TestResponse created = client_->Post(widgets, widget("w", kDeepest));
  ASSERT_EQ(created.status, 201) << created.body.substr(0, 300);
  const std::string w = std::string(kWidgets) + "/w";
  TestResponse merged = client_->Patch(
      w, absl::StrCat(R"({"spec":)", DeepObjects(kDeepest - 1, "2"), "}"),
      "application/merge-patch+json");
  EXPECT_EQ(merged.status, 200) << merged.body.substr(0, 300);
  std::string pointer = "/spec";
  for (int i = 0; i < kDeepest - 1; ++i) pointer += "/a";
  TestResponse json_patched = client_->Patch(
      w,
      absl::StrCat(R"([{"op":"replace","path":")", pointer, R"(","value":3}])"),
      "application/json-patch+json");
  EXPECT_EQ(json_patched.status, 200) << json_patched.body.substr(0, 300);
  TestResponse applied =
      client_->Do("PATCH", w + "?fieldManager=deep&force=true",
                  widget("w", kDeepest), "application/apply-patch+yaml");
  EXPECT_EQ(applied.status, 200) << applied.body.substr(0, 300);
  TestResponse read = client_->Get(w);
  EXPECT_EQ(read.status, 200);
  EXPECT_THAT(read.body, HasSubstr(DeepObjects(kDeepest - 1, "1")));
  ExpectHealthy();

  const std::string past = ExpectStatus(
      "one level past the limit",
      client_->Post(widgets, widget("past", api::kMaxJsonDepth + 1)), 400,
      "BadRequest");
  EXPECT_THAT(past, HasSubstr(absl::StrCat("JSON nests deeper than ",
                                           api::kMaxJsonDepth, " levels")));
  const std::string fields =
      ExpectStatus("managedFields past the limit",
                   client_->Post(widgets, widget("fields", kDeepest + 1)), 400,
                   "BadRequest");
  EXPECT_THAT(fields, HasSubstr("nests deeper than"));
}

// kube-apiserver's limit and message: 3 MiB, "Request entity too large:
// limit is 3145728", refused before the body is read whole.
TEST_F(HostileClientTest, BodiesPastTheSizeLimitAre413) {
  const std::string kMessage = "Request entity too large: limit is 3145728";
  ASSERT_EQ(kMaxRequestBodyBytes, 3145728u);
  // A ConfigMap body of exactly the limit is served: its data stays under
  // the 1 MiB a ConfigMap may hold, JSON whitespace makes up the rest.
  std::string at_limit = ConfigMap(
      "big", absl::StrCat(R"({"v":")", std::string(1 << 19, 'x'), R"("})"));
  at_limit.insert(at_limit.size() - 1, kMaxRequestBodyBytes - at_limit.size(),
                  ' ');
  ASSERT_EQ(at_limit.size(), kMaxRequestBodyBytes);
  TestResponse served = client_->Post(kCms, at_limit);
  EXPECT_EQ(served.status, 201) << served.body.substr(0, 300);

  // One byte more is not, nor ten megabytes.
  for (size_t size : {kMaxRequestBodyBytes + 1, size_t{10} << 20}) {
    std::string body(size, ' ');
    TestResponse r = client_->Post(kCms, body);
    EXPECT_EQ(ExpectStatus(absl::StrCat(size, " bytes"), r, 413,
                           "RequestEntityTooLarge"),
              kMessage);
    EXPECT_EQ(r.Header("connection"), "close");
  }
  // A Content-Length of 10 GiB is refused on its headers alone.
  EXPECT_EQ(
      ExpectStatus("10 GiB announced",
                   RawExchange(server_->port(),
                               absl::StrCat("POST ", kCms,
                                            " HTTP/1.1\r\nHost: x\r\n"
                                            "Content-Type: "
                                            "application/json\r\n"
                                            "Content-Length: ",
                                            size_t{10} << 30, "\r\n\r\n{}")),
                   413, "RequestEntityTooLarge"),
      kMessage);
  // A chunked body is counted as it arrives.
  std::string chunked =
      absl::StrCat("POST ", kCms,
                   " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n");
  const std::string chunk(1 << 20, ' ');
  for (int i = 0; i < 4; ++i) {
    absl::StrAppend(&chunked, "100000\r\n", chunk, "\r\n");
  }
  chunked += "0\r\n\r\n";
  EXPECT_EQ(ExpectStatus("chunked", RawExchange(server_->port(), chunked), 413,
                         "RequestEntityTooLarge"),
            kMessage);
  EXPECT_EQ(client_->Get(std::string(kCms) + "/big").status, 200);
}

TEST_F(HostileClientTest, TruncatedBodiesAndRequestsAreBadRequests) {
  const std::string body = ConfigMap("cut", R"({"k":"v"})");
  for (size_t cut : {size_t{1}, body.size() / 2, body.size() - 1}) {
    std::string message = ExpectStatus(absl::StrCat("JSON cut at ", cut),
                                       client_->Post(kCms, body.substr(0, cut)),
                                       400, "BadRequest");
    EXPECT_THAT(message,
                StartsWith("couldn't get version/kind; json parse error"));
  }
  // The connection ends before the body Content-Length announced.
  const std::string head =
      absl::StrCat("POST ", kCms,
                   " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   "Content-Length: ",
                   body.size(), "\r\n\r\n");
  ExpectStatus("body cut short",
               RawExchange(server_->port(), head + body.substr(0, 10)), 400,
               "BadRequest");
  // ... or inside the headers, or inside a chunk.
  ExpectStatus("headers cut short",
               RawExchange(server_->port(), head.substr(0, head.size() - 6)),
               400, "BadRequest");
  ExpectStatus("chunk cut short",
               RawExchange(server_->port(),
                           absl::StrCat("POST ", kCms,
                                        " HTTP/1.1\r\nHost: x\r\n"
                                        "Transfer-Encoding: chunked\r\n\r\n"
                                        "100\r\n{\"metadata\"")),
               400, "BadRequest");
  // Not HTTP at all, a bad chunk size, a header line without a colon.
  ExpectStatus("garbage", RawExchange(server_->port(), "HELLO\r\n\r\n"), 400,
               "BadRequest");
  ExpectStatus("bad chunk size",
               RawExchange(server_->port(),
                           absl::StrCat("POST ", kCms,
                                        " HTTP/1.1\r\nHost: x\r\n"
                                        "Transfer-Encoding: chunked\r\n\r\n"
                                        "zz\r\n{}\r\n0\r\n\r\n")),
               400, "BadRequest");
  ExpectStatus("header without colon",
               RawExchange(server_->port(),
                           "GET /healthz HTTP/1.1\r\n"
                           "Host x\r\n\r\n"),
               400, "BadRequest");
  // A request line of two megabytes.
  ExpectStatus("huge URL",
               RawExchange(server_->port(),
                           absl::StrCat("GET ", kCms, "?labelSelector=",
                                        std::string(2 << 20, 'a'),
                                        " HTTP/1.1\r\nHost: x\r\n\r\n")),
               431, "");
  EXPECT_EQ(client_->Get(std::string(kCms) + "/cut").status, 404);
}

// Go's decoder, and so kube-apiserver, reads bytes that are not UTF-8 as
// U+FFFD: a value keeps them replaced, a name is refused by validation.
TEST_F(HostileClientTest, InvalidUtf8IsReadAsGoReadsIt) {
  TestResponse value = client_->Post(kCms, ConfigMap("utf8",
                                                     "{\"k\":\"a\xff\xc3"
                                                     "b\xed\xa0\x80\"}"));
  ASSERT_EQ(value.status, 201) << value.body;
  EXPECT_EQ(value.Str("/data/k"),
            "a\xef\xbf\xbd\xef\xbf\xbd"
            "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(client_->Get(std::string(kCms) + "/utf8").Str("/data/k"),
            value.Str("/data/k"));
  std::string name = ExpectStatus(
      "name", client_->Post(kCms, ConfigMap("bad\xff", "{}")), 422, "Invalid");
  EXPECT_THAT(name, HasSubstr("metadata.name: Invalid value"));
  ExpectStatus("outside a string", client_->Post(kCms, "{\xff\"metadata\":{}}"),
               400, "BadRequest");
  ExpectStatus("YAML",
               client_->Do("POST", kCms,
                           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                           "  name: y\ndata:\n  k: a\xff\n",
                           "application/yaml"),
               400, "BadRequest");
  ExpectStatus("apply YAML",
               client_->Do("PATCH", std::string(kCms) + "/y?fieldManager=m",
                           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                           "  name: y\ndata:\n  k: a\xff\n",
                           "application/apply-patch+yaml"),
               400, "BadRequest");
  // A name from the URL is quoted in the answer: still JSON.
  const std::string missing = ExpectStatus(
      "404 naming bytes from the URL",
      client_->Get(std::string(kCms) + "/a%ff%c3"), 404, "NotFound");
  EXPECT_EQ(missing, "configmaps \"a\xef\xbf\xbd\xef\xbf\xbd\" not found");
  TestResponse patched =
      client_->Patch(std::string(kCms) + "/utf8", "{\"data\":{\"j\":\"\xfe\"}}",
                     "application/merge-patch+json");
  EXPECT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.Str("/data/j"), "\xef\xbf\xbd");
}

// One byte, ",", made yaml-cpp's LoadAll add empty documents until the
// server ran out of memory; control characters, which go-yaml refuses,
// are refused too.
TEST_F(HostileClientTest, YamlThatNeverEndsIsBadRequest) {
  ASSERT_EQ(client_->Post(kCms, ConfigMap("cm", "{}")).status, 201);
  for (const std::string& body : {std::string(","), std::string("a: 1\n---\n,"),
                                  std::string("a: b\0", 5)}) {
    ExpectStatus("create", client_->Do("POST", kCms, body, "application/yaml"),
                 400, "BadRequest");
    ExpectStatus("apply",
                 client_->Do("PATCH", std::string(kCms) + "/cm?fieldManager=m",
                             body, "application/apply-patch+yaml"),
                 400, "BadRequest");
  }
}

TEST_F(HostileClientTest, WrongContentTypesAre415) {
  ASSERT_EQ(client_->Post(kCms, ConfigMap("cm", "{}")).status, 201);
  const std::string cm = std::string(kCms) + "/cm";
  const std::string body = ConfigMap("x", "{}");
  for (const char* type :
       {"text/plain", "application/xml", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x"}) {
    std::string message = ExpectStatus(absl::StrCat("create as ", type),
                                       client_->Do("POST", kCms, body, type),
                                       415, "UnsupportedMediaType");
    EXPECT_THAT(message, StartsWith("the body of the request was in an "
                                    "unknown format - accepted media types "
                                    "include: application/json"));
    ExpectStatus(absl::StrCat("update as ", type),
                 client_->Do("PUT", cm, ConfigMap("cm", "{}"), type), 415,
                 "UnsupportedMediaType");
  }
  for (const char* type :
       {"application/json", "text/plain", "application/yaml"}) {
    std::string message = ExpectStatus(absl::StrCat("patch as ", type),
                                       client_->Patch(cm, "{}", type), 415,
                                       "UnsupportedMediaType");
    EXPECT_THAT(message, HasSubstr("application/merge-patch+json"));
  }
  ExpectStatus("protobuf that is not",
               client_->Do("POST", kCms, "not protobuf",
                           "application/vnd.kubernetes.protobuf"),
               400, "BadRequest");
  ExpectStatus("empty body", client_->Post(kCms, ""), 400, "BadRequest");
  ExpectStatus("null", client_->Post(kCms, "null"), 400, "BadRequest");
  ExpectStatus("number past double",
               client_->Post(kCms, ConfigMap("n", R"({"k":1e999})")), 400,
               "BadRequest");
  ExpectStatus("NUL byte",
               client_->Post(kCms, std::string("{\"metadata\"\0:{}}", 16)), 400,
               "BadRequest");
}

// kubectl's typed generators send protobuf. A map entry without its key or
// value once reached RapidJSON as a null pointer and aborted the server; Go
// reads either as the empty string (and an empty label key then fails
// validation).
TEST_F(HostileClientTest, ProtobufMapEntryWithoutKeyOrValue) {
  auto field = [](int number, const std::string& bytes) {
    return std::string(1, static_cast<char>(number << 3 | 2)) +
           std::string(1, static_cast<char>(bytes.size())) + bytes;
  };
  auto config_map = [&field](const std::string& name,
                             const std::string& label) {
    const std::string meta = field(1, name) + field(11, label);
    const std::string type_meta = field(1, "v1") + field(2, "ConfigMap");
    return std::string("k8s\0", 4) + field(1, type_meta) +
           field(2, field(1, meta));
  };
  TestResponse no_value =
      client_->Do("POST", kCms, config_map("pb", field(1, "app")),
                  "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(no_value.status, 201) << no_value.body;
  EXPECT_THAT(no_value.body, HasSubstr(R"("labels":{"app":""})"));
  ExpectHealthy();
  ExpectStatus("no key",
               client_->Do("POST", kCms, config_map("pb2", ""),
                           "application/vnd.kubernetes.protobuf"),
               422, "Invalid");
}

TEST_F(HostileClientTest, AbsurdQueryValues) {
  ASSERT_EQ(client_->Post(kCms, ConfigMap("cm", "{}")).status, 201);
  const std::string list = kCms;
  // What kube-apiserver serves: a negative or empty limit lists
  // everything, a huge one too.
  for (const char* query :
       {"?limit=-1", "?limit=", "?limit=0", "?limit=9223372036854775807",
        "?limit=-9223372036854775808", "?resourceVersion=0", "?continue=",
        "?timeoutSeconds=", "?pretty=banana", "?unknownParameter=%00%ff"}) {
    TestResponse r = client_->Get(list + query);
    EXPECT_EQ(r.status, 200) << query << " " << r.body.substr(0, 300);
    EXPECT_EQ(r.Str("/kind"), "ConfigMapList") << query;
    ExpectHealthy();
  }
  struct Case {
    std::string query;
    int code;
    std::string reason;
  } cases[] = {
      {"?limit=abc", 400, "BadRequest"},
      {"?limit=99999999999999999999", 400, "BadRequest"},
      {"?limit=1.5", 400, "BadRequest"},
      {"?timeoutSeconds=1e12", 400, "BadRequest"},
      {"?timeoutSeconds=abc", 400, "BadRequest"},
      {"?resourceVersion=abc", 400, "BadRequest"},
      {"?resourceVersion=99999999999999999999", 400, "BadRequest"},
      {"?resourceVersion=999999999&resourceVersionMatch=Exact", 504, "Timeout"},
      {"?resourceVersionMatch=Bogus&resourceVersion=1", 422, "Invalid"},
      {"?continue=%25%25%25&limit=1", 400, "BadRequest"},
      {"?continue=" + std::string(100000, 'A') + "&limit=1", 400, "BadRequest"},
      {"?labelSelector=(((", 400, "BadRequest"},
      {"?labelSelector=" + std::string(100000, '('), 400, "BadRequest"},
      {"?fieldSelector=spec.nope%3Dx", 400, "BadRequest"},
      {"?sendInitialEvents=true", 422, "Invalid"},
      {"?watch=1&timeoutSeconds=1e12", 400, "BadRequest"},
      {"?watch=1&resourceVersion=abc", 400, "BadRequest"},
      {"?watch=1&resourceVersion=99999999999999999999", 400, "BadRequest"},
      {"?watch=1&resourceVersionMatch=NotOlderThan", 422, "Invalid"},
  };
  for (const Case& c : cases) {
    ExpectStatus("list" + c.query.substr(0, 60), client_->Get(list + c.query),
                 c.code, c.reason);
  }
  // Huge, negative and zero timeouts still start a watch (that ends at
  // once, or when the connection does).
  for (const char* query :
       {"?watch=1&timeoutSeconds=9223372036854775807",
        "?watch=1&timeoutSeconds=-5", "?watch=1&timeoutSeconds=0"}) {
    std::unique_ptr<WatchStream> w = client_->Watch(list + query);
    EXPECT_EQ(w->status(), 200) << query;
    w.reset();
    ExpectHealthy();
  }
  const std::string cm = std::string(kCms) + "/cm";
  ExpectStatus("gracePeriodSeconds=abc",
               client_->Delete(cm + "?gracePeriodSeconds=abc"), 400,
               "BadRequest");
  ExpectStatus("propagationPolicy=Bogus",
               client_->Delete(cm + "?propagationPolicy=Bogus"), 422,
               "Invalid");
  ExpectStatus(
      "fieldManager too long",
      client_->Do("POST", list + "?fieldManager=" + std::string(200, 'm'),
                  ConfigMap("fm", "{}")),
      422, "Invalid");
  EXPECT_EQ(client_->Get(cm).status, 200);
  EXPECT_EQ(client_->Delete(cm + "?gracePeriodSeconds=-1").status, 200);
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
