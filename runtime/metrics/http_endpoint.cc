#include "runtime/metrics/http_endpoint.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/string_view.h"
#include "glog/logging.h"

namespace kcr::metrics {
namespace {

constexpr size_t kMaxHeadBytes = 16 << 10;

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "";
  }
}

// Splits "host:port", ":port" or "[v6]:port".
absl::Status SplitHostPort(const std::string& address, std::string* host,
                           std::string* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bind address \"", address, "\" has no port (want host:port)"));
  }
  *host = address.substr(0, colon);
  *port = address.substr(colon + 1);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  int n;
  if (!absl::SimpleAtoi(*port, &n) || n < 0 || n > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bind address \"", address, "\" has an invalid port \"", *port, "\""));
  }
  return absl::OkStatus();
}

// Waits until `fd` is ready for `events` or `stop_fd` is readable; false
// on stop, timeout or error.
bool WaitReady(int fd, short events, int stop_fd, absl::Time deadline) {
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    pollfd fds[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    const int ms = static_cast<int>(absl::ToInt64Milliseconds(left)) + 1;
    const int n = poll(fds, 2, ms);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (fds[1].revents != 0) return false;
    return true;
  }
}

// OpenSSL's reason for the last failure on this thread ("" for none).
std::string TlsError() {
  std::string out;
  unsigned long e;
  while ((e = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

// A TLS server context with the certificate chain and key of `tls`.
absl::StatusOr<SSL_CTX*> NewTlsContext(const HttpTls& tls) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    return absl::InternalError(absl::StrCat("TLS: ", TlsError()));
  }
  auto fail = [&](absl::string_view what) {
    SSL_CTX_free(ctx);
    const std::string why = TlsError();
    return absl::InvalidArgumentError(
        absl::StrCat("TLS: ", what, why.empty() ? "" : ": ", why));
  };
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  std::unique_ptr<BIO, decltype(&BIO_free)> certs(
      BIO_new_mem_buf(tls.cert_pem.data(),
                      static_cast<int>(tls.cert_pem.size())),
      BIO_free);
  X509* leaf = PEM_read_bio_X509(certs.get(), nullptr, nullptr, nullptr);
  if (leaf == nullptr) return fail("no certificate in the certificate PEM");
  const int used = SSL_CTX_use_certificate(ctx, leaf);
  X509_free(leaf);
  if (used != 1) return fail("the certificate is not usable");
  // The rest of the file is the chain up to (not necessarily including)
  // the root.
  while (X509* more =
             PEM_read_bio_X509(certs.get(), nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx, more) != 1) {
      X509_free(more);
      return fail("a chain certificate is not usable");
    }
  }
  ERR_clear_error();  // the loop ends on "no start line"
  std::unique_ptr<BIO, decltype(&BIO_free)> key(
      BIO_new_mem_buf(tls.key_pem.data(), static_cast<int>(tls.key_pem.size())),
      BIO_free);
  EVP_PKEY* pkey =
      PEM_read_bio_PrivateKey(key.get(), nullptr, nullptr, nullptr);
  if (pkey == nullptr) return fail("no private key in the key PEM");
  const int key_used = SSL_CTX_use_PrivateKey(ctx, pkey);
  EVP_PKEY_free(pkey);
  if (key_used != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    return fail("the private key does not match the certificate");
  }
  return ctx;
}

// One accepted connection, plain or TLS, on a non-blocking socket: every
// wait also watches the stop pipe and a deadline.
class Connection {
 public:
  Connection(int fd, SSL* ssl, int stop_fd)
      : fd_(fd), ssl_(ssl), stop_fd_(stop_fd) {}
  ~Connection() {
    if (ssl_ != nullptr) SSL_free(ssl_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The TLS handshake (nothing for plain HTTP); false when it failed.
  bool Handshake(absl::Time deadline) {
    if (ssl_ == nullptr) return true;
    while (true) {
      const int rc = SSL_accept(ssl_);
      if (rc == 1) return true;
      if (!Wait(rc, deadline)) {
        VLOG(2) << "TLS handshake failed: " << TlsError();
        return false;
      }
    }
  }

  // Bytes read (> 0), 0 when the peer closed, -1 on timeout, stop or error.
  ssize_t Read(char* buf, size_t size, absl::Time deadline) {
    while (true) {
      if (ssl_ != nullptr) {
        const int n = SSL_read(ssl_, buf, static_cast<int>(size));
        if (n > 0) return n;
        if (SSL_get_error(ssl_, n) == SSL_ERROR_ZERO_RETURN) return 0;
        if (!Wait(n, deadline)) return -1;
        continue;
      }
      const ssize_t n = recv(fd_, buf, size, 0);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
          WaitReady(fd_, POLLIN, stop_fd_, deadline)) {
        continue;
      }
      return -1;
    }
  }

  bool WriteAll(std::string_view data, absl::Time deadline) {
    while (!data.empty()) {
      if (ssl_ != nullptr) {
        const int n =
            SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
        if (n > 0) {
          data.remove_prefix(static_cast<size_t>(n));
        } else if (!Wait(n, deadline)) {
          return false;
        }
        continue;
      }
      const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
          WaitReady(fd_, POLLOUT, stop_fd_, deadline)) {
        continue;
      }
      return false;
    }
    return true;
  }

  // Ends the sending side: a TLS close_notify, then a TCP half-close, so
  // the client reads the whole answer before the socket goes.
  void Finish() {
    if (ssl_ != nullptr) SSL_shutdown(ssl_);
    shutdown(fd_, SHUT_WR);
  }

 private:
  // After a TLS call returned `rc` <= 0: waits for what it wants; false
  // when it failed for good, timed out or the server stops.
  bool Wait(int rc, absl::Time deadline) {
    switch (SSL_get_error(ssl_, rc)) {
      case SSL_ERROR_WANT_READ:
        return WaitReady(fd_, POLLIN, stop_fd_, deadline);
      case SSL_ERROR_WANT_WRITE:
        return WaitReady(fd_, POLLOUT, stop_fd_, deadline);
      default:
        return false;
    }
  }

  const int fd_;
  SSL* const ssl_;
  const int stop_fd_;
};

// The value of header `name` (lower case) in a request head, or "".
std::string HeaderValue(absl::string_view head, absl::string_view name) {
  size_t start = head.find("\r\n");
  while (start != absl::string_view::npos) {
    start += 2;
    const size_t end = head.find("\r\n", start);
    const absl::string_view line = head.substr(
        start,
        end == absl::string_view::npos ? absl::string_view::npos : end - start);
    const size_t colon = line.find(':');
    if (colon != absl::string_view::npos &&
        absl::EqualsIgnoreCase(line.substr(0, colon), name)) {
      return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
    start = end;
  }
  return "";
}

}  // namespace

bool HttpGet::HasQueryParam(std::string_view name) const {
  for (absl::string_view param : absl::StrSplit(query, '&')) {
    if (ToStd(param) == name) return true;
    if (param.size() > name.size() &&
        ToStd(param.substr(0, name.size())) == name &&
        param[name.size()] == '=') {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Create(
    HttpEndpointOptions options) {
  std::string host, port;
  if (absl::Status s = SplitHostPort(options.bind_address, &host, &port);
      !s.ok()) {
    return s;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(),
                             port.c_str(), &hints, &found);
  if (rc != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bind address \"", options.bind_address, "\": ", gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> addresses(found, freeaddrinfo);
  TlsContext tls;
  if (options.tls.has_value()) {
    absl::StatusOr<SSL_CTX*> ctx = NewTlsContext(*options.tls);
    if (!ctx.ok()) return ctx.status();
    tls.reset(*ctx);
  }
  // With no host, try the IPv6 wildcard first (which also takes IPv4 where
  // the system allows), as Go's net.Listen(":port") does.
  std::vector<const addrinfo*> candidates;
  for (const addrinfo* a = addresses.get(); a != nullptr; a = a->ai_next) {
    if (host.empty() && a->ai_family == AF_INET6) {
      candidates.insert(candidates.begin(), a);
    } else {
      candidates.push_back(a);
    }
  }
  std::string error = "no address";
  for (const addrinfo* a : candidates) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      error = std::strerror(errno);
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (a->ai_family == AF_INET6 && host.empty()) {
      const int zero = 0;
      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    }
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 64) != 0) {
      error = std::strerror(errno);
      close(fd);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    int bound_port = 0;
    if (bound.ss_family == AF_INET6) {
      bound_port = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    } else {
      bound_port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    }
    const std::string shown = host.find(':') != std::string::npos
                                  ? absl::StrCat("[", host, "]")
                                  : host;
    return std::unique_ptr<HttpEndpoint>(
        new HttpEndpoint(std::move(options), fd, bound_port,
                         absl::StrCat(shown, ":", bound_port), std::move(tls)));
  }
  return absl::UnavailableError(
      absl::StrCat("cannot listen on \"", options.bind_address, "\": ", error));
}

void HttpEndpoint::TlsContextDeleter::operator()(ssl_ctx_st* ctx) const {
  SSL_CTX_free(ctx);
}

HttpEndpoint::HttpEndpoint(HttpEndpointOptions options, int listen_fd, int port,
                           std::string address, TlsContext tls)
    : options_(std::move(options)),
      listen_fd_(listen_fd),
      port_(port),
      address_(std::move(address)),
      tls_(std::move(tls)) {
  PCHECK(pipe2(stop_pipe_, O_CLOEXEC | O_NONBLOCK) == 0);
  fcntl(listen_fd_, F_SETFL, fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
}

HttpEndpoint::~HttpEndpoint() {
  Stop();
  close(listen_fd_);
  close(stop_pipe_[0]);
  close(stop_pipe_[1]);
}

void HttpEndpoint::Handle(std::string path, Handler handler) {
  {
    MutexLock lock(&mu_);
    CHECK(!started_) << "HttpEndpoint::Handle after Start";
  }
  handlers_[std::move(path)] = std::move(handler);
}

void HttpEndpoint::Start() {
  {
    MutexLock lock(&mu_);
    CHECK(!started_) << "HttpEndpoint::Start twice";
    started_ = true;
    if (stopping_) return;
  }
  acceptor_ = std::thread([this] { AcceptLoop(); });
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    workers_.emplace_back([this] { WorkLoop(); });
  }
}

void HttpEndpoint::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    pending_ready_.SignalAll();
  }
  const char byte = 0;
  (void)!write(stop_pipe_[1], &byte, 1);
  if (acceptor_.joinable()) acceptor_.join();
  for (std::thread& t : workers_) t.join();
  MutexLock lock(&mu_);
  for (int fd : pending_) close(fd);
  pending_.clear();
}

void HttpEndpoint::AcceptLoop() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    const int n = poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || fds[1].revents != 0) return;
    const int fd =
        accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
          errno != ECONNABORTED) {
        PLOG(WARNING) << "accept on " << address_;
        // Out of descriptors, say: give the process a moment.
        absl::SleepFor(absl::Milliseconds(50));
      }
      continue;
    }
    MutexLock lock(&mu_);
    if (stopping_) {
      close(fd);
      return;
    }
    if (static_cast<int>(pending_.size()) >= options_.max_pending) {
      close(fd);
      continue;
    }
    pending_.push_back(fd);
    pending_ready_.Signal();
  }
}

void HttpEndpoint::WorkLoop() {
  while (true) {
    int fd;
    {
      MutexLock lock(&mu_);
      while (pending_.empty() && !stopping_) pending_ready_.Wait(&mu_);
      if (stopping_) return;
      fd = pending_.front();
      pending_.pop_front();
    }
    Serve(fd);
    close(fd);
  }
}

void HttpEndpoint::Serve(int fd) {
  const absl::Time deadline = absl::Now() + options_.read_timeout;
  SSL* ssl = nullptr;
  if (tls_ != nullptr) {
    ssl = SSL_new(tls_.get());
    if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) {
      if (ssl != nullptr) SSL_free(ssl);
      return;
    }
  }
  Connection conn(fd, ssl, stop_pipe_[0]);
  // A client that cannot finish a handshake (plain HTTP to the TLS port,
  // say) is dropped.
  if (!conn.Handshake(deadline)) return;
  std::string head;
  size_t end = std::string::npos;
  char buf[4096];
  HttpReply reply;
  bool head_only = false;
  while (end == std::string::npos) {
    if (head.size() > kMaxHeadBytes) {
      reply = {431, "text/plain; charset=utf-8", "request head too large\n"};
      break;
    }
    const ssize_t n = conn.Read(buf, sizeof(buf), deadline);
    if (n > 0) {
      head.append(buf, static_cast<size_t>(n));
      end = head.find("\r\n\r\n");
      continue;
    }
    // Closed before a whole head, timed out, stopped or broken: nothing
    // worth answering.
    return;
  }
  if (end != std::string::npos) {
    const absl::string_view line =
        absl::string_view(head).substr(0, head.find("\r\n"));
    std::vector<absl::string_view> parts =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (parts.size() != 3 || parts[1].empty() || parts[1][0] != '/' ||
        parts[2].substr(0, 5) != "HTTP/") {
      reply = {400, "text/plain; charset=utf-8", "malformed request line\n"};
    } else if (parts[0] != "GET" && parts[0] != "HEAD") {
      reply = {405, "text/plain; charset=utf-8", "only GET and HEAD\n"};
    } else {
      HttpGet get;
      const absl::string_view target = parts[1];
      const size_t q = target.find('?');
      get.path = std::string(target.substr(0, q));
      if (q != absl::string_view::npos)
        get.query = std::string(target.substr(q + 1));
      get.head = head_only = parts[0] == "HEAD";
      get.authorization =
          HeaderValue(absl::string_view(head).substr(0, end), "authorization");
      reply = Dispatch(get);
    }
  }
  std::string out = absl::StrCat(
      "HTTP/1.1 ", reply.status, " ", ReasonPhrase(reply.status),
      "\r\nContent-Type: ", reply.content_type,
      "\r\nContent-Length: ", reply.body.size(),
      "\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n");
  if (!head_only) out += reply.body;
  conn.WriteAll(out, absl::Now() + options_.read_timeout);
  // Let the client read the answer before the close resets the socket
  // (it may still be sending a body we ignore).
  conn.Finish();
}

HttpReply HttpEndpoint::Dispatch(const HttpGet& get) const {
  auto exact = handlers_.find(get.path);
  if (exact != handlers_.end()) return exact->second(get);
  // The longest registered prefix ending in '/'.
  const Handler* best = nullptr;
  size_t best_len = 0;
  for (const auto& [path, handler] : handlers_) {
    if (!path.empty() && path.back() == '/' && path.size() > best_len &&
        get.path.compare(0, path.size(), path) == 0) {
      best = &handler;
      best_len = path.size();
    }
  }
  if (best != nullptr) return (*best)(get);
  return {404, "text/plain; charset=utf-8", "404 page not found\n"};
}

}  // namespace kcr::metrics
