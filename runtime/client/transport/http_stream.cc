#include "runtime/client/transport/http_stream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"

namespace kcr::client::transport {
namespace {

// How much one read of the header section asks for.
constexpr size_t kHeadReadSize = 16 << 10;
// The longest chunk-size line (extensions included) accepted.
constexpr size_t kMaxChunkLineBytes = 4 << 10;

std::string Errno(int err) { return std::strerror(err); }

bool IsIpLiteral(const std::string& host) {
  in6_addr addr6;
  in_addr addr4;
  return inet_pton(AF_INET, host.c_str(), &addr4) == 1 ||
         inet_pton(AF_INET6, host.c_str(), &addr6) == 1;
}

// OpenSSL's queued errors, oldest first, as one line; `fallback` if none.
std::string SslErrors(const char* fallback) {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(e);
    absl::StrAppend(&out, out.empty() ? "" : "; ",
                    reason != nullptr ? reason : "unknown TLS error");
  }
  return out.empty() ? fallback : out;
}

// OpenSSL writes with send(2) without MSG_NOSIGNAL: a peer that has gone
// would kill the process with SIGPIPE. While alive, this thread blocks
// SIGPIPE and takes back one raised meanwhile.
class BlockSigpipe {
 public:
  BlockSigpipe() {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old_);
  }
  ~BlockSigpipe() {
    if (!was_pending_) {
      sigset_t pipe_only;
      sigemptyset(&pipe_only);
      sigaddset(&pipe_only, SIGPIPE);
      const timespec zero = {0, 0};
      while (sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t old_;
  bool was_pending_ = false;
};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::Status Malformed(absl::string_view what) {
  return absl::UnavailableError(
      absl::StrCat("malformed HTTP response: ", what));
}

}  // namespace

HttpStream::HttpStream(std::string host, std::string port,
                       std::string path_prefix, std::string verify_name,
                       bool tls, SSL_CTX* ctx)
    : host_(std::move(host)),
      port_(std::move(port)),
      path_prefix_(std::move(path_prefix)),
      verify_name_(std::move(verify_name)),
      tls_(tls),
      ssl_ctx_(ctx),
      cancel_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

HttpStream::~HttpStream() {
  // No close_notify: the server learns of the end from the closed socket,
  // and a write here could block on a peer that stopped reading.
  if (ssl_ != nullptr) SSL_free(ssl_);
  if (fd_ >= 0) close(fd_);
  if (cancel_fd_ >= 0) close(cancel_fd_);
  if (ssl_ctx_ != nullptr) SSL_CTX_free(ssl_ctx_);
}

void HttpStream::Cancel() {
  cancelled_.store(true, std::memory_order_release);
  const uint64_t one = 1;
  // Failure means the counter is already set: the wake-up stands.
  (void)!write(cancel_fd_, &one, sizeof(one));
}

absl::Status HttpStream::CancelledOr(absl::Status other) const {
  if (cancelled_.load(std::memory_order_acquire)) {
    return absl::CancelledError("request cancelled");
  }
  return other;
}

absl::Status HttpStream::WaitFor(Wait what, absl::Time deadline) {
  while (true) {
    if (cancelled_.load(std::memory_order_acquire)) {
      return absl::CancelledError("request cancelled");
    }
    pollfd fds[2];
    fds[0].fd = fd_;
    fds[0].events = what == Wait::kRead ? POLLIN : POLLOUT;
    fds[0].revents = 0;
    fds[1].fd = cancel_fd_;
    fds[1].events = POLLIN;
    fds[1].revents = 0;
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(
          absl::StrCat("no answer from ", host_, ":", port_, " in time"));
    }
    const int64_t ms = std::min<int64_t>(
        INT_MAX,
        absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))));
    const int r = poll(fds, 2, static_cast<int>(ms));
    if (r < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("poll: ", Errno(errno)));
    }
    if (fds[1].revents != 0) {
      return absl::CancelledError("request cancelled");
    }
    if (fds[0].revents != 0) return absl::OkStatus();
  }
}

absl::Status HttpStream::Connect(absl::Time deadline) {
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int r = getaddrinfo(host_.c_str(), port_.c_str(), &hints, &found);
      r != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve ", host_, ": ", gai_strerror(r)));
  }
  absl::Status last = absl::UnavailableError("no address");
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
               a->ai_protocol);
    if (fd < 0) {
      last = absl::UnavailableError(absl::StrCat("socket: ", Errno(errno)));
      continue;
    }
    fd_ = fd;
    int err = 0;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        absl::Status ready = WaitFor(Wait::kWrite, deadline);
        if (!ready.ok()) {
          freeaddrinfo(found);
          return ready;
        }
        socklen_t len = sizeof(err);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      }
    }
    if (err == 0) {
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      freeaddrinfo(found);
      return absl::OkStatus();
    }
    close(fd);
    fd_ = -1;
    last = absl::UnavailableError(
        absl::StrCat("connect to ", host_, ":", port_, ": ", Errno(err)));
  }
  freeaddrinfo(found);
  return last;
}

absl::Status HttpStream::Handshake(absl::Time deadline) {
  ERR_clear_error();
  ssl_ = SSL_new(ssl_ctx_);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) {
    return absl::UnavailableError(
        absl::StrCat("TLS handshake: ", SslErrors("cannot set up TLS")));
  }
  if (!IsIpLiteral(verify_name_)) {
    SSL_set_tlsext_host_name(ssl_, verify_name_.c_str());
  }
  if (SSL_CTX_get_verify_mode(ssl_ctx_) != SSL_VERIFY_NONE) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
    const int ok =
        IsIpLiteral(verify_name_)
            ? X509_VERIFY_PARAM_set1_ip_asc(param, verify_name_.c_str())
            : X509_VERIFY_PARAM_set1_host(param, verify_name_.c_str(), 0);
    if (ok != 1) {
      return absl::UnavailableError(
          absl::StrCat("TLS handshake: cannot check the name ", verify_name_));
    }
  }
  while (true) {
    ERR_clear_error();
    int r;
    {
      BlockSigpipe no_sigpipe;
      r = SSL_connect(ssl_);
    }
    if (r == 1) return absl::OkStatus();
    const int err = SSL_get_error(ssl_, r);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      KCR_RETURN_IF_ERROR(WaitFor(
          err == SSL_ERROR_WANT_READ ? Wait::kRead : Wait::kWrite, deadline));
      continue;
    }
    std::string cause =
        SslErrors(err == SSL_ERROR_SYSCALL ? "connection closed by the server"
                                           : "TLS error");
    const long verified = SSL_get_verify_result(ssl_);
    if (verified != X509_V_OK) {
      absl::StrAppend(&cause, " (", X509_verify_cert_error_string(verified),
                      ")");
    }
    return CancelledOr(
        absl::UnavailableError(absl::StrCat("TLS handshake: ", cause)));
  }
}

absl::Status HttpStream::WriteAll(absl::string_view data, absl::Time deadline) {
  size_t done = 0;
  while (done < data.size()) {
    if (tls_) {
      ERR_clear_error();
      int r;
      {
        BlockSigpipe no_sigpipe;
        r = SSL_write(
            ssl_, data.data() + done,
            static_cast<int>(std::min<size_t>(data.size() - done, INT_MAX)));
      }
      if (r > 0) {
        done += static_cast<size_t>(r);
        wrote_request_ = true;
        continue;
      }
      const int err = SSL_get_error(ssl_, r);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
        KCR_RETURN_IF_ERROR(WaitFor(
            err == SSL_ERROR_WANT_READ ? Wait::kRead : Wait::kWrite, deadline));
        continue;
      }
      return CancelledOr(absl::UnavailableError(absl::StrCat(
          "sending the request: ", SslErrors("connection closed"))));
    }
    const ssize_t r =
        send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (r >= 0) {
      done += static_cast<size_t>(r);
      wrote_request_ = wrote_request_ || r > 0;
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      KCR_RETURN_IF_ERROR(WaitFor(Wait::kWrite, deadline));
      continue;
    }
    return CancelledOr(absl::UnavailableError(
        absl::StrCat("sending the request: ", Errno(errno))));
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> HttpStream::ReadSome(char* data, size_t size,
                                            absl::Time deadline) {
  while (true) {
    if (cancelled_.load(std::memory_order_acquire)) {
      return absl::CancelledError("request cancelled");
    }
    if (tls_) {
      ERR_clear_error();
      const int r = SSL_read(ssl_, data,
                             static_cast<int>(std::min<size_t>(size, INT_MAX)));
      if (r > 0) return static_cast<size_t>(r);
      const int err = SSL_get_error(ssl_, r);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
        KCR_RETURN_IF_ERROR(WaitFor(
            err == SSL_ERROR_WANT_READ ? Wait::kRead : Wait::kWrite, deadline));
        continue;
      }
      if (err == SSL_ERROR_ZERO_RETURN) return 0;
      if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 && errno == 0) {
        return 0;  // closed without close_notify
      }
      const std::string cause = err == SSL_ERROR_SYSCALL && errno != 0
                                    ? Errno(errno)
                                    : SslErrors("connection broken");
      return CancelledOr(
          absl::UnavailableError(absl::StrCat("reading: ", cause)));
    }
    const ssize_t r = recv(fd_, data, size, 0);
    if (r >= 0) return static_cast<size_t>(r);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      KCR_RETURN_IF_ERROR(WaitFor(Wait::kRead, deadline));
      continue;
    }
    return CancelledOr(
        absl::UnavailableError(absl::StrCat("reading: ", Errno(errno))));
  }
}

absl::Status HttpStream::Start(const StreamRequest& request) {
  if (cancel_fd_ < 0) {
    return absl::UnavailableError(absl::StrCat("eventfd: ", Errno(errno)));
  }
  idle_timeout_ = request.timeout;
  const absl::Time deadline = absl::Now() + request.timeout;
  reused_ = fd_ >= 0;
  answer_started_ = false;
  wrote_request_ = false;
  if (reused_) {
    ResetAnswer();
  } else {
    KCR_RETURN_IF_ERROR(Connect(deadline));
    if (tls_) KCR_RETURN_IF_ERROR(Handshake(deadline));
  }

  std::string head = absl::StrCat(request.method, " ", path_prefix_,
                                  request.target, " HTTP/1.1\r\n");
  bool has_host = false;
  for (const auto& [name, value] : request.headers) {
    has_host = has_host || absl::EqualsIgnoreCase(name, "host");
  }
  if (!has_host) {
    const bool default_port = port_ == (tls_ ? "443" : "80");
    const bool ipv6 = host_.find(':') != std::string::npos;
    absl::StrAppend(&head, "Host: ", ipv6 ? "[" : "", host_, ipv6 ? "]" : "",
                    default_port ? "" : ":", default_port ? "" : port_, "\r\n");
  }
  for (const auto& [name, value] : request.headers) {
    absl::StrAppend(&head, name, ": ", value, "\r\n");
  }
  if (!request.body.empty() || request.method == "POST" ||
      request.method == "PUT" || request.method == "PATCH") {
    absl::StrAppend(&head, "Content-Length: ", request.body.size(), "\r\n");
  }
  head += "\r\n";
  // One write for head and body: one segment for a small request.
  head.append(request.body.data(), request.body.size());
  KCR_RETURN_IF_ERROR(WriteAll(head, deadline));
  return ReadHead(deadline);
}

void HttpStream::ResetAnswer() {
  status_code_ = 0;
  headers_.clear();
  pending_.clear();
  pending_pos_ = 0;
  framing_ = Framing::kNone;
  remaining_ = 0;
  chunk_state_ = ChunkState::kSize;
  size_digits_ = 0;
  line_bytes_ = 0;
  body_ended_ = false;
  after_body_ = false;
  keep_alive_ = false;
}

bool HttpStream::Reusable() const {
  return fd_ >= 0 && body_ended_ && keep_alive_ && !after_body_ &&
         pending_pos_ >= pending_.size() &&
         (framing_ == Framing::kLength || framing_ == Framing::kChunked ||
          framing_ == Framing::kNone) &&
         !cancelled_.load(std::memory_order_acquire);
}

bool HttpStream::IdleConnectionBroken() const {
  if (fd_ < 0) return true;
  if (tls_ && ssl_ != nullptr && SSL_pending(ssl_) > 0) return true;
  pollfd fd;
  fd.fd = fd_;
  fd.events = POLLIN;
  fd.revents = 0;
  const int r = poll(&fd, 1, 0);
  // Readable (a close, a reset, or bytes nobody asked for) or an error.
  return r != 0;
}

absl::Status HttpStream::ReadHead(absl::Time deadline) {
  std::string buffer;
  size_t scanned = 0;
  while (true) {
    // The end of the header section: an empty line (CRLF or a bare LF).
    size_t end = std::string::npos;
    size_t body = 0;
    for (size_t i = scanned; i < buffer.size(); ++i) {
      if (buffer[i] != '\n') continue;
      if (i >= 1 && buffer[i - 1] == '\n') {
        end = i - 1;
        body = i + 1;
        break;
      }
      if (i >= 2 && buffer[i - 1] == '\r' && buffer[i - 2] == '\n') {
        end = i - 2;
        body = i + 1;
        break;
      }
    }
    if (end == std::string::npos) {
      scanned = buffer.size();
      if (buffer.size() > kMaxHeaderBytes) {
        return absl::UnavailableError(
            absl::StrCat("malformed HTTP response: header section over ",
                         kMaxHeaderBytes, " bytes"));
      }
      const size_t old = buffer.size();
      buffer.resize(old + kHeadReadSize);
      absl::StatusOr<size_t> n =
          ReadSome(buffer.data() + old, kHeadReadSize, deadline);
      if (!n.ok()) return n.status();
      buffer.resize(old + *n);
      if (*n > 0) answer_started_ = true;
      if (*n == 0) {
        return absl::UnavailableError(
            buffer.empty()
                ? "connection closed by the server before an answer"
                : "connection closed by the server within the headers");
      }
      continue;
    }
    if (end > kMaxHeaderBytes) {
      return absl::UnavailableError(
          absl::StrCat("malformed HTTP response: header section over ",
                       kMaxHeaderBytes, " bytes"));
    }
    KCR_RETURN_IF_ERROR(ParseHead(absl::string_view(buffer.data(), end)));
    buffer.erase(0, body);
    scanned = 0;
    // An interim answer (100 Continue, 103 Early Hints): the real one
    // follows.
    if (status_code_ >= 100 && status_code_ < 200 && status_code_ != 101) {
      continue;
    }
    pending_ = std::move(buffer);
    pending_pos_ = 0;
    break;
  }
  // How the body ends (RFC 9112 section 6.3).
  if ((status_code_ >= 100 && status_code_ < 200) || status_code_ == 204 ||
      status_code_ == 304) {
    framing_ = Framing::kNone;
    return absl::OkStatus();
  }
  const std::string te = Header("transfer-encoding");
  if (!te.empty()) {
    std::vector<absl::string_view> codings = absl::StrSplit(te, ',');
    framing_ = absl::EqualsIgnoreCase(
                   absl::StripAsciiWhitespace(codings.back()), "chunked")
                   ? Framing::kChunked
                   : Framing::kClose;
    return absl::OkStatus();
  }
  bool has_length = false;
  for (const auto& [name, value] : headers_) {
    if (!absl::EqualsIgnoreCase(name, "content-length")) continue;
    uint64_t length = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(value), &length) ||
        absl::StripAsciiWhitespace(value).find_first_not_of("0123456789") !=
            absl::string_view::npos ||
        (has_length && length != remaining_)) {
      return Malformed(absl::StrCat("bad Content-Length \"", value, "\""));
    }
    has_length = true;
    remaining_ = length;
  }
  framing_ = has_length ? Framing::kLength : Framing::kClose;
  return absl::OkStatus();
}

absl::Status HttpStream::ParseHead(absl::string_view head) {
  headers_.clear();
  std::vector<absl::string_view> lines = absl::StrSplit(head, '\n');
  for (absl::string_view& line : lines) absl::ConsumeSuffix(&line, "\r");
  // HTTP/1.x SP 3DIGIT [SP reason]
  const absl::string_view status = lines[0];
  if (status.size() < 12 || !absl::StartsWith(status, "HTTP/1.") ||
      !absl::ascii_isdigit(status[7]) || status[8] != ' ' ||
      !absl::ascii_isdigit(status[9]) || !absl::ascii_isdigit(status[10]) ||
      !absl::ascii_isdigit(status[11]) ||
      (status.size() > 12 && status[12] != ' ')) {
    return Malformed(absl::StrCat(
        "bad status line \"", absl::CHexEscape(status.substr(0, 80)), "\""));
  }
  status_code_ =
      (status[9] - '0') * 100 + (status[10] - '0') * 10 + (status[11] - '0');
  keep_alive_ = status[7] == '1';
  for (size_t i = 1; i < lines.size(); ++i) {
    const absl::string_view line = lines[i];
    if (line.empty()) continue;
    if (line[0] == ' ' || line[0] == '\t') {
      // An obsolete folded line continues the previous value.
      if (headers_.empty()) return Malformed("header section starts folded");
      absl::StrAppend(&headers_.back().second, " ",
                      absl::StripAsciiWhitespace(line));
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos || colon == 0 ||
        line.substr(0, colon).find_first_of(" \t") != absl::string_view::npos) {
      return Malformed(absl::StrCat(
          "bad header line \"", absl::CHexEscape(line.substr(0, 80)), "\""));
    }
    headers_.emplace_back(
        std::string(line.substr(0, colon)),
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
    if (absl::EqualsIgnoreCase(headers_.back().first, "connection")) {
      for (absl::string_view token :
           absl::StrSplit(headers_.back().second, ',')) {
        if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(token),
                                   "close")) {
          keep_alive_ = false;
        }
      }
    }
  }
  return absl::OkStatus();
}

std::string HttpStream::Header(std::string_view name) const {
  const absl::string_view wanted(name.data(), name.size());
  for (const auto& [n, value] : headers_) {
    if (absl::EqualsIgnoreCase(n, wanted)) return value;
  }
  return "";
}

absl::StatusOr<size_t> HttpStream::ReadRaw(char* data, size_t size) {
  if (pending_pos_ < pending_.size()) {
    if (cancelled_.load(std::memory_order_acquire)) {
      return absl::CancelledError("request cancelled");
    }
    const size_t n = std::min(size, pending_.size() - pending_pos_);
    std::memcpy(data, pending_.data() + pending_pos_, n);
    pending_pos_ += n;
    if (pending_pos_ == pending_.size()) {
      pending_.clear();
      pending_.shrink_to_fit();
      pending_pos_ = 0;
    }
    return n;
  }
  return ReadSome(data, size, absl::Now() + idle_timeout_);
}

absl::StatusOr<size_t> HttpStream::Dechunk(char* data, size_t n) {
  size_t in = 0;
  size_t out = 0;
  while (in < n) {
    switch (chunk_state_) {
      case ChunkState::kData: {
        const size_t take =
            static_cast<size_t>(std::min<uint64_t>(remaining_, n - in));
        if (out != in) std::memmove(data + out, data + in, take);
        out += take;
        in += take;
        remaining_ -= take;
        if (remaining_ == 0) {
          chunk_state_ = ChunkState::kDataEnd;
          size_digits_ = 0;
        }
        break;
      }
      case ChunkState::kSize: {
        const char c = data[in++];
        const int v = HexValue(c);
        if (v >= 0) {
          if (size_digits_ >= 15) return Malformed("chunk size too large");
          remaining_ = remaining_ * 16 + static_cast<uint64_t>(v);
          ++size_digits_;
          break;
        }
        if (size_digits_ == 0) {
          return Malformed(absl::StrCat("bad chunk size line at \"",
                                        absl::CHexEscape(std::string(1, c)),
                                        "\""));
        }
        if (c == '\n') {
          chunk_state_ =
              remaining_ == 0 ? ChunkState::kTrailerLine : ChunkState::kData;
          size_digits_ = 0;
        } else if (c == ';' || c == ' ' || c == '\t' || c == '\r') {
          chunk_state_ = ChunkState::kExtension;
        } else {
          return Malformed(absl::StrCat("bad chunk size line at \"",
                                        absl::CHexEscape(std::string(1, c)),
                                        "\""));
        }
        break;
      }
      case ChunkState::kExtension: {
        // Extensions carry nothing kcr uses: skipped, within a bound.
        const void* nl = std::memchr(data + in, '\n', n - in);
        const size_t skip =
            nl == nullptr ? n - in : static_cast<const char*>(nl) - (data + in);
        line_bytes_ += skip;
        if (line_bytes_ > kMaxChunkLineBytes) {
          return Malformed("chunk size line too long");
        }
        in += skip;
        if (nl != nullptr) {
          ++in;
          line_bytes_ = 0;
          size_digits_ = 0;
          chunk_state_ =
              remaining_ == 0 ? ChunkState::kTrailerLine : ChunkState::kData;
        }
        break;
      }
      case ChunkState::kDataEnd: {
        const char c = data[in++];
        if (c == '\r' && size_digits_ == 0) {
          size_digits_ = 1;  // the CR seen
        } else if (c == '\n') {
          chunk_state_ = ChunkState::kSize;
          size_digits_ = 0;
          remaining_ = 0;
        } else {
          return Malformed("chunk data not followed by CRLF");
        }
        break;
      }
      case ChunkState::kTrailerLine: {
        const char c = data[in++];
        if (c == '\n') {
          chunk_state_ = ChunkState::kDone;
        } else if (c != '\r') {
          chunk_state_ = ChunkState::kTrailer;
          ++line_bytes_;
        }
        break;
      }
      case ChunkState::kTrailer: {
        // Trailers are read past, within the bound of a header section.
        const void* nl = std::memchr(data + in, '\n', n - in);
        const size_t skip =
            nl == nullptr ? n - in : static_cast<const char*>(nl) - (data + in);
        line_bytes_ += skip;
        if (line_bytes_ > kMaxHeaderBytes) {
          return Malformed("trailer section too long");
        }
        in += skip;
        if (nl != nullptr) {
          ++in;
          chunk_state_ = ChunkState::kTrailerLine;
        }
        break;
      }
      case ChunkState::kDone:
        after_body_ = true;
        return out;  // whatever follows the body is not read
    }
  }
  return out;
}

absl::StatusOr<size_t> HttpStream::Read(char* data, size_t size) {
  if (size == 0) return 0;
  if (body_ended_) return 0;
  switch (framing_) {
    case Framing::kNone:
      body_ended_ = true;
      return 0;
    case Framing::kLength: {
      if (remaining_ == 0) {
        body_ended_ = true;
        return 0;
      }
      KCR_ASSIGN_OR_RETURN(
          size_t n, ReadRaw(data, static_cast<size_t>(
                                      std::min<uint64_t>(size, remaining_))));
      if (n == 0) {
        return absl::UnavailableError(
            absl::StrCat("connection closed by the server with ", remaining_,
                         " bytes of the body unread"));
      }
      remaining_ -= n;
      return n;
    }
    case Framing::kClose: {
      KCR_ASSIGN_OR_RETURN(size_t n, ReadRaw(data, size));
      if (n == 0) body_ended_ = true;
      return n;
    }
    case Framing::kChunked:
      while (true) {
        if (chunk_state_ == ChunkState::kDone) {
          body_ended_ = true;
          return 0;
        }
        KCR_ASSIGN_OR_RETURN(size_t n, ReadRaw(data, size));
        if (n == 0) {
          return absl::UnavailableError(
              "connection closed by the server before the end of the "
              "chunked body");
        }
        KCR_ASSIGN_OR_RETURN(size_t out, Dechunk(data, n));
        if (out > 0) return out;
      }
  }
  return 0;
}

absl::StatusOr<std::string> HttpStream::ReadAll(size_t limit) {
  std::string out;
  char buffer[16 << 10];
  while (out.size() < limit) {
    KCR_ASSIGN_OR_RETURN(
        size_t n, Read(buffer, std::min(sizeof(buffer), limit - out.size())));
    if (n == 0) break;
    out.append(buffer, n);
  }
  return out;
}

// --- StreamDialer ---

absl::StatusOr<std::unique_ptr<StreamDialer>> StreamDialer::Create(
    const Config& config, std::shared_ptr<TlsMaterial> tls) {
  std::unique_ptr<StreamDialer> d(new StreamDialer(config, std::move(tls)));
  absl::string_view rest = config.host;
  if (absl::ConsumePrefix(&rest, "https://")) {
    d->tls_ = true;
  } else if (!absl::ConsumePrefix(&rest, "http://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("config: host \"", config.host,
                     "\" must start with https:// or http://"));
  }
  const size_t slash = rest.find_first_of("/?#");
  absl::string_view authority = rest.substr(0, slash);
  absl::string_view path =
      slash == absl::string_view::npos ? "" : rest.substr(slash);
  path = path.substr(0, path.find_first_of("?#"));
  while (absl::ConsumeSuffix(&path, "/")) {
  }
  d->path_prefix_ = std::string(path);
  if (const size_t at = authority.rfind('@'); at != absl::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  absl::string_view port;
  if (absl::StartsWith(authority, "[")) {
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("config: host \"", config.host, "\" is not a URL"));
    }
    d->host_ = std::string(authority.substr(1, close - 1));
    absl::string_view after = authority.substr(close + 1);
    if (absl::ConsumePrefix(&after, ":")) port = after;
  } else {
    const size_t colon = authority.rfind(':');
    d->host_ = std::string(authority.substr(0, colon));
    if (colon != absl::string_view::npos) port = authority.substr(colon + 1);
  }
  int port_number = 0;
  if (d->host_.empty() ||
      (!port.empty() && (!absl::SimpleAtoi(port, &port_number) ||
                         port_number <= 0 || port_number > 65535))) {
    return absl::InvalidArgumentError(
        absl::StrCat("config: host \"", config.host, "\" is not a URL"));
  }
  d->port_ = port.empty() ? (d->tls_ ? "443" : "80") : std::string(port);
  d->verify_name_ =
      config.tls.server_name.empty() ? d->host_ : config.tls.server_name;
  return d;
}

StreamDialer::~StreamDialer() {
  MutexLock lock(&mu_);
  idle_.clear();
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

absl::StatusOr<std::unique_ptr<HttpStream>> StreamDialer::NewStream() {
  SSL_CTX* ctx = nullptr;
  if (tls_) {
    KCR_ASSIGN_OR_RETURN(ctx, Context());
  }
  return std::unique_ptr<HttpStream>(
      new HttpStream(host_, port_, path_prefix_, verify_name_, tls_, ctx));
}

uint64_t StreamDialer::CurrentGeneration() const {
  if (!tls_) return 0;
  MutexLock lock(&tls_material_->mu);
  return tls_material_->cert_generation;
}

absl::StatusOr<std::unique_ptr<HttpStream>> StreamDialer::ReuseOrNewStream() {
  const uint64_t generation = CurrentGeneration();
  while (true) {
    std::unique_ptr<HttpStream> idle;
    {
      MutexLock lock(&mu_);
      if (idle_.empty()) break;
      idle = std::move(idle_.back());
      idle_.pop_back();
    }
    // Outside the lock: a poll, and the close of a broken one.
    if (idle->generation_ == generation && !idle->IdleConnectionBroken()) {
      return idle;
    }
  }
  KCR_ASSIGN_OR_RETURN(std::unique_ptr<HttpStream> stream, NewStream());
  stream->generation_ = generation;
  return stream;
}

void StreamDialer::Release(std::unique_ptr<HttpStream> stream) {
  if (stream == nullptr || !stream->Reusable()) return;
  MutexLock lock(&mu_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(stream));
}

void StreamDialer::CloseIdle() {
  std::vector<std::unique_ptr<HttpStream>> closing;
  {
    MutexLock lock(&mu_);
    closing.swap(idle_);
  }
}

absl::StatusOr<SSL_CTX*> StreamDialer::Context() {
  std::string cert_pem;
  std::string key_pem;
  uint64_t generation;
  {
    MutexLock lock(&tls_material_->mu);
    generation = tls_material_->cert_generation;
    MutexLock own(&mu_);
    if (ctx_ != nullptr && ctx_generation_ == generation) {
      SSL_CTX_up_ref(ctx_);
      return ctx_;
    }
    cert_pem = tls_material_->cert_pem;
    key_pem = tls_material_->key_pem;
  }
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS: ", SslErrors("cannot create a context")));
  }
  auto fail = [ctx](absl::string_view what) {
    SSL_CTX_free(ctx);
    return absl::InvalidArgumentError(
        absl::StrCat("TLS: ", what, ": ", SslErrors("invalid")));
  };
  // client-go's floor.
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
  // A close without close_notify is an end of stream; the HTTP framing
  // tells whether the body was complete.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
  if (config_.tls.insecure) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    const std::string& ca = tls_material_->ca_pem;
    if (ca.empty()) {
      if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        return fail("cannot load the system certificate store");
      }
    } else {
      // Trust only the configured CA, as client-go does.
      X509_STORE* store = SSL_CTX_get_cert_store(ctx);
      BIO* bio = BIO_new_mem_buf(ca.data(), static_cast<int>(ca.size()));
      int added = 0;
      while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
        if (X509_STORE_add_cert(store, cert) == 1) ++added;
        X509_free(cert);
      }
      BIO_free(bio);
      ERR_clear_error();  // the end of the PEM data
      if (added == 0) return fail("cannot use the configured CA");
    }
  }
  if (!cert_pem.empty()) {
    BIO* bio =
        BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
    X509* leaf = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    bool ok = leaf != nullptr && SSL_CTX_use_certificate(ctx, leaf) == 1;
    X509_free(leaf);
    while (ok) {
      X509* extra = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
      if (extra == nullptr) break;
      if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
        X509_free(extra);
        ok = false;
      }
    }
    BIO_free(bio);
    ERR_clear_error();
    if (!ok) return fail("cannot use the client certificate");
    bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    ok = key != nullptr && SSL_CTX_use_PrivateKey(ctx, key) == 1 &&
         SSL_CTX_check_private_key(ctx) == 1;
    EVP_PKEY_free(key);
    if (!ok) return fail("cannot use the client key");
  }
  MutexLock lock(&mu_);
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
  ctx_ = ctx;
  ctx_generation_ = generation;
  SSL_CTX_up_ref(ctx_);
  return ctx_;
}

}  // namespace kcr::client::transport
