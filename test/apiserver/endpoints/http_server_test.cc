// HttpServer's response framing as a client reads it off the wire: the
// status line, the default and overridden Cache-Control, repeated headers,
// Content-Length (absent where a status carries no body), and keep-alive
// as HTTP/1.0 and HTTP/1.1 each define it.
#include "apiserver/endpoints/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Answers by path: /plain, /cached (its own Cache-Control), /warn (two
// Warning headers), /not-modified (304, with a body that must not be
// sent), /no-content (204).
void Handle(const HttpRequest& req, HttpExchange* ex) {
  HttpResponse r;
  r.body = R"({"path":")" + req.path + R"("})";
  if (req.path == "/cached") {
    r.headers.push_back({"Cache-Control", "public, immutable"});
    r.headers.push_back({"ETag", "\"abc\""});
  } else if (req.path == "/warn") {
    r.headers.push_back({"Warning", "299 - \"one\""});
    r.headers.push_back({"Warning", "299 - \"two\""});
  } else if (req.path == "/not-modified") {
    r.status = 304;
    r.content_type = "";
  } else if (req.path == "/no-content") {
    r.status = 204;
  }
  ex->Respond(std::move(r));
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<HttpServer>(HttpServerOptions(), &Handle);
    ASSERT_TRUE(server_->Start().ok());
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
              0);
  }
  void TearDown() override {
    close(fd_);
    server_->Stop();
  }

  void Send(const std::string& request) {
    ASSERT_EQ(write(fd_, request.data(), request.size()),
              static_cast<ssize_t>(request.size()));
  }

  // One response: its head (through the blank line) and the body its
  // Content-Length announces (none without one). Bytes past it stay
  // buffered for the next call.
  std::string ReadResponse(std::string* body) {
    size_t end;
    while ((end = in_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return "";
    }
    std::string head = in_.substr(0, end + 4);
    size_t length = 0;
    size_t cl = head.find("Content-Length: ");
    if (cl != std::string::npos) {
      length = strtoul(head.c_str() + cl + 16, nullptr, 10);
    }
    while (in_.size() < head.size() + length) {
      if (!Fill()) return "";
    }
    *body = in_.substr(head.size(), length);
    in_.erase(0, head.size() + length);
    return head;
  }

  // True once the server has closed the connection (after what was read).
  bool Closed() { return in_.empty() && !Fill(); }

  std::unique_ptr<HttpServer> server_;
  int fd_ = -1;

 private:
  bool Fill() {
    char buf[4096];
    ssize_t n = read(fd_, buf, sizeof(buf));
    if (n <= 0) return false;
    in_.append(buf, static_cast<size_t>(n));
    return true;
  }
  std::string in_;
};

TEST_F(HttpServerTest, KeepAliveResponsesAreFramedByContentLength) {
  // Three pipelined requests on one connection, one of them a 304.
  Send(
      "GET /plain HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /not-modified HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /warn HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string body;
  std::string head = ReadResponse(&body);
  EXPECT_THAT(head, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nContent-Type: application/json\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nCache-Control: no-cache, private\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nContent-Length: 17\r\n"));
  EXPECT_THAT(head, Not(HasSubstr("Connection:")));
  EXPECT_EQ(body, R"({"path":"/plain"})");

  head = ReadResponse(&body);
  EXPECT_THAT(head, StartsWith("HTTP/1.1 304 Not Modified\r\n"));
  EXPECT_THAT(head, Not(HasSubstr("Content-Length")));
  EXPECT_THAT(head, Not(HasSubstr("Content-Type")));
  EXPECT_EQ(body, "");

  head = ReadResponse(&body);
  EXPECT_THAT(head, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nWarning: 299 - \"one\"\r\n"
                              "Warning: 299 - \"two\"\r\n"));
  EXPECT_EQ(body, R"({"path":"/warn"})");
  EXPECT_EQ(server_->ConnectionCount(), 1u);
}

TEST_F(HttpServerTest, HandlerCacheControlReplacesTheDefault) {
  Send("GET /cached HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string body;
  std::string head = ReadResponse(&body);
  EXPECT_THAT(head, HasSubstr("\r\nCache-Control: public, immutable\r\n"));
  EXPECT_THAT(head, Not(HasSubstr("no-cache")));
  EXPECT_EQ(head.find("Cache-Control"), head.rfind("Cache-Control"));
  EXPECT_THAT(head, HasSubstr("\r\nETag: \"abc\"\r\n"));
}

TEST_F(HttpServerTest, NoContentHasNoBodyOrLength) {
  Send(
      "GET /no-content HTTP/1.1\r\nHost: x\r\n\r\nGET /plain HTTP/1.1\r\n\r\n");
  std::string body;
  std::string head = ReadResponse(&body);
  EXPECT_THAT(head, StartsWith("HTTP/1.1 204 No Content\r\n"));
  EXPECT_THAT(head, Not(HasSubstr("Content-Length")));
  head = ReadResponse(&body);
  EXPECT_THAT(head, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_EQ(body, R"({"path":"/plain"})");
}

TEST_F(HttpServerTest, Http11ConnectionCloseIsAnsweredAndClosed) {
  Send("GET /plain HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string body;
  std::string head = ReadResponse(&body);
  EXPECT_THAT(head, HasSubstr("\r\nConnection: close\r\n"));
  EXPECT_EQ(body, R"({"path":"/plain"})");
  EXPECT_TRUE(Closed());
}

TEST_F(HttpServerTest, Http10ClosesUnlessAskedToKeepAlive) {
  Send("GET /plain HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  std::string body;
  std::string head = ReadResponse(&body);
  EXPECT_THAT(head, StartsWith("HTTP/1.0 200 OK\r\n"));
  EXPECT_THAT(head, HasSubstr("\r\nConnection: keep-alive\r\n"));
  EXPECT_EQ(body, R"({"path":"/plain"})");

  Send("GET /warn HTTP/1.0\r\n\r\n");
  head = ReadResponse(&body);
  EXPECT_THAT(head, StartsWith("HTTP/1.0 200 OK\r\n"));
  EXPECT_THAT(head, Not(HasSubstr("Connection:")));
  EXPECT_EQ(body, R"({"path":"/warn"})");
  EXPECT_TRUE(Closed());
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
