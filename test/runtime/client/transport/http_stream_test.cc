// HttpStream against servers that answer with scripted bytes: chunked
// framing split at every byte, extensions and trailers, Content-Length and
// close-delimited bodies, cut connections, malformed and oversized heads,
// and Cancel from another thread over HTTP and HTTPS.
#include "runtime/client/transport/http_stream.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/runtime/client/scripted_server.h"
#include "test/runtime/client/test_util.h"

namespace kcr::client::transport {
namespace {

using ::kcr::client::testing::ReadFileOrDie;
using ::kcr::client::testing::ResponseWriter;
using ::kcr::client::testing::ScriptedServer;
using ::kcr::client::testing::ScriptedServerOptions;
using ::kcr::client::testing::TestdataPath;
using ::kcr::client::testing::TestRequest;
using ::testing::HasSubstr;

// Accepts connections on loopback one at a time; to each it answers with
// `answer` once the request's head has arrived, then closes, or with
// hold_open, waits for Release() (or the server's end) first.
class RawServer {
 public:
  explicit RawServer(std::string answer, bool hold_open = false)
      : answer_(std::move(answer)), hold_open_(hold_open) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(
        bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listen_fd_, 16), 0);
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~RawServer() {
    Release();
    shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    close(listen_fd_);
  }

  std::string url(const std::string& path = "") const {
    return absl::StrCat("http://127.0.0.1:", port_, path);
  }
  void Release() {
    if (!release_.HasBeenNotified()) release_.Notify();
  }
  // The request heads received so far.
  std::vector<std::string> requests() const {
    MutexLock lock(&mu_);
    return requests_;
  }

 private:
  void Serve() {
    while (true) {
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      std::string head;
      char buf[4096];
      while (head.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) break;
        head.append(buf, static_cast<size_t>(n));
      }
      {
        MutexLock lock(&mu_);
        requests_.push_back(head);
      }
      size_t sent = 0;
      while (sent < answer_.size()) {
        const ssize_t n = send(fd, answer_.data() + sent, answer_.size() - sent,
                               MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<size_t>(n);
      }
      if (hold_open_)
        release_.WaitForNotificationWithTimeout(absl::Seconds(60));
      close(fd);
    }
  }

  const std::string answer_;
  const bool hold_open_;
  int listen_fd_ = -1;
  int port_ = 0;
  Notification release_;
  mutable Mutex mu_;
  std::vector<std::string> requests_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

std::unique_ptr<StreamDialer> Dialer(const std::string& url,
                                     Config config = {}) {
  config.host = url;
  auto tls = std::make_shared<TlsMaterial>();
  EXPECT_TRUE(LoadTlsMaterial(config.tls, tls.get()).ok());
  auto dialer = StreamDialer::Create(config, tls);
  EXPECT_TRUE(dialer.ok()) << dialer.status();
  return *std::move(dialer);
}

std::unique_ptr<HttpStream> Started(StreamDialer& dialer,
                                    const std::string& target = "/x") {
  auto stream = dialer.NewStream();
  EXPECT_TRUE(stream.ok()) << stream.status();
  StreamRequest request;
  request.target = target;
  request.timeout = absl::Seconds(30);
  absl::Status started = (*stream)->Start(request);
  EXPECT_TRUE(started.ok()) << started;
  return *std::move(stream);
}

absl::Status StartError(StreamDialer& dialer) {
  auto stream = dialer.NewStream();
  EXPECT_TRUE(stream.ok());
  StreamRequest request;
  request.target = "/x";
  request.timeout = absl::Seconds(30);
  return (*stream)->Start(request);
}

// The whole body in reads of at most `piece` bytes.
absl::StatusOr<std::string> ReadBody(HttpStream& stream, size_t piece) {
  std::string out;
  std::vector<char> buf(piece);
  while (true) {
    absl::StatusOr<size_t> n = stream.Read(buf.data(), buf.size());
    if (!n.ok()) return n.status();
    if (*n == 0) return out;
    EXPECT_LE(*n, piece);
    out.append(buf.data(), *n);
  }
}

constexpr char kBody[] =
    "{\"kind\":\"PodList\",\"items\":[{\"a\":1},{\"b\":\"\\r\\n0\\r\\n\"}]}";

// kBody in chunks of 1, 5 and the rest, with an extension, a trailer and
// an interim 100 answer first.
std::string ChunkedAnswer() {
  const std::string body = kBody;
  return absl::StrCat(
      "HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 200 OK\r\n",
      "Content-Type: application/json\r\n",
      "Transfer-Encoding: chunked\r\n\r\n", "1\r\n", body.substr(0, 1), "\r\n",
      "5;name=value;other=\"x;y\"\r\n", body.substr(1, 5), "\r\n",
      absl::Hex(body.size() - 6), "\r\n", body.substr(6), "\r\n",
      "0\r\nX-Trailer: one\r\nX-Other: two\r\n\r\n");
}

TEST(HttpStreamTest, ChunkedBodySplitAtEveryByte) {
  const std::string answer = ChunkedAnswer();
  RawServer server(answer);
  auto dialer = Dialer(server.url());
  // A read of n bytes takes n bytes of the wire: every split point of the
  // framing is met by some n.
  for (size_t piece = 1; piece <= answer.size() + 1; ++piece) {
    auto stream = Started(*dialer);
    ASSERT_EQ(stream->status_code(), 200);
    EXPECT_EQ(stream->Header("content-type"), "application/json");
    absl::StatusOr<std::string> body = ReadBody(*stream, piece);
    ASSERT_TRUE(body.ok()) << "piece " << piece << ": " << body.status();
    EXPECT_EQ(*body, kBody) << "piece " << piece;
    char c;
    EXPECT_EQ(*stream->Read(&c, 1), 0u);  // and stays at the end
  }
}

TEST(HttpStreamTest, SendsRequestLineHeadersAndPathPrefix) {
  RawServer server("HTTP/1.1 204 No Content\r\n\r\n");
  auto dialer = Dialer(server.url("/prefix/"));
  auto stream = dialer->NewStream();
  ASSERT_TRUE(stream.ok());
  StreamRequest request;
  request.target = "/api/v1/pods?watch=true";
  request.headers = {{"Accept", "application/json"},
                     {"Authorization", "Bearer t"}};
  ASSERT_TRUE((*stream)->Start(request).ok());
  EXPECT_EQ((*stream)->status_code(), 204);
  char c;
  EXPECT_EQ(*(*stream)->Read(&c, 1), 0u);
  ASSERT_EQ(server.requests().size(), 1u);
  const std::string head = server.requests()[0];
  EXPECT_THAT(head, ::testing::StartsWith(
                        "GET /prefix/api/v1/pods?watch=true HTTP/1.1\r\n"));
  EXPECT_THAT(head, HasSubstr("Host: 127.0.0.1:"));
  EXPECT_THAT(head, HasSubstr("\r\nAuthorization: Bearer t\r\n"));
}

TEST(HttpStreamTest, ContentLengthBody) {
  RawServer server(absl::StrCat(
      "HTTP/1.1 403 Forbidden\r\nContent-Length: ", sizeof(kBody) - 1,
      "\r\nRetry-After: 7\r\n\r\n", kBody, "not part of the body"));
  auto dialer = Dialer(server.url());
  for (size_t piece : {size_t{1}, size_t{7}, size_t{4096}}) {
    auto stream = Started(*dialer);
    EXPECT_EQ(stream->status_code(), 403);
    EXPECT_EQ(stream->Header("retry-after"), "7");
    absl::StatusOr<std::string> body = ReadBody(*stream, piece);
    ASSERT_TRUE(body.ok()) << body.status();
    EXPECT_EQ(*body, kBody);
  }
  auto stream = Started(*dialer);
  EXPECT_EQ(*stream->ReadAll(10), std::string(kBody).substr(0, 10));
}

TEST(HttpStreamTest, CloseDelimitedBody) {
  RawServer server(absl::StrCat("HTTP/1.0 200 OK\r\n\r\n", kBody));
  auto dialer = Dialer(server.url());
  auto stream = Started(*dialer);
  EXPECT_EQ(*ReadBody(*stream, 3), kBody);
}

TEST(HttpStreamTest, ContentLengthCutShortIsAnError) {
  RawServer server("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort");
  auto dialer = Dialer(server.url());
  auto stream = Started(*dialer);
  absl::StatusOr<std::string> body = ReadBody(*stream, 64);
  EXPECT_EQ(body.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(body.status().message()), HasSubstr("95 bytes"));
}

TEST(HttpStreamTest, EndBeforeTheLastChunkIsAnError) {
  const std::string answer = ChunkedAnswer();
  // Cut within the data, within a size line, and just before the last
  // chunk and within the trailers.
  for (const std::string& cut : {answer.substr(0, answer.find("5;") + 10),
                                 answer.substr(0, answer.find("5;") + 3),
                                 answer.substr(0, answer.rfind("0\r\n")),
                                 answer.substr(0, answer.rfind("X-Other"))}) {
    RawServer server(cut);
    auto dialer = Dialer(server.url());
    auto stream = Started(*dialer);
    absl::StatusOr<std::string> body = ReadBody(*stream, 4);
    EXPECT_EQ(body.status().code(), absl::StatusCode::kUnavailable)
        << body.status();
    EXPECT_THAT(std::string(body.status().message()),
                HasSubstr("before the end of the chunked body"));
  }
}

TEST(HttpStreamTest, MalformedChunkIsAnError) {
  for (const std::string& chunks :
       {std::string("zz\r\nab\r\n0\r\n\r\n"), std::string("2\r\nabX\r\n"),
        std::string("\r\n"), std::string("fffffffffffffffff\r\n")}) {
    RawServer server(absl::StrCat(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", chunks));
    auto dialer = Dialer(server.url());
    auto stream = Started(*dialer);
    absl::StatusOr<std::string> body = ReadBody(*stream, 64);
    EXPECT_EQ(body.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(std::string(body.status().message()),
                HasSubstr("malformed HTTP response"))
        << body.status();
  }
}

TEST(HttpStreamTest, BadStatusLineOrHeaderIsAClearError) {
  for (const std::string& answer :
       {std::string("HTTP/1.1 2x0 OK\r\n\r\n"), std::string("SSH-2.0\r\n\r\n"),
        std::string("HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n"),
        std::string("HTTP/1.1 200 OK\r\n folded first\r\n\r\n"),
        std::string("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
        std::string("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
                    "Content-Length: 2\r\n\r\n")}) {
    RawServer server(answer);
    auto dialer = Dialer(server.url());
    absl::Status s = StartError(*dialer);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << answer;
    EXPECT_THAT(std::string(s.message()), HasSubstr("malformed HTTP response"));
  }
  RawServer half("HTTP/1.1 200 OK\r\nContent-");
  auto dialer = Dialer(half.url());
  EXPECT_THAT(std::string(StartError(*dialer).message()),
              HasSubstr("within the headers"));
}

TEST(HttpStreamTest, HugeHeaderSectionIsRefused) {
  std::string answer = "HTTP/1.1 200 OK\r\n";
  const std::string line =
      absl::StrCat("X-Filler: ", std::string(1000, 'a'), "\r\n");
  while (answer.size() < (3 << 20)) answer += line;
  answer += "\r\n";
  RawServer server(answer);
  auto dialer = Dialer(server.url());
  absl::Status s = StartError(*dialer);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr("header section over"));
}

TEST(HttpStreamTest, ConnectionRefused) {
  int port;
  {
    RawServer gone("");
    port = std::stoi(gone.url().substr(gone.url().rfind(':') + 1));
  }
  auto dialer = Dialer(absl::StrCat("http://127.0.0.1:", port));
  absl::Status s = StartError(*dialer);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr("connect to 127.0.0.1"));
}

TEST(HttpStreamTest, SilentServerTimesOut) {
  RawServer server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                   /*hold_open=*/true);
  auto dialer = Dialer(server.url());
  auto stream = dialer->NewStream();
  StreamRequest request;
  request.target = "/x";
  request.timeout = absl::Milliseconds(50);
  ASSERT_TRUE((*stream)->Start(request).ok());
  char buf[16];
  EXPECT_EQ((*stream)->Read(buf, sizeof(buf)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
}

// Reads on another thread until the stream fails; Cancel once the first
// bytes arrived must end it.
void ExpectCancelEndsABlockedRead(HttpStream& stream) {
  Notification first_bytes;
  absl::Status end;
  std::thread reader([&] {
    char buf[256];
    while (true) {
      absl::StatusOr<size_t> n = stream.Read(buf, sizeof(buf));
      if (!n.ok()) {
        end = n.status();
        return;
      }
      if (*n == 0) return;
      if (!first_bytes.HasBeenNotified()) first_bytes.Notify();
    }
  });
  ASSERT_TRUE(first_bytes.WaitForNotificationWithTimeout(absl::Seconds(30)));
  stream.Cancel();
  reader.join();
  EXPECT_EQ(end.code(), absl::StatusCode::kCancelled) << end;
}

TEST(HttpStreamTest, CancelEndsABlockedRead) {
  RawServer server(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
      /*hold_open=*/true);
  auto dialer = Dialer(server.url());
  auto stream = Started(*dialer);
  ExpectCancelEndsABlockedRead(*stream);
}

TEST(HttpStreamTest, CancelBeforeStartFailsAtOnce) {
  RawServer server("HTTP/1.1 200 OK\r\n\r\n", /*hold_open=*/true);
  auto dialer = Dialer(server.url());
  auto stream = dialer->NewStream();
  (*stream)->Cancel();
  StreamRequest request;
  request.target = "/x";
  EXPECT_EQ((*stream)->Start(request).code(), absl::StatusCode::kCancelled);
}

class HttpStreamTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ScriptedServerOptions options;
    options.tls = true;
    options.cert_file = TestdataPath("server.pem");
    options.key_file = TestdataPath("server-key.pem");
    options.client_ca_file = TestdataPath("ca.pem");
    auto server = ScriptedServer::Start(
        [this](const TestRequest& r, ResponseWriter& w) {
          w.StartChunks(200);
          w.WriteChunk(absl::StrCat("cn=", r.client_cert_cn, "\n"));
          release_.WaitForNotificationWithTimeout(absl::Seconds(60));
        },
        options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  void TearDown() override {
    if (!release_.HasBeenNotified()) release_.Notify();
    server_.reset();
  }

  Notification release_;
  std::unique_ptr<ScriptedServer> server_;
};

TEST_F(HttpStreamTlsTest, VerifiesAndPresentsTheClientCertificate) {
  Config config;
  config.tls.ca_file = TestdataPath("ca.pem");
  config.tls.cert_file = TestdataPath("client.pem");
  config.tls.key_file = TestdataPath("client-key.pem");
  auto dialer = Dialer(server_->url(), config);
  auto stream = Started(*dialer);
  EXPECT_EQ(stream->status_code(), 200);
  char buf[64];
  absl::StatusOr<size_t> n = stream->Read(buf, sizeof(buf));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(std::string(buf, *n), "cn=kcr-test-user\n");
}

TEST_F(HttpStreamTlsTest, CancelEndsABlockedRead) {
  Config config;
  config.tls.ca_data = ReadFileOrDie(TestdataPath("ca.pem"));
  config.tls.server_name = "kcr-test.example";
  auto dialer = Dialer(server_->url(), config);
  auto stream = Started(*dialer);
  ExpectCancelEndsABlockedRead(*stream);
}

TEST_F(HttpStreamTlsTest, UntrustedCertificateFailsTheHandshake) {
  Config config;
  config.tls.ca_file = TestdataPath("other-ca.pem");
  auto dialer = Dialer(server_->url(), config);
  absl::Status s = StartError(*dialer);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(s.message()), HasSubstr("TLS handshake"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("certificate verify failed"));

  config.tls.ca_file = TestdataPath("ca.pem");
  config.tls.server_name = "wrong.example";
  dialer = Dialer(server_->url(), config);
  EXPECT_THAT(std::string(StartError(*dialer).message()),
              HasSubstr("certificate verify failed"));

  config.tls.ca_file.clear();
  config.tls.server_name.clear();
  config.tls.insecure = true;
  dialer = Dialer(server_->url(), config);
  auto stream = Started(*dialer);
  EXPECT_EQ(stream->status_code(), 200);
}

// An HTTP/1.1 server that keeps connections open: each connection on a
// thread of its own, each request (head and Content-Length body) answered
// with `answer`. A connection closes after `answers_per_connection`
// answers (0: never); with drop_second, the second request on a
// connection is met with a close and no answer (a server that timed the
// idle connection out just as the request arrived).
class KeepAliveServer {
 public:
  struct Options {
    std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
    int answers_per_connection = 0;
    bool drop_second = false;
  };
  explicit KeepAliveServer(Options options) : options_(std::move(options)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(
        bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listen_fd_, 16), 0);
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~KeepAliveServer() {
    shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    std::vector<int> fds;
    {
      MutexLock lock(&mu_);
      fds = open_;
    }
    for (int fd : fds) shutdown(fd, SHUT_RDWR);
    for (std::thread& t : connections_) t.join();
    close(listen_fd_);
  }

  std::string url() const { return absl::StrCat("http://127.0.0.1:", port_); }
  int connections() const {
    MutexLock lock(&mu_);
    return connections_made_;
  }
  // Each request received: head and body.
  std::vector<std::string> requests() const {
    MutexLock lock(&mu_);
    return requests_;
  }

 private:
  void Accept() {
    while (true) {
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      {
        MutexLock lock(&mu_);
        ++connections_made_;
        open_.push_back(fd);
      }
      connections_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  void Serve(int fd) {
    std::string buffer;
    char buf[4096];
    for (int served = 0;; ++served) {
      size_t end;
      while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) {
          shutdown(fd, SHUT_RDWR);
          return;
        }
        buffer.append(buf, static_cast<size_t>(n));
      }
      size_t length = 0;
      const size_t cl = buffer.find("Content-Length: ");
      if (cl != std::string::npos && cl < end) {
        length = std::stoul(buffer.substr(cl + 16));
      }
      while (buffer.size() < end + 4 + length) {
        const ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) return;
        buffer.append(buf, static_cast<size_t>(n));
      }
      {
        MutexLock lock(&mu_);
        requests_.push_back(buffer.substr(0, end + 4 + length));
      }
      buffer.erase(0, end + 4 + length);
      if (options_.drop_second && served == 1) {
        shutdown(fd, SHUT_RDWR);
        return;
      }
      (void)!send(fd, options_.answer.data(), options_.answer.size(),
                  MSG_NOSIGNAL);
      if (options_.answers_per_connection > 0 &&
          served + 1 >= options_.answers_per_connection) {
        shutdown(fd, SHUT_RDWR);
        return;
      }
    }
  }

  const Options options_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  // Joined after the acceptor.
  std::vector<std::thread> connections_;
  mutable Mutex mu_;
  int connections_made_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int> open_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> requests_ ABSL_GUARDED_BY(mu_);
};

// One request as the REST client sends it: a kept connection if there is
// one, the whole answer read, the connection given back; again on a new
// connection when a kept one had been closed by the server and the request
// may be repeated (nothing of it written, or not a POST).
absl::StatusOr<std::string> RoundTrip(StreamDialer& dialer,
                                      const std::string& body,
                                      const std::string& method = "POST") {
  StreamRequest request;
  request.method = method;
  request.target = "/api/v1/namespaces/default/configmaps";
  request.timeout = absl::Seconds(30);
  request.body = body;
  while (true) {
    absl::StatusOr<std::unique_ptr<HttpStream>> stream =
        dialer.ReuseOrNewStream();
    if (!stream.ok()) return stream.status();
    absl::Status started = (*stream)->Start(request);
    if (!started.ok() && (*stream)->FailedOnStaleConnection() &&
        (method != "POST" || !(*stream)->WroteRequest())) {
      continue;
    }
    if (!started.ok()) return started;
    absl::StatusOr<std::string> answer = (*stream)->ReadAll(1 << 20);
    if (answer.ok()) dialer.Release(*std::move(stream));
    return answer;
  }
}

TEST(StreamDialerTest, ReusesAConnectionWhoseAnswerWasRead) {
  KeepAliveServer server({});
  auto dialer = Dialer(server.url());
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<std::string> answer =
        RoundTrip(*dialer, absl::StrCat("{\"n\":", i, "}"));
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(*answer, "{}");
  }
  EXPECT_EQ(server.connections(), 1);
  const std::vector<std::string> requests = server.requests();
  ASSERT_EQ(requests.size(), 5u);
  EXPECT_THAT(requests[3], ::testing::StartsWith("POST /api/v1/namespaces/"));
  EXPECT_THAT(requests[3], HasSubstr("\r\nContent-Length: 7\r\n\r\n{\"n\":3}"));
}

TEST(StreamDialerTest, ChunkedAndEmptyAnswersKeepTheConnection) {
  for (const std::string& answer :
       {absl::StrCat("HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n"
                     "\r\n2\r\n{}\r\n0\r\n\r\n"),
        std::string("HTTP/1.1 204 No Content\r\n\r\n")}) {
    KeepAliveServer server({.answer = answer});
    auto dialer = Dialer(server.url());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(RoundTrip(*dialer, "{}").ok());
    EXPECT_EQ(server.connections(), 1) << answer;
  }
}

TEST(StreamDialerTest, DoesNotReuseWhatCannotCarryAnotherRequest) {
  // The server asks to close; HTTP/1.0; a close-delimited body; an answer
  // not read to its end.
  for (const std::string& answer :
       {std::string("HTTP/1.1 200 OK\r\nConnection: close\r\n"
                    "Content-Length: 2\r\n\r\n{}"),
        std::string("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}"),
        std::string("HTTP/1.1 200 OK\r\n\r\n{}")}) {
    KeepAliveServer server({.answer = answer, .answers_per_connection = 1});
    auto dialer = Dialer(server.url());
    for (int i = 0; i < 3; ++i) {
      absl::StatusOr<std::string> got = RoundTrip(*dialer, "{}");
      ASSERT_TRUE(got.ok()) << answer << ": " << got.status();
      EXPECT_EQ(*got, "{}");
    }
    EXPECT_EQ(server.connections(), 3) << answer;
  }
  KeepAliveServer server(
      {.answer = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n{\"\"}"});
  auto dialer = Dialer(server.url());
  for (int i = 0; i < 2; ++i) {
    auto stream = dialer->ReuseOrNewStream();
    ASSERT_TRUE(stream.ok());
    StreamRequest request;
    request.timeout = absl::Seconds(30);
    ASSERT_TRUE((*stream)->Start(request).ok());
    EXPECT_EQ(*(*stream)->ReadAll(2), "{\"");
    EXPECT_FALSE((*stream)->Reusable());
    dialer->Release(*std::move(stream));
  }
  EXPECT_EQ(server.connections(), 2);
}

TEST(StreamDialerTest, AConnectionTheServerClosedIsNotReused) {
  // Closed after each answer, though the answer did not say so: the idle
  // connection is found closed before it is used.
  KeepAliveServer server({.answers_per_connection = 1});
  auto dialer = Dialer(server.url());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(RoundTrip(*dialer, "{}").ok());
    // The server's close reaches the client.
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(server.connections(), 3);
  EXPECT_EQ(server.requests().size(), 3u);
}

TEST(StreamDialerTest, AnIdempotentRequestMetByACloseIsSentAgain) {
  KeepAliveServer server({.drop_second = true});
  auto dialer = Dialer(server.url());
  ASSERT_TRUE(RoundTrip(*dialer, "{\"n\":1}", "PUT").ok());
  absl::StatusOr<std::string> second = RoundTrip(*dialer, "{\"n\":2}", "PUT");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, "{}");
  EXPECT_EQ(server.connections(), 2);
  // Received twice, answered once.
  const std::vector<std::string> requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_THAT(requests[1], HasSubstr("{\"n\":2}"));
  EXPECT_THAT(requests[2], HasSubstr("{\"n\":2}"));
}

TEST(StreamDialerTest, APostThatWentOutIsNotSentAgain) {
  KeepAliveServer server({.drop_second = true});
  auto dialer = Dialer(server.url());
  ASSERT_TRUE(RoundTrip(*dialer, "{\"n\":1}").ok());
  absl::StatusOr<std::string> second = RoundTrip(*dialer, "{\"n\":2}");
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(StreamDialerTest, ACancelledStreamIsNotReused) {
  KeepAliveServer server({});
  auto dialer = Dialer(server.url());
  ASSERT_TRUE(RoundTrip(*dialer, "{}").ok());
  auto stream = dialer->ReuseOrNewStream();
  ASSERT_TRUE(stream.ok());
  StreamRequest request;
  request.timeout = absl::Seconds(30);
  ASSERT_TRUE((*stream)->Start(request).ok());
  ASSERT_TRUE((*stream)->ReadAll(1 << 20).ok());
  (*stream)->Cancel();
  EXPECT_FALSE((*stream)->Reusable());
  dialer->Release(*std::move(stream));
  ASSERT_TRUE(RoundTrip(*dialer, "{}").ok());
  EXPECT_EQ(server.connections(), 2);
}

TEST(StreamDialerTest, RejectsHostsThatAreNotUrls) {
  auto tls = std::make_shared<TlsMaterial>();
  for (const char* host : {"ftp://x", "http://", "http://[::1",
                           "http://h:99999", "http://h:port"}) {
    Config config;
    config.host = host;
    EXPECT_EQ(StreamDialer::Create(config, tls).status().code(),
              absl::StatusCode::kInvalidArgument)
        << host;
  }
  Config config;
  config.host = "https://[::1]:6443/base";
  EXPECT_TRUE(StreamDialer::Create(config, tls).ok());
}

}  // namespace
}  // namespace kcr::client::transport
