// What the informer benchmark's programs share: `--name=value` flags, a
// loopback TCP connection, the HTTP request that releases the replay
// server's updates, and the process's peak RSS.
//
// Thread-compatible free functions; nothing here keeps state.
#ifndef KCR_BENCH_INFORMER_HARNESS_UTIL_H_
#define KCR_BENCH_INFORMER_HARNESS_UTIL_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kcr::bench {

// `--name=value` arguments (and `--name` alone, meaning "true"). Programs
// here take a handful of flags; this keeps them off gflags, which the
// project keeps to cmd/.
class Flags {
 public:
  // Fails on an argument that is not of the form --name[=value], or on a
  // name outside `known`.
  static absl::StatusOr<Flags> Parse(
      int argc, char** argv,
      const std::map<std::string, std::string>& known_with_defaults);

  const std::string& Get(const std::string& name) const;
  // Fails with the flag's name if the value is not an integer.
  absl::StatusOr<int64_t> GetInt(const std::string& name) const;
  // GetInt of each of `names`, by name; the first error if any is not an
  // integer.
  absl::StatusOr<std::map<std::string, int64_t>> GetInts(
      const std::vector<std::string>& names) const;

 private:
  std::map<std::string, std::string> values_;
};

// The flags of the programs that run a client against the replay server
// (kcr_informer_bench, kcr_client_bench): --port, --pods, --updates.
struct ClientFlags {
  int64_t port = 0;
  int64_t pods = 0;
  int64_t updates = 0;

  // Fails, naming the flag, on an unknown flag or a value that is not an
  // integer.
  static absl::StatusOr<ClientFlags> Parse(int argc, char** argv);
};

using SteadyClock = std::chrono::steady_clock;

// Milliseconds since `start` on the steady clock.
double MillisSince(SteadyClock::time_point start);

// A blocking TCP connection to 127.0.0.1:port with TCP_NODELAY. The caller
// owns (and closes) the descriptor.
absl::StatusOr<int> ConnectLoopback(int port);

// Writes all of `data`, retrying short writes.
absl::Status WriteAll(int fd, std::string_view data);

// POST /start-updates on the replay server: every watch waiting for its
// updates starts streaming them. Returns once the server has answered.
absl::Status StartUpdates(int port);

// The process's peak resident set (VmHWM of /proc/self/status), in MiB.
double PeakRssMiB();

// CPU time (user + system) the process has used so far, in seconds: on a
// shared machine, steadier than wall time.
double CpuSeconds();

}  // namespace kcr::bench

#endif  // KCR_BENCH_INFORMER_HARNESS_UTIL_H_
