#include "runtime/metrics/http_endpoint.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "base/tls_certs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/runtime/metrics/raw_http.h"

namespace kcr::metrics {
namespace {

using ::kcr::metrics::testing::Body;
using ::kcr::metrics::testing::Connect;
using ::kcr::metrics::testing::Get;
using ::kcr::metrics::testing::RawHttp;
using ::kcr::metrics::testing::ReadAll;
using ::kcr::metrics::testing::TlsHttp;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::unique_ptr<HttpEndpoint> NewEndpoint(HttpEndpointOptions options = {}) {
  options.bind_address = "127.0.0.1:0";
  auto endpoint = HttpEndpoint::Create(options);
  EXPECT_TRUE(endpoint.ok()) << endpoint.status();
  return *std::move(endpoint);
}

TEST(HttpEndpointTest, ServesExactPathsAndPrefixes) {
  auto endpoint = NewEndpoint();
  endpoint->Handle("/metrics", [](const HttpGet& get) {
    return HttpReply{200, "text/plain", "m:" + get.query};
  });
  endpoint->Handle("/healthz/", [](const HttpGet& get) {
    return HttpReply{200, "text/plain", "h:" + get.path};
  });
  endpoint->Handle("/healthz/deep/", [](const HttpGet& get) {
    return HttpReply{503, "text/plain", "deep"};
  });
  endpoint->Start();
  ASSERT_GT(endpoint->port(), 0);
  EXPECT_THAT(endpoint->address(), StartsWith("127.0.0.1:"));

  const std::string m = Get(endpoint->port(), "/metrics?a=1&verbose");
  EXPECT_THAT(m, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(m, HasSubstr("Content-Length: 13\r\n"));
  EXPECT_THAT(m, HasSubstr("Connection: close\r\n"));
  EXPECT_EQ(Body(m), "m:a=1&verbose");
  EXPECT_EQ(Body(Get(endpoint->port(), "/healthz/ping")), "h:/healthz/ping");
  EXPECT_THAT(Get(endpoint->port(), "/healthz/deep/x"),
              StartsWith("HTTP/1.1 503 Service Unavailable\r\n"));
  EXPECT_THAT(Get(endpoint->port(), "/metricsx"),
              StartsWith("HTTP/1.1 404 Not Found\r\n"));
  EXPECT_THAT(Get(endpoint->port(), "/"), StartsWith("HTTP/1.1 404"));
}

TEST(HttpEndpointTest, HeadHasNoBodyAndOtherMethodsAreRefused) {
  auto endpoint = NewEndpoint();
  endpoint->Handle("/x", [](const HttpGet& get) {
    return HttpReply{200, "text/plain", get.head ? "head" : "get"};
  });
  endpoint->Start();
  const std::string head =
      RawHttp(endpoint->port(), "HEAD /x HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_THAT(head, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(head, HasSubstr("Content-Length: 4\r\n"));
  EXPECT_EQ(Body(head), "");
  EXPECT_THAT(RawHttp(endpoint->port(),
                      "POST /x HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi"),
              StartsWith("HTTP/1.1 405 Method Not Allowed\r\n"));
}

TEST(HttpEndpointTest, MalformedRequestsGetClearAnswers) {
  auto endpoint = NewEndpoint();
  endpoint->Handle("/x", [](const HttpGet&) { return HttpReply{}; });
  endpoint->Start();
  EXPECT_THAT(RawHttp(endpoint->port(), "GARBAGE\r\n\r\n"),
              StartsWith("HTTP/1.1 400 Bad Request\r\n"));
  EXPECT_THAT(RawHttp(endpoint->port(), "GET x HTTP/1.1\r\n\r\n"),
              StartsWith("HTTP/1.1 400"));
  EXPECT_THAT(RawHttp(endpoint->port(), "GET /x FTP/1\r\n\r\n"),
              StartsWith("HTTP/1.1 400"));
  std::string huge = "GET /x HTTP/1.1\r\nX: " + std::string(40 << 10, 'a');
  EXPECT_THAT(RawHttp(endpoint->port(), huge),
              StartsWith("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
  // The endpoint still serves.
  EXPECT_THAT(Get(endpoint->port(), "/x"), StartsWith("HTTP/1.1 200"));
}

TEST(HttpEndpointTest, SilentClientIsDroppedAfterTheReadTimeout) {
  HttpEndpointOptions options;
  options.read_timeout = absl::Milliseconds(200);
  options.workers = 1;
  auto endpoint = NewEndpoint(options);
  endpoint->Handle("/x", [](const HttpGet&) { return HttpReply{}; });
  endpoint->Start();
  const int silent = Connect(endpoint->port());
  ASSERT_GE(silent, 0);
  // With the only worker held by the silent client, a probe waits at most
  // the read timeout.
  EXPECT_THAT(Get(endpoint->port(), "/x"), StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(ReadAll(silent), "");  // closed without an answer
  close(silent);
}

TEST(HttpEndpointTest, HandlersRunConcurrently) {
  HttpEndpointOptions options;
  options.workers = 4;
  auto endpoint = NewEndpoint(options);
  std::atomic<int> served{0};
  endpoint->Handle("/x", [&](const HttpGet&) {
    served.fetch_add(1);
    return HttpReply{200, "text/plain", "x"};
  });
  endpoint->Start();
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&] {
      for (int j = 0; j < 25; ++j) {
        if (Body(Get(endpoint->port(), "/x")) == "x") ok.fetch_add(1);
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ok.load(), 200);
  EXPECT_EQ(served.load(), 200);
}

TEST(HttpEndpointTest, StopIsPromptWithClientsHoldingConnections) {
  // A read timeout far longer than the bound below: Stop returns within it
  // only if it does not wait for idle clients to time out.
  HttpEndpointOptions options;
  options.read_timeout = absl::Minutes(10);
  auto endpoint = NewEndpoint(options);
  endpoint->Handle("/x", [](const HttpGet&) { return HttpReply{}; });
  endpoint->Start();
  std::vector<int> held;
  for (int i = 0; i < 4; ++i) held.push_back(Connect(endpoint->port()));
  const absl::Time start = absl::Now();
  endpoint->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(60));
  endpoint->Stop();  // idempotent
  for (int fd : held) close(fd);
  const int port = endpoint->port();
  endpoint.reset();
  EXPECT_EQ(Connect(port), -1);
}

TEST(HttpEndpointTest, BadBindAddressesAreClearErrors) {
  HttpEndpointOptions options;
  options.bind_address = "8080";
  auto e = HttpEndpoint::Create(options);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("has no port"));
  options.bind_address = ":99999";
  e = HttpEndpoint::Create(options);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("invalid port"));
  // An address in use.
  auto first = NewEndpoint();
  options.bind_address = "127.0.0.1:" + std::to_string(first->port());
  e = HttpEndpoint::Create(options);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("cannot listen"));
}

TEST(HttpEndpointTest, WildcardAddressServesLoopback) {
  HttpEndpointOptions options;
  options.bind_address = ":0";
  auto endpoint = HttpEndpoint::Create(options);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  (*endpoint)->Handle("/x", [](const HttpGet&) { return HttpReply{}; });
  (*endpoint)->Start();
  EXPECT_THAT(Get((*endpoint)->port(), "/x"), StartsWith("HTTP/1.1 200"));
}

TEST(HttpEndpointTest, PassesTheAuthorizationHeader) {
  auto endpoint = NewEndpoint();
  endpoint->Handle("/a", [](const HttpGet& get) {
    return HttpReply{200, "text/plain", "[" + get.authorization + "]"};
  });
  endpoint->Start();
  EXPECT_EQ(Body(RawHttp(endpoint->port(),
                         "GET /a HTTP/1.1\r\nHost: x\r\n"
                         "authorization:   Bearer abc \r\n\r\n")),
            "[Bearer abc]");
  EXPECT_EQ(Body(Get(endpoint->port(), "/a")), "[]");
}

TEST(HttpEndpointTest, ServesHttps) {
  absl::StatusOr<TlsMaterial> tls = GenerateTlsMaterial();
  ASSERT_TRUE(tls.ok()) << tls.status();
  HttpEndpointOptions options;
  options.tls = HttpTls{tls->server_cert_pem, tls->server_key_pem};
  options.read_timeout = absl::Milliseconds(300);
  auto endpoint = NewEndpoint(options);
  ASSERT_TRUE(endpoint->tls());
  endpoint->Handle("/metrics", [](const HttpGet& get) {
    return HttpReply{200, "text/plain", "m " + get.authorization};
  });
  endpoint->Start();
  const std::string request =
      "GET /metrics HTTP/1.1\r\nHost: localhost\r\n"
      "Authorization: Bearer t\r\n\r\n";
  const std::string answer =
      TlsHttp(endpoint->port(), tls->ca_cert_pem, request);
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_EQ(Body(answer), "m Bearer t");
  // A client that does not trust the certificate fails its handshake.
  absl::StatusOr<TlsMaterial> other = GenerateTlsMaterial();
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(TlsHttp(endpoint->port(), other->ca_cert_pem, request),
            "<tls failed>");
  // Plain HTTP to the TLS port gets no answer, and harms nothing.
  EXPECT_THAT(Get(endpoint->port(), "/metrics"), Not(HasSubstr("200 OK")));
  // Nor does a client that connects and says nothing.
  const int idle = Connect(endpoint->port());
  ASSERT_GE(idle, 0);
  EXPECT_EQ(TlsHttp(endpoint->port(), tls->ca_cert_pem, request), answer);
  close(idle);
}

TEST(HttpEndpointTest, RefusesBadTlsMaterial) {
  absl::StatusOr<TlsMaterial> tls = GenerateTlsMaterial();
  ASSERT_TRUE(tls.ok());
  absl::StatusOr<TlsMaterial> other = GenerateTlsMaterial();
  ASSERT_TRUE(other.ok());
  HttpEndpointOptions options;
  options.bind_address = "127.0.0.1:0";
  options.tls = HttpTls{"not a certificate", tls->server_key_pem};
  auto e = HttpEndpoint::Create(options);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("no certificate in the certificate PEM"));
  options.tls = HttpTls{tls->server_cert_pem, "garbage"};
  e = HttpEndpoint::Create(options);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("no private key in the key PEM"));
  options.tls = HttpTls{tls->server_cert_pem, other->server_key_pem};
  e = HttpEndpoint::Create(options);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(std::string(e.status().message()),
              HasSubstr("does not match the certificate"));
}

TEST(HttpGetTest, QueryParams) {
  HttpGet get;
  get.query = "verbose&exclude=a&x=";
  EXPECT_TRUE(get.HasQueryParam("verbose"));
  EXPECT_TRUE(get.HasQueryParam("exclude"));
  EXPECT_TRUE(get.HasQueryParam("x"));
  EXPECT_FALSE(get.HasQueryParam("verb"));
  EXPECT_FALSE(get.HasQueryParam("a"));
}

}  // namespace
}  // namespace kcr::metrics
