#include "apiserver/endpoints/http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/errors/errors.h"
#include "api/meta/percent_decode.h"
#include "base/str_cat.h"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/ssl.hpp"
#include "boost/asio/write.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "boost/beast/ssl.hpp"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

namespace {

struct ThreadStart {
  std::function<void()> fn;
};

void* ThreadMain(void* arg) {
  std::unique_ptr<ThreadStart> start(static_cast<ThreadStart*>(arg));
  start->fn();
  return nullptr;
}

void ParseTarget(std::string_view target, HttpRequest* r) {
  size_t q = target.find('?');
  r->path = api::PercentDecode(target.substr(0, q), false);
  if (q == std::string_view::npos) return;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view()
                                          : query.substr(amp + 1);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    std::string key = api::PercentDecode(part.substr(0, eq), true);
    std::string value = eq == std::string_view::npos
                            ? ""
                            : api::PercentDecode(part.substr(eq + 1), true);
    r->query.emplace(std::move(key), std::move(value));
  }
}

bool PeerClosed(int fd) {
  if (fd < 0) return true;
  struct pollfd p;
  p.fd = fd;
  p.events = POLLRDHUP;
  p.revents = 0;
  if (poll(&p, 1, 0) <= 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

// The common name of the peer's verified certificate, or "".
// The verified client certificate's subject: common name and
// organizations.
struct PeerSubject {
  std::string cn;
  std::vector<std::string> organizations;
};

PeerSubject PeerSubjectOf(SSL* ssl) {
  PeerSubject subject;
  X509* peer = SSL_get1_peer_certificate(ssl);
  if (peer == nullptr) return subject;
  X509_NAME* name = X509_get_subject_name(peer);
  char cn[256] = {0};
  X509_NAME_get_text_by_NID(name, NID_commonName, cn, sizeof(cn));
  subject.cn = cn;
  for (int i = X509_NAME_get_index_by_NID(name, NID_organizationName, -1);
       i >= 0; i = X509_NAME_get_index_by_NID(name, NID_organizationName, i)) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    unsigned char* utf8 = nullptr;
    const int n = ASN1_STRING_to_UTF8(&utf8, data);
    if (n >= 0) {
      subject.organizations.emplace_back(reinterpret_cast<char*>(utf8), n);
      OPENSSL_free(utf8);
    }
  }
  X509_free(peer);
  return subject;
}

}  // namespace

absl::StatusOr<pthread_t> StartThread(std::function<void()> fn,
                                      size_t stack_bytes) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  auto* start = new ThreadStart{std::move(fn)};
  pthread_t thread;
  int rc = pthread_create(&thread, &attr, &ThreadMain, start);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    delete start;
    return absl::ResourceExhaustedError(
        Cat("pthread_create failed: ", std::string(strerror(rc))));
  }
  return thread;
}

std::string HttpRequest::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

std::string HttpRequest::Query(const std::string& name) const {
  auto it = query.find(name);
  return it == query.end() ? "" : it->second;
}

struct HttpServer::Connection {
  // Guarded by the server's mu_; -1 once closed.
  int fd = -1;
  std::atomic<bool> cancelled{false};
  std::atomic<bool> done{false};
  pthread_t thread{};
  bool has_thread = false;
};

struct HttpServer::Impl {
  net::io_context ioc;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<ssl::context> ssl_ctx;
};

namespace {

// Whether a stream holds bytes read from the socket but not yet handed
// out: TLS decrypts whole records, so poll() on the socket cannot see them.
bool Pending(tcp::socket&) { return false; }
bool Pending(beast::ssl_stream<tcp::socket&>& stream) {
  return SSL_pending(stream.native_handle()) > 0;
}

template <class Stream>
class Exchange : public HttpExchange {
 public:
  Exchange(Stream* stream, beast::flat_buffer* buffer,
           HttpServer::Connection* conn, bool keep_alive, unsigned version,
           std::atomic<bool>* stopping)
      : stream_(stream),
        buffer_(buffer),
        conn_(conn),
        keep_alive_(keep_alive),
        version_(version),
        stopping_(stopping) {}

  // The head is built into one string and sent with the body in one
  // gather write (one sendmsg for a small response): no per-header nodes
  // as Beast's fields allocate, no copy of the body.
  void Respond(HttpResponse response) override {
    if (responded_ || streaming_ || raw_) return;
    responded_ = true;
    const unsigned status = static_cast<unsigned>(response.status);
    // 1xx, 204 and 304 carry no body and no Content-Length (RFC 9110).
    const bool bodiless = status / 100 == 1 || status == 204 || status == 304;
    if (bodiless) response.body.clear();
    std::string_view cache_control = "no-cache, private";
    for (const auto& [k, v] : response.headers) {
      // A handler's own Cache-Control (cacheable documents) replaces the
      // default; other headers may repeat (Warning).
      if (beast::iequals(k, "Cache-Control")) cache_control = v;
    }
    std::string head;
    head.reserve(256);
    const beast::string_view reason =
        http::obsolete_reason(static_cast<http::status>(status));
    CatAppend(&head, version_ == 10 ? "HTTP/1.0 " : "HTTP/1.1 ", status, " ",
              std::string_view(reason.data(), reason.size()), "\r\n");
    if (!response.content_type.empty()) {
      CatAppend(&head, "Content-Type: ", response.content_type, "\r\n");
    }
    CatAppend(&head, "Cache-Control: ", cache_control, "\r\n");
    for (const auto& [k, v] : response.headers) {
      if (beast::iequals(k, "Cache-Control")) continue;
      CatAppend(&head, k, ": ", v, "\r\n");
    }
    // As Beast's keep_alive(): HTTP/1.1 persists unless told to close,
    // HTTP/1.0 closes unless told to persist.
    if (version_ >= 11 && !keep_alive_) head += "Connection: close\r\n";
    if (version_ < 11 && keep_alive_) head += "Connection: keep-alive\r\n";
    if (!bodiless) {
      CatAppend(&head, "Content-Length: ", response.body.size(), "\r\n");
    }
    head += "\r\n";
    WriteAll({head, response.body});
  }

  bool WriteRaw(std::string_view bytes) override {
    raw_ = true;
    return Write(bytes);
  }

  int ReadRaw(char* out, size_t n, absl::Duration timeout) override {
    if (!raw_ || broken_ || n == 0) return -1;
    if (buffer_->size() > 0) {
      const size_t taken =
          net::buffer_copy(net::buffer(out, n), buffer_->data());
      buffer_->consume(taken);
      return static_cast<int>(taken);
    }
    // Wait in slices, so that a stopping server is noticed within one.
    const absl::Time deadline = absl::Now() + timeout;
    while (true) {
      if (conn_->cancelled.load() || stopping_->load()) return -1;
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return 0;
      // TLS may hold decrypted bytes the socket no longer shows.
      if (!Pending(*stream_)) {
        struct pollfd p;
        p.fd = fd_for_poll_;
        p.events = POLLIN;
        p.revents = 0;
        const int ms = static_cast<int>(
            std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 100));
        const int ready = poll(&p, 1, ms);
        if (ready < 0) return -1;
        if (ready == 0) continue;
      }
      beast::error_code ec;
      const size_t got = stream_->read_some(net::buffer(out, n), ec);
      if (ec || got == 0) {
        broken_ = true;
        return -1;
      }
      return static_cast<int>(got);
    }
  }

  bool StartStream(int status, const std::string& content_type,
                   const std::vector<std::pair<std::string, std::string>>&
                       headers) override {
    if (responded_ || streaming_ || raw_) return false;
    streaming_ = true;
    std::string head =
        Cat("HTTP/1.1 ", status, " ",
            http::obsolete_reason(static_cast<http::status>(status)),
            "\r\nContent-Type: ", content_type,
            "\r\nCache-Control: no-cache, private"
            "\r\nTransfer-Encoding: chunked\r\n");
    for (const auto& [k, v] : headers) CatAppend(&head, k, ": ", v, "\r\n");
    if (!keep_alive_) head += "Connection: close\r\n";
    head += "\r\n";
    return Write(head);
  }

  bool WriteChunk(std::string_view data) override {
    if (!streaming_ || broken_ || data.empty()) return !broken_;
    char size[32];
    int n = snprintf(size, sizeof(size), "%zx\r\n", data.size());
    return WriteAll(
        {std::string_view(size, static_cast<size_t>(n)), data, "\r\n"});
  }

  void EndStream() override {
    if (!streaming_ || ended_) return;
    ended_ = true;
    Write("0\r\n\r\n");
  }

  bool Cancelled() override {
    return broken_ || conn_->cancelled.load() || stopping_->load() ||
           PeerClosed(fd_for_poll_);
  }

  void set_fd(int fd) { fd_for_poll_ = fd; }
  bool responded() const { return responded_ || streaming_ || raw_; }
  bool broken() const { return broken_ || raw_ || (streaming_ && !ended_); }

 private:
  // Writes `parts` in order: in one gather write when together they fit
  // one TLS record, else one write each. Beast's flat_stream (under its
  // ssl_stream) makes no progress on a gather write of a small first
  // buffer and a total above a record, so the connection would spin.
  bool WriteAll(std::initializer_list<std::string_view> parts) {
    if (broken_) return false;
    constexpr size_t kTlsRecord = 16 * 1024;
    size_t total = 0;
    for (std::string_view p : parts) total += p.size();
    beast::error_code ec;
    if (total <= kTlsRecord) {
      absl::InlinedVector<net::const_buffer, 3> bufs;
      for (std::string_view p : parts) {
        bufs.push_back(net::buffer(p.data(), p.size()));
      }
      net::write(*stream_, bufs, ec);
    } else {
      for (std::string_view p : parts) {
        if (p.empty()) continue;
        net::write(*stream_, net::buffer(p.data(), p.size()), ec);
        if (ec) break;
      }
    }
    if (ec) broken_ = true;
    return !broken_;
  }

  bool Write(std::string_view s) {
    if (broken_) return false;
    beast::error_code ec;
    net::write(*stream_, net::buffer(s.data(), s.size()), ec);
    if (ec) broken_ = true;
    return !broken_;
  }

  Stream* const stream_;
  // What the connection read past the current request.
  beast::flat_buffer* const buffer_;
  HttpServer::Connection* const conn_;
  const bool keep_alive_;
  const unsigned version_;
  std::atomic<bool>* const stopping_;
  int fd_for_poll_ = -1;
  bool responded_ = false;
  bool streaming_ = false;
  bool ended_ = false;
  bool broken_ = false;
  bool raw_ = false;
};

// How long, and for how many bytes, a refused request's remaining body is
// read and dropped before the connection closes. Closing a socket that
// still holds unread bytes makes the kernel reset the connection, and a
// client still sending its body may then lose the answer that says why
// (413, 400); Go's server lingers the same way. The bounds stop a client
// that keeps sending from holding the thread.
constexpr absl::Duration kLingerTime = absl::Seconds(2);
constexpr size_t kLingerBytes = size_t{64} << 20;

// Ends a connection whose request was refused: the answer is out, so stop
// sending (FIN), then drop what the client still sends until it closes,
// kLingerBytes arrive or kLingerTime passes. On TLS the bytes are dropped
// still encrypted.
void LingeringClose(int fd, HttpServer::Connection* conn) {
  if (fd < 0) return;
  ::shutdown(fd, SHUT_WR);
  const absl::Time deadline = absl::Now() + kLingerTime;
  size_t dropped = 0;
  char scratch[16 << 10];
  while (dropped < kLingerBytes && !conn->cancelled.load()) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return;
    struct pollfd p;
    p.fd = fd;
    p.events = POLLIN;
    p.revents = 0;
    const int ready =
        poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready <= 0) return;
    const ssize_t n = ::recv(fd, scratch, sizeof(scratch), 0);
    if (n <= 0) return;
    dropped += static_cast<size_t>(n);
  }
}

// The Status a request that never reached the handler is refused with, or
// nullopt when there is no one to answer: the client closed or reset the
// connection, or the server is stopping.
std::optional<api::StatusError> RefusalFor(const beast::error_code& ec,
                                           const HttpServerOptions& options) {
  if (ec.category() !=
          http::make_error_code(http::error::end_of_stream).category() ||
      ec == http::error::end_of_stream) {
    return std::nullopt;
  }
  if (ec == http::error::body_limit) {
    // kube-apiserver's words (limitedReadBody).
    return api::StatusError::RequestEntityTooLarge(
        Cat("Request entity too large: limit is ", options.max_body_bytes));
  }
  if (ec == http::error::header_limit) {
    // Go's server answers 431 to oversized headers; no Status reason names
    // it.
    api::StatusError e;
    e.code = 431;
    e.message = Cat("request header fields too large: limit is ",
                    kMaxRequestHeaderBytes);
    return e;
  }
  if (ec == http::error::partial_message) {
    return api::StatusError::BadRequest(
        "the request ended before it was complete");
  }
  return api::StatusError::BadRequest(
      Cat("malformed HTTP request: ", ec.message()));
}

template <class Stream>
void ServeRequests(Stream& stream, HttpServer::Connection* conn, int fd,
                   const HttpServerOptions& options, const HttpHandler& handler,
                   const std::string& remote, const PeerSubject& peer,
                   std::atomic<bool>* stopping) {
  beast::flat_buffer buffer;
  while (!conn->cancelled.load() && !stopping->load()) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(options.max_body_bytes);
    parser.header_limit(kMaxRequestHeaderBytes);
    beast::error_code ec;
    http::read(stream, buffer, parser, ec);
    if (ec) {
      std::optional<api::StatusError> refusal = RefusalFor(ec, options);
      if (!refusal.has_value() || stopping->load() || conn->cancelled.load()) {
        return;
      }
      VLOG(2) << "request refused code=" << refusal->code
              << " error=" << ec.message() << " remote=" << remote;
      http::response<http::string_body> res;
      res.version(11);
      res.result(static_cast<unsigned>(refusal->code));
      res.set(http::field::content_type, "application/json");
      res.set(http::field::cache_control, "no-cache, private");
      res.body() = refusal->ToJson();
      res.keep_alive(false);
      res.prepare_payload();
      http::write(stream, res, ec);
      if (!ec) LingeringClose(fd, conn);
      return;
    }
    http::request<http::string_body> req = parser.release();
    HttpRequest r;
    r.method = std::string(req.method_string());
    r.target = std::string(req.target());
    ParseTarget(r.target, &r);
    for (const auto& field : req) {
      std::string name(field.name_string());
      for (char& c : name) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
      const beast::string_view value = field.value();
      auto [it, inserted] =
          r.headers.try_emplace(std::move(name), value.data(), value.size());
      if (!inserted) {
        it->second += ',';
        it->second.append(value.data(), value.size());
      }
    }
    r.body = std::move(req.body());
    r.remote_address = remote;
    r.client_cert_cn = peer.cn;
    r.client_cert_organizations = peer.organizations;
    Exchange<Stream> exchange(&stream, &buffer, conn, req.keep_alive(),
                              req.version(), stopping);
    exchange.set_fd(fd);
    handler(r, &exchange);
    if (!exchange.responded()) {
      HttpResponse res;
      res.status = 500;
      res.body =
          R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"no response","reason":"InternalError","code":500})";
      exchange.Respond(std::move(res));
    }
    if (exchange.broken() || !req.keep_alive()) return;
  }
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : options_(std::move(options)),
      handler_(std::move(handler)),
      impl_(std::make_unique<Impl>()) {}

HttpServer::~HttpServer() { Stop(); }

absl::Status HttpServer::Start() {
  beast::error_code ec;
  if (!options_.tls_cert_file.empty() || !options_.tls_key_file.empty()) {
    impl_->ssl_ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
    impl_->ssl_ctx->set_options(ssl::context::default_workarounds |
                                ssl::context::no_sslv2 |
                                ssl::context::no_sslv3);
    impl_->ssl_ctx->use_certificate_chain_file(options_.tls_cert_file, ec);
    if (ec) {
      return absl::InvalidArgumentError(Cat("cannot load TLS certificate ",
                                            options_.tls_cert_file, ": ",
                                            ec.message()));
    }
    impl_->ssl_ctx->use_private_key_file(options_.tls_key_file,
                                         ssl::context::pem, ec);
    if (ec) {
      return absl::InvalidArgumentError(Cat(
          "cannot load TLS key ", options_.tls_key_file, ": ", ec.message()));
    }
    if (!options_.tls_client_ca_file.empty()) {
      impl_->ssl_ctx->load_verify_file(options_.tls_client_ca_file, ec);
      STACK_OF(X509_NAME)* names =
          SSL_load_client_CA_file(options_.tls_client_ca_file.c_str());
      if (ec || names == nullptr) {
        if (names != nullptr) sk_X509_NAME_pop_free(names, X509_NAME_free);
        return absl::InvalidArgumentError(
            Cat("cannot load TLS client CA ", options_.tls_client_ca_file, ": ",
                ec ? ec.message() : "no certificate"));
      }
      SSL_CTX_set_client_CA_list(impl_->ssl_ctx->native_handle(), names);
      // Without FAIL_IF_NO_PEER_CERT: a client certificate is optional.
      impl_->ssl_ctx->set_verify_mode(ssl::verify_peer);
    }
  }
  net::ip::address address = net::ip::make_address(options_.address, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        Cat("bad bind address ", options_.address, ": ", ec.message()));
  }
  tcp::endpoint endpoint(address, static_cast<unsigned short>(options_.port));
  impl_->acceptor = std::make_unique<tcp::acceptor>(impl_->ioc);
  impl_->acceptor->open(endpoint.protocol(), ec);
  if (!ec)
    impl_->acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor->bind(endpoint, ec);
  if (!ec)
    impl_->acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(Cat("cannot listen on ", options_.address,
                                      ":", options_.port, ": ", ec.message()));
  }
  port_ = impl_->acceptor->local_endpoint(ec).port();
  auto thread =
      StartThread([this] { AcceptLoop(); }, options_.thread_stack_bytes);
  if (!thread.ok()) return thread.status();
  accept_thread_ = *thread;
  started_ = true;
  return absl::OkStatus();
}

void HttpServer::AcceptLoop() {
  while (!stopping_.load()) {
    auto socket = std::make_shared<tcp::socket>(impl_->ioc);
    beast::error_code ec;
    impl_->acceptor->accept(*socket, ec);
    if (stopping_.load()) return;
    if (ec) {
      LOG(WARNING) << "accept failed: " << ec.message();
      usleep(10000);
      continue;
    }
    Reap(false);
    socket->set_option(tcp::no_delay(true), ec);
    std::string remote;
    auto ep = socket->remote_endpoint(ec);
    if (!ec) remote = ep.address().to_string();
    auto conn = std::make_shared<Connection>();
    {
      MutexLock l(&mu_);
      conn->fd = socket->native_handle();
      connections_.push_back(conn);
    }
    int fd = socket->native_handle();
    auto thread = StartThread(
        [this, conn, socket, fd, remote] {
          if (impl_->ssl_ctx != nullptr) {
            beast::ssl_stream<tcp::socket&> stream(*socket, *impl_->ssl_ctx);
            beast::error_code hec;
            stream.handshake(ssl::stream_base::server, hec);
            if (!hec) {
              ServeRequests(stream, conn.get(), fd, options_, handler_, remote,
                            PeerSubjectOf(stream.native_handle()), &stopping_);
            }
          } else {
            ServeRequests(*socket, conn.get(), fd, options_, handler_, remote,
                          PeerSubject(), &stopping_);
          }
          {
            MutexLock l(&mu_);
            conn->fd = -1;
          }
          beast::error_code cec;
          socket->shutdown(tcp::socket::shutdown_both, cec);
          socket->close(cec);
          conn->done.store(true);
        },
        options_.thread_stack_bytes);
    if (!thread.ok()) {
      LOG(WARNING) << "cannot serve connection: " << thread.status();
      MutexLock l(&mu_);
      conn->fd = -1;
      conn->done.store(true);
      continue;
    }
    MutexLock l(&mu_);
    conn->thread = *thread;
    conn->has_thread = true;
  }
}

void HttpServer::Reap(bool all) {
  std::vector<std::shared_ptr<Connection>> finished;
  {
    MutexLock l(&mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      if ((all || (*it)->done.load()) && (*it)->has_thread) {
        finished.push_back(*it);
        it = connections_.erase(it);
      } else if (all && !(*it)->has_thread) {
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& c : finished) pthread_join(c->thread, nullptr);
}

void HttpServer::CancelConnections() {
  {
    MutexLock l(&mu_);
    for (auto& c : connections_) {
      c->cancelled.store(true);
      if (c->fd >= 0) ::shutdown(c->fd, SHUT_RDWR);
    }
  }
  if (options_.on_cancel) options_.on_cancel();
}

void HttpServer::DropConnections() {
  CancelConnections();
  Reap(false);
}

size_t HttpServer::ConnectionCount() const {
  MutexLock l(&mu_);
  size_t n = 0;
  for (const auto& c : connections_) {
    if (!c->done.load()) ++n;
  }
  return n;
}

void HttpServer::Stop() {
  if (!started_) return;
  started_ = false;
  stopping_.store(true);
  ::shutdown(impl_->acceptor->native_handle(), SHUT_RDWR);
  pthread_join(accept_thread_, nullptr);
  beast::error_code ec;
  impl_->acceptor->close(ec);
  CancelConnections();
  Reap(true);
}

}  // namespace apiserver
}  // namespace kcr
