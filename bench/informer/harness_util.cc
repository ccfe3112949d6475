#include "bench/informer/harness_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace kcr::bench {

absl::StatusOr<Flags> Flags::Parse(
    int argc, char** argv,
    const std::map<std::string, std::string>& known_with_defaults) {
  Flags flags;
  flags.values_ = known_with_defaults;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (!absl::ConsumePrefix(&arg, "--")) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument ", argv[i]));
    }
    size_t eq = arg.find('=');
    std::string name(arg.substr(0, eq));
    std::string value =
        eq == std::string_view::npos ? "true" : std::string(arg.substr(eq + 1));
    auto it = flags.values_.find(name);
    if (it == flags.values_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
    it->second = value;
  }
  return flags;
}

const std::string& Flags::Get(const std::string& name) const {
  return values_.at(name);
}

absl::StatusOr<int64_t> Flags::GetInt(const std::string& name) const {
  int64_t value = 0;
  if (!absl::SimpleAtoi(Get(name), &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, "=", Get(name), " is not an integer"));
  }
  return value;
}

absl::StatusOr<std::map<std::string, int64_t>> Flags::GetInts(
    const std::vector<std::string>& names) const {
  std::map<std::string, int64_t> values;
  for (const std::string& name : names) {
    absl::StatusOr<int64_t> value = GetInt(name);
    if (!value.ok()) return value.status();
    values[name] = *value;
  }
  return values;
}

absl::StatusOr<ClientFlags> ClientFlags::Parse(int argc, char** argv) {
  absl::StatusOr<Flags> flags =
      Flags::Parse(argc, argv, {{"port", ""}, {"pods", "0"}, {"updates", "0"}});
  if (!flags.ok()) return flags.status();
  ClientFlags out;
  for (auto [name, value] :
       {std::pair{"port", &out.port}, std::pair{"pods", &out.pods},
        std::pair{"updates", &out.updates}}) {
    absl::StatusOr<int64_t> parsed = flags->GetInt(name);
    if (!parsed.ok()) return parsed.status();
    *value = *parsed;
  }
  return out;
}

double MillisSince(SteadyClock::time_point start) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - start)
      .count();
}

absl::StatusOr<int> ConnectLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("connect to 127.0.0.1:", port, ": ", strerror(err)));
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

absl::Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("write: ", strerror(errno)));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status StartUpdates(int port) {
  absl::StatusOr<int> fd = ConnectLoopback(port);
  if (!fd.ok()) return fd.status();
  absl::Status status =
      WriteAll(*fd,
               "POST /start-updates HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               "Content-Length: 0\r\nConnection: close\r\n\r\n");
  std::string answer;
  char buffer[4096];
  while (status.ok()) {
    ssize_t n = read(*fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  close(*fd);
  if (!status.ok()) return status;
  if (answer.rfind("HTTP/1.1 200", 0) != 0) {
    return absl::UnavailableError(
        absl::StrCat("POST /start-updates: ", answer.substr(0, 80)));
  }
  return absl::OkStatus();
}

double PeakRssMiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    absl::string_view rest = line;
    if (absl::ConsumePrefix(&rest, "VmHWM:")) {
      rest = absl::StripAsciiWhitespace(rest);
      absl::ConsumeSuffix(&rest, " kB");
      int64_t kib = 0;
      if (absl::SimpleAtoi(rest, &kib)) return static_cast<double>(kib) / 1024;
    }
  }
  return -1;
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace kcr::bench
