#include "cmd/loadtest-runner/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace kcr::loadtest {
namespace {

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  const int fd_;
};

absl::Duration Remaining(absl::Time deadline) {
  return std::max(absl::ZeroDuration(), deadline - absl::Now());
}

// Waits until `fd` is ready for `events` or the deadline passes.
absl::Status WaitReady(int fd, short events, absl::Time deadline,
                       absl::string_view what) {
  while (true) {
    const int64_t ms = absl::ToInt64Milliseconds(Remaining(deadline));
    if (ms <= 0)
      return absl::DeadlineExceededError(absl::StrCat(what, ": timeout"));
    struct pollfd p = {fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 1 << 30)));
    if (n > 0) return absl::OkStatus();
    if (n < 0 && errno != EINTR) {
      return absl::UnavailableError(absl::StrCat(what, ": ", strerror(errno)));
    }
  }
}

// Connects to one of `host`'s addresses (the first that accepts).
absl::StatusOr<int> Connect(const RunnerOptions& options, absl::Time deadline) {
  struct addrinfo hints;
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo* addrs = nullptr;
  const std::string port = absl::StrCat(options.port);
  if (int rc = getaddrinfo(options.host.c_str(), port.c_str(), &hints, &addrs);
      rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("resolve ", options.host, ": ", gai_strerror(rc)));
  }
  absl::Status last = absl::UnavailableError("no address");
  for (struct addrinfo* a = addrs; a != nullptr; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
               a->ai_protocol);
    if (fd < 0) {
      last = absl::UnavailableError(absl::StrCat("socket: ", strerror(errno)));
      continue;
    }
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      freeaddrinfo(addrs);
      return fd;
    }
    if (errno == EINPROGRESS) {
      last = WaitReady(fd, POLLOUT, deadline, "connect");
      if (last.ok()) {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err == 0) {
          freeaddrinfo(addrs);
          return fd;
        }
        last = absl::UnavailableError(absl::StrCat("connect: ", strerror(err)));
      }
    } else {
      last = absl::UnavailableError(absl::StrCat("connect: ", strerror(errno)));
    }
    close(fd);
  }
  freeaddrinfo(addrs);
  return last;
}

absl::Status SendAll(int fd, absl::string_view data, absl::Time deadline) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (absl::Status s = WaitReady(fd, POLLOUT, deadline, "send"); !s.ok()) {
        return s;
      }
    } else if (n < 0 && errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("send: ", strerror(errno)));
    }
  }
  return absl::OkStatus();
}

// Reads the answer until the server closes the connection (the request
// asked for `Connection: close`), or until the body's Content-Length is
// in, whichever is first; returns the status code.
absl::StatusOr<int> ReadAnswer(int fd, absl::Time deadline) {
  std::string in;
  size_t head_end = std::string::npos;
  int status = 0;
  int64_t content_length = -1;
  int64_t body_bytes = 0;  // counted, not kept
  char buf[16384];
  while (true) {
    if (head_end != std::string::npos && content_length >= 0 &&
        body_bytes >= content_length) {
      return status;
    }
    if (absl::Status s = WaitReady(fd, POLLIN, deadline, "read"); !s.ok()) {
      return s;
    }
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return absl::UnavailableError(absl::StrCat("read: ", strerror(errno)));
    }
    if (n == 0) {
      if (head_end == std::string::npos) {
        return absl::UnavailableError(
            "read: connection closed before the response head");
      }
      return status;
    }
    if (head_end == std::string::npos) {
      in.append(buf, static_cast<size_t>(n));
      const size_t end = in.find("\r\n\r\n");
      if (end == std::string::npos) {
        if (in.size() > 64 * 1024) {
          return absl::DataLossError("read: response head over 64 KiB");
        }
        continue;
      }
      head_end = end + 4;
      const absl::string_view head(in.data(), end);
      // "HTTP/1.x NNN reason"
      const size_t line_end = head.find("\r\n");
      const absl::string_view line = head.substr(0, line_end);
      if (!absl::StartsWith(line, "HTTP/1.") || line.size() < 12 ||
          line[8] != ' ' || !absl::SimpleAtoi(line.substr(9, 3), &status) ||
          status < 100 || status > 999) {
        return absl::DataLossError(
            absl::StrCat("read: not an HTTP/1.x status line: \"",
                         absl::CEscape(line.substr(0, 80)), "\""));
      }
      if (line_end != absl::string_view::npos) {
        for (absl::string_view rest = head.substr(line_end + 2);
             !rest.empty();) {
          const size_t eol = rest.find("\r\n");
          absl::string_view h = rest.substr(0, eol);
          rest = eol == absl::string_view::npos ? "" : rest.substr(eol + 2);
          const size_t colon = h.find(':');
          if (colon == absl::string_view::npos) continue;
          if (absl::EqualsIgnoreCase(
                  absl::StripAsciiWhitespace(h.substr(0, colon)),
                  "content-length")) {
            int64_t len = 0;
            if (absl::SimpleAtoi(
                    absl::StripAsciiWhitespace(h.substr(colon + 1)), &len) &&
                len >= 0) {
              content_length = len;
            }
          }
        }
      }
      body_bytes = static_cast<int64_t>(in.size() - head_end);
    } else {
      body_bytes += n;
    }
  }
}

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

double Percentile(const std::vector<absl::Duration>& sorted, double p) {
  if (sorted.empty()) return 0;
  // Nearest rank: the smallest value with at least p% at or below it.
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * sorted.size()));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return absl::ToDoubleMilliseconds(sorted[rank - 1]);
}

}  // namespace

absl::Status ValidateOptions(const RunnerOptions& options) {
  if (options.method.empty() ||
      !std::all_of(options.method.begin(), options.method.end(), IsTokenChar) ||
      absl::AsciiStrToUpper(options.method) != options.method) {
    return absl::InvalidArgumentError(
        absl::StrCat("method \"", absl::CEscape(options.method),
                     "\" is not an HTTP method (GET, POST, ...)"));
  }
  if (options.host.empty()) {
    return absl::InvalidArgumentError("service name (host) is empty");
  }
  if (std::any_of(options.host.begin(), options.host.end(), [](char c) {
        return absl::ascii_isspace(static_cast<unsigned char>(c)) ||
               absl::ascii_iscntrl(static_cast<unsigned char>(c)) || c == '/';
      })) {
    return absl::InvalidArgumentError(absl::StrCat(
        "service name \"", absl::CEscape(options.host), "\" is not a host"));
  }
  if (options.port < 1 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("service port ", options.port, " is not in 1..65535"));
  }
  if (options.path.empty() || options.path[0] != '/' ||
      std::any_of(options.path.begin(), options.path.end(), [](char c) {
        return absl::ascii_isspace(static_cast<unsigned char>(c)) ||
               absl::ascii_iscntrl(static_cast<unsigned char>(c));
      })) {
    return absl::InvalidArgumentError(
        absl::StrCat("path \"", absl::CEscape(options.path),
                     "\" must start with '/' and hold no spaces"));
  }
  if (options.repeat < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("repeat ", options.repeat, " must be at least 1"));
  }
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("timeout must be positive");
  }
  return absl::OkStatus();
}

RequestResult SendRequest(const RunnerOptions& options) {
  RequestResult result;
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options.timeout;
  const auto finish = [&](absl::Status error) {
    result.latency = absl::Now() - start;
    result.error = std::move(error);
    return result;
  };
  absl::StatusOr<int> fd = Connect(options, deadline);
  if (!fd.ok()) return finish(fd.status());
  Fd closer(*fd);
  // An IPv6 literal goes in brackets in the Host header.
  const std::string host = options.host.find(':') != std::string::npos
                               ? absl::StrCat("[", options.host, "]")
                               : options.host;
  const std::string request =
      absl::StrCat(options.method, " ", options.path,
                   " HTTP/1.1\r\nHost: ", host, ":", options.port,
                   "\r\nUser-Agent: kcr-loadtest-runner\r\nAccept: */*\r\n"
                   "Content-Length: 0\r\nConnection: close\r\n\r\n");
  if (absl::Status s = SendAll(*fd, request, deadline); !s.ok()) {
    return finish(s);
  }
  absl::StatusOr<int> status = ReadAnswer(*fd, deadline);
  if (!status.ok()) return finish(status.status());
  result.status = *status;
  if (*status >= 400) {
    return finish(absl::UnavailableError(absl::StrCat("HTTP ", *status)));
  }
  return finish(absl::OkStatus());
}

Summary Summarize(std::vector<absl::Duration> latencies, int64_t failures) {
  std::sort(latencies.begin(), latencies.end());
  Summary s;
  s.requests = static_cast<int64_t>(latencies.size());
  s.failures = failures;
  s.p50_ms = Percentile(latencies, 50);
  s.p90_ms = Percentile(latencies, 90);
  s.p99_ms = Percentile(latencies, 99);
  return s;
}

std::string SummaryJson(const Summary& s) {
  return absl::StrFormat(
      "{\"requests\":%d,\"failures\":%d,\"p50Ms\":%.3f,\"p90Ms\":%.3f,"
      "\"p99Ms\":%.3f}",
      s.requests, s.failures, s.p50_ms, s.p90_ms, s.p99_ms);
}

Summary Run(
    const RunnerOptions& options,
    const std::function<void(int64_t, const RequestResult&)>& on_failure) {
  std::vector<absl::Duration> latencies;
  latencies.reserve(
      static_cast<size_t>(std::min<int64_t>(options.repeat, 1 << 20)));
  int64_t failures = 0;
  for (int64_t i = 0; i < options.repeat; ++i) {
    RequestResult r = SendRequest(options);
    latencies.push_back(r.latency);
    if (!r.error.ok()) {
      ++failures;
      if (on_failure) on_failure(i, r);
    }
  }
  return Summarize(std::move(latencies), failures);
}

}  // namespace kcr::loadtest
