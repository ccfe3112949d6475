#include "runtime/metrics/http_endpoint.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

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

bool WriteAll(int fd, std::string_view data, int stop_fd, absl::Time deadline) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
        WaitReady(fd, POLLOUT, stop_fd, deadline)) {
      continue;
    }
    return false;
  }
  return true;
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
                         absl::StrCat(shown, ":", bound_port)));
  }
  return absl::UnavailableError(
      absl::StrCat("cannot listen on \"", options.bind_address, "\": ", error));
}

HttpEndpoint::HttpEndpoint(HttpEndpointOptions options, int listen_fd, int port,
                           std::string address)
    : options_(std::move(options)),
      listen_fd_(listen_fd),
      port_(port),
      address_(std::move(address)) {
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
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      head.append(buf, static_cast<size_t>(n));
      end = head.find("\r\n\r\n");
      continue;
    }
    if (n == 0) return;  // closed before a whole head
    if (errno == EINTR) continue;
    if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
        WaitReady(fd, POLLIN, stop_pipe_[0], deadline)) {
      continue;
    }
    return;  // timed out, stopped or broken: nothing worth answering
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
      reply = Dispatch(get);
    }
  }
  std::string out = absl::StrCat(
      "HTTP/1.1 ", reply.status, " ", ReasonPhrase(reply.status),
      "\r\nContent-Type: ", reply.content_type,
      "\r\nContent-Length: ", reply.body.size(),
      "\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n");
  if (!head_only) out += reply.body;
  WriteAll(fd, out, stop_pipe_[0], absl::Now() + options_.read_timeout);
  // Let the client read the answer before the close resets the socket
  // (it may still be sending a body we ignore).
  shutdown(fd, SHUT_WR);
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
