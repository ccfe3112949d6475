#include "test/runtime/client/test_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/meta/percent_decode.h"
#include "runtime/base/string_view.h"

namespace kcr::client::testing {

class Connection {
 public:
  Connection(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~Connection() {
    if (ssl_ != nullptr) {
      SSL_shutdown(ssl_);
      SSL_free(ssl_);
    }
  }
  ssize_t Read(char* buf, size_t n) {
    if (ssl_ != nullptr) {
      int r = SSL_read(ssl_, buf, static_cast<int>(n));
      return r > 0 ? r : -1;
    }
    while (true) {
      ssize_t r = read(fd_, buf, n);
      if (r < 0 && errno == EINTR) continue;
      return r;
    }
  }
  bool Write(std::string_view data) {
    if (broken_) return false;
    while (!data.empty()) {
      ssize_t w;
      if (ssl_ != nullptr) {
        int r = SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
        w = r > 0 ? r : -1;
      } else {
        w = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
      }
      if (w <= 0) {
        broken_ = true;
        return false;
      }
      data.remove_prefix(static_cast<size_t>(w));
    }
    return true;
  }

 private:
  int fd_;
  SSL* ssl_;
  bool broken_ = false;
};

namespace {

std::string Reason(int code) {
  switch (code) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    default:
      return "Status";
  }
}

}  // namespace

void ResponseWriter::Respond(
    int code, std::string_view body,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string head = absl::StrCat("HTTP/1.1 ", code, " ", Reason(code), "\r\n");
  bool has_type = false;
  for (const auto& [k, v] : headers) {
    absl::StrAppend(&head, k, ": ", v, "\r\n");
    if (absl::EqualsIgnoreCase(k, "content-type")) has_type = true;
  }
  if (!has_type) head += "Content-Type: application/json\r\n";
  absl::StrAppend(&head, "Content-Length: ", body.size(),
                  "\r\nConnection: close\r\n\r\n");
  conn_->Write(head) && conn_->Write(body);
}

void ResponseWriter::StartChunks(int code) {
  conn_->Write(
      absl::StrCat("HTTP/1.1 ", code, " ", Reason(code),
                   "\r\nContent-Type: application/json\r\n"
                   "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"));
}

bool ResponseWriter::WriteChunk(std::string_view data) {
  if (data.empty()) return true;
  return conn_->Write(
      absl::StrCat(absl::Hex(data.size()), "\r\n", ToAbsl(data), "\r\n"));
}

void ResponseWriter::EndChunks() { conn_->Write("0\r\n\r\n"); }

bool ResponseWriter::WriteRaw(std::string_view data) {
  return conn_->Write(data);
}

TestServer::TestServer(Handler handler, TestServerOptions options)
    : handler_(std::move(handler)), options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<TestServer>> TestServer::Start(
    Handler handler, TestServerOptions options) {
  std::unique_ptr<TestServer> s(
      new TestServer(std::move(handler), std::move(options)));
  if (s->options_.tls) {
    s->ssl_ctx_ = SSL_CTX_new(TLS_server_method());
    if (SSL_CTX_use_certificate_chain_file(
            s->ssl_ctx_, s->options_.cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(s->ssl_ctx_, s->options_.key_file.c_str(),
                                    SSL_FILETYPE_PEM) != 1) {
      return absl::InternalError("test server: cannot load certificate or key");
    }
    if (!s->options_.client_ca_file.empty()) {
      SSL_CTX_load_verify_locations(
          s->ssl_ctx_, s->options_.client_ca_file.c_str(), nullptr);
      SSL_CTX_set_client_CA_list(
          s->ssl_ctx_,
          SSL_load_client_CA_file(s->options_.client_ca_file.c_str()));
      SSL_CTX_set_verify(s->ssl_ctx_, SSL_VERIFY_PEER, nullptr);
    }
  }
  s->listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(s->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) !=
          0 ||
      listen(s->listen_fd_, 64) != 0) {
    return absl::InternalError(
        absl::StrCat("test server: ", std::strerror(errno)));
  }
  socklen_t len = sizeof(addr);
  getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  s->port_ = ntohs(addr.sin_port);
  s->accept_thread_ = std::thread([p = s.get()] { p->AcceptLoop(); });
  return s;
}

TestServer::~TestServer() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
  }
  shutdown(listen_fd_, SHUT_RDWR);
  accept_thread_.join();
  close(listen_fd_);
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
  {
    MutexLock lock(&mu_);
    for (int fd : fds_) close(fd);
  }
  if (ssl_ctx_ != nullptr) SSL_CTX_free(ssl_ctx_);
}

std::string TestServer::url() const {
  return absl::StrCat(options_.tls ? "https" : "http", "://127.0.0.1:", port_);
}

int TestServer::requests() const {
  MutexLock lock(&mu_);
  return requests_;
}

void TestServer::AcceptLoop() {
  while (true) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;
    }
    MutexLock lock(&mu_);
    if (stopping_) {
      close(fd);
      return;
    }
    fds_.push_back(fd);
    threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TestServer::Serve(int fd) {
  SSL* ssl = nullptr;
  if (ssl_ctx_ != nullptr) {
    ssl = SSL_new(ssl_ctx_);
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) != 1) {
      SSL_free(ssl);
      shutdown(fd, SHUT_RDWR);
      return;  // the fd is closed at teardown
    }
  }
  {
    Connection conn(fd, ssl);  // owns `ssl`
    ServeConnection(conn, ssl);
  }
  // Ends the connection even if the handler left a response unfinished.
  shutdown(fd, SHUT_RDWR);
}

void TestServer::ServeConnection(Connection& conn, SSL* ssl) {
  std::string data;
  char buf[8192];
  size_t header_end;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = conn.Read(buf, sizeof(buf));
    if (n <= 0) return;
    data.append(buf, static_cast<size_t>(n));
  }
  TestRequest req;
  std::vector<std::string> lines =
      absl::StrSplit(data.substr(0, header_end), "\r\n");
  std::vector<std::string> first = absl::StrSplit(lines[0], ' ');
  if (first.size() < 2) return;
  req.method = first[0];
  req.target = first[1];
  size_t q = req.target.find('?');
  req.path = api::PercentDecode(req.target.substr(0, q), false);
  if (q != std::string::npos) {
    for (absl::string_view kv : absl::StrSplit(req.target.substr(q + 1), '&')) {
      size_t eq = kv.find('=');
      std::string k = api::PercentDecode(ToStd(kv.substr(0, eq)), true);
      std::string v = eq == absl::string_view::npos
                          ? ""
                          : api::PercentDecode(ToStd(kv.substr(eq + 1)), true);
      req.query[k] = v;
    }
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
    std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    if (req.headers.count(name)) {
      req.headers[name] += "," + value;
    } else {
      req.headers[name] = value;
    }
  }
  size_t content_length = 0;
  if (!absl::SimpleAtoi(req.Header("content-length"), &content_length))
    content_length = 0;
  req.body = data.substr(header_end + 4);
  while (req.body.size() < content_length) {
    ssize_t n = conn.Read(buf, sizeof(buf));
    if (n <= 0) return;
    req.body.append(buf, static_cast<size_t>(n));
  }
  if (ssl != nullptr) {
    X509* peer = SSL_get_peer_certificate(ssl);
    if (peer != nullptr) {
      char cn[256] = {0};
      X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn,
                                sizeof(cn));
      req.client_cert_cn = cn;
      X509_free(peer);
    }
  }
  {
    MutexLock lock(&mu_);
    ++requests_;
  }
  ResponseWriter writer(&conn);
  handler_(req, writer);
}

}  // namespace kcr::client::testing
