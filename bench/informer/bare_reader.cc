// bare_reader: how fast the replay server serves, read with a plain socket
// that only counts bytes (no HTTP library, no JSON): the bound on what any
// informer can get out of it.
//
//   bare_reader --port=P --pods=50000 --updates=100000 [--repeat=5]
//
// Reads the list an informer's first LIST gets (resourceVersion=0: the
// whole list) and the watch an informer then opens, releasing its updates
// with POST /start-updates and timing from just before that request to the
// last event's final byte, as the informer harnesses do. Prints the median
// of --repeat rounds of each, then one JSON line:
//   {"list_mb_s":..,"list_pods_s":..,"watch_mb_s":..,"watch_events_s":..}
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "bench/informer/harness_util.h"

namespace kcr::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr size_t kBufferSize = 1 << 20;

double Seconds(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Reading {
  double seconds = 0;
  int64_t bytes = 0;  // body bytes, framing included for a watch
};

// Sends a GET and reads the response head; `rest` receives body bytes read
// with it. Returns the head.
absl::StatusOr<std::string> Get(int fd, const std::string& target,
                                std::string* rest) {
  absl::Status s =
      WriteAll(fd, absl::StrCat("GET ", target,
                                " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: "
                                "application/json\r\n\r\n"));
  if (!s.ok()) return s;
  std::string data;
  std::vector<char> buffer(65536);
  size_t end;
  while ((end = data.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError("connection closed in the head");
    data.append(buffer.data(), static_cast<size_t>(n));
  }
  if (data.rfind("HTTP/1.1 200", 0) != 0) {
    return absl::UnavailableError(
        absl::StrCat("GET ", target, ": ", data.substr(0, data.find('\r'))));
  }
  *rest = data.substr(end + 4);
  return data.substr(0, end + 4);
}

absl::StatusOr<Reading> ReadList(int port, const std::string& base) {
  absl::StatusOr<int> fd = ConnectLoopback(port);
  if (!fd.ok()) return fd.status();
  auto start = SteadyClock::now();
  std::string rest;
  absl::StatusOr<std::string> head =
      Get(*fd, base + "?resourceVersion=0&limit=500", &rest);
  if (!head.ok()) {
    close(*fd);
    return head.status();
  }
  std::string lower = absl::AsciiStrToLower(*head);
  size_t at = lower.find("content-length:");
  int64_t length = -1;
  if (at != std::string::npos) {
    size_t eol = lower.find("\r\n", at);
    std::string value(
        absl::StripAsciiWhitespace(lower.substr(at + 15, eol - at - 15)));
    if (!absl::SimpleAtoi(value, &length)) length = -1;
  }
  if (length < 0) {
    close(*fd);
    return absl::UnimplementedError("list without Content-Length");
  }
  int64_t got = static_cast<int64_t>(rest.size());
  std::vector<char> buffer(kBufferSize);
  while (got < length) {
    ssize_t n = read(*fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += n;
  }
  auto end = SteadyClock::now();
  close(*fd);
  if (got < length) return absl::UnavailableError("list cut short");
  return Reading{Seconds(start, end), length};
}

absl::StatusOr<Reading> ReadWatch(int port, const std::string& base,
                                  int64_t pods, int64_t updates) {
  absl::StatusOr<int> fd = ConnectLoopback(port);
  if (!fd.ok()) return fd.status();
  std::string rest;
  absl::StatusOr<std::string> head =
      Get(*fd,
          absl::StrCat(base, "?watch=true&resourceVersion=", pods,
                       "&allowWatchBookmarks=true"),
          &rest);
  if (!head.ok()) {
    close(*fd);
    return head.status();
  }
  auto start = SteadyClock::now();
  if (absl::Status s = StartUpdates(port); !s.ok()) {
    close(*fd);
    return s;
  }
  // An event line ends in "}\n"; chunk framing ends its lines in "\r\n".
  int64_t events = 0;
  int64_t bytes = static_cast<int64_t>(rest.size());
  char previous = 0;
  auto count = [&](const char* data, size_t size) {
    for (size_t i = 0; i < size; ++i) {
      if (data[i] == '\n' && previous == '}') ++events;
      previous = data[i];
    }
  };
  count(rest.data(), rest.size());
  std::vector<char> buffer(kBufferSize);
  while (events < updates) {
    ssize_t n = read(*fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes += n;
    // Only the last bytes of a read can hold an event's end that the
    // previous read started; memchr-speed scanning keeps the reader ahead.
    const char* p = buffer.data();
    const char* limit = p + n;
    if (previous == '}' && *p == '\n') ++events;
    while (p < limit) {
      const char* nl = static_cast<const char*>(
          memchr(p, '\n', static_cast<size_t>(limit - p)));
      if (nl == nullptr) break;
      if (nl > buffer.data() && nl[-1] == '}') ++events;
      p = nl + 1;
    }
    previous = limit[-1];
  }
  auto end = SteadyClock::now();
  close(*fd);
  if (events < updates) {
    return absl::UnavailableError(
        absl::StrCat("watch ended after ", events, " of ", updates, " events"));
  }
  return Reading{Seconds(start, end), bytes};
}

int Main(int argc, char** argv) {
  absl::StatusOr<Flags> flags = Flags::Parse(argc, argv,
                                             {{"port", ""},
                                              {"pods", "50000"},
                                              {"updates", "100000"},
                                              {"namespace", ""},
                                              {"repeat", "5"}});
  if (!flags.ok()) {
    std::fprintf(stderr, "%s\n", flags.status().ToString().c_str());
    return 2;
  }
  absl::StatusOr<std::map<std::string, int64_t>> ints =
      flags->GetInts({"port", "pods", "updates", "repeat"});
  if (!ints.ok()) {
    std::fprintf(stderr, "%s\n", ints.status().ToString().c_str());
    return 2;
  }
  const int64_t port = (*ints)["port"];
  const int64_t pods = (*ints)["pods"];
  const int64_t updates = (*ints)["updates"];
  const int64_t repeat = (*ints)["repeat"];
  const std::string& ns = flags->Get("namespace");
  const std::string base =
      ns.empty() ? "/api/v1/pods"
                 : absl::StrCat("/api/v1/namespaces/", ns, "/pods");

  std::vector<double> list_s, watch_s;
  int64_t list_bytes = 0, watch_bytes = 0;
  for (int64_t r = 0; r < repeat; ++r) {
    absl::StatusOr<Reading> list = ReadList(static_cast<int>(port), base);
    if (!list.ok()) {
      std::fprintf(stderr, "list: %s\n", list.status().ToString().c_str());
      return 1;
    }
    list_s.push_back(list->seconds);
    list_bytes = list->bytes;
    if (updates > 0) {
      absl::StatusOr<Reading> watch =
          ReadWatch(static_cast<int>(port), base, pods, updates);
      if (!watch.ok()) {
        std::fprintf(stderr, "watch: %s\n", watch.status().ToString().c_str());
        return 1;
      }
      watch_s.push_back(watch->seconds);
      watch_bytes = watch->bytes;
    }
  }
  const double ls = Median(list_s);
  std::fprintf(stderr,
               "bare reader: list of %lld pods, %.1f MB in %.1f ms: %.0f MB/s, "
               "%.0f k pods/s\n",
               static_cast<long long>(pods), list_bytes / 1e6, ls * 1e3,
               list_bytes / 1e6 / ls, static_cast<double>(pods) / ls / 1e3);
  double ws = 0;
  if (!watch_s.empty()) {
    ws = Median(watch_s);
    std::fprintf(stderr,
                 "bare reader: watch of %lld events, %.1f MB in %.1f ms: %.0f "
                 "MB/s, %.0f k events/s\n",
                 static_cast<long long>(updates), watch_bytes / 1e6, ws * 1e3,
                 watch_bytes / 1e6 / ws,
                 static_cast<double>(updates) / ws / 1e3);
  }
  std::printf(
      "{\"list_ms\":%.1f,\"list_mb_s\":%.0f,\"list_pods_s\":%.0f,"
      "\"watch_ms\":%.1f,\"watch_mb_s\":%.0f,\"watch_events_s\":%.0f}\n",
      ls * 1e3, list_bytes / 1e6 / ls, static_cast<double>(pods) / ls, ws * 1e3,
      ws > 0 ? watch_bytes / 1e6 / ws : 0,
      ws > 0 ? static_cast<double>(updates) / ws : 0);
  return 0;
}

}  // namespace
}  // namespace kcr::bench

int main(int argc, char** argv) { return kcr::bench::Main(argc, argv); }
