// The load a LoadTest pod sends: `repeat` plain-HTTP requests, one after
// another, each on a connection of its own, to one URL, and the summary of
// how they went (count, failures, latency percentiles) that the pod leaves
// in its termination message for the loadtest controller to aggregate.
//
// A request succeeds when the server answers with a status below 400
// (as `curl --fail` counts); a refused or reset connection, a timeout, an
// unreadable answer or a status of 400 and above is a failure. Latency is
// measured from before the connect to the end of the answer, for failures
// too (a refused connection is fast, a timeout slow: both are what a user
// of the service would see).
#ifndef KCR_CMD_LOADTEST_RUNNER_RUNNER_H_
#define KCR_CMD_LOADTEST_RUNNER_RUNNER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kcr::loadtest {

struct RunnerOptions {
  std::string method = "GET";
  std::string host;  // a DNS name or an IP (the Service's name in a cluster)
  int port = 80;
  std::string path = "/";
  int64_t repeat = 1;
  // Per request: connecting, sending and reading the whole answer.
  absl::Duration timeout = absl::Seconds(10);
};

// Why RunnerOptions cannot be used (InvalidArgument naming the field), or
// OK. The method must be an HTTP token in upper case, the host non-empty,
// the port 1..65535, the path start with '/' and hold no whitespace or
// control characters, repeat be positive and the timeout positive.
absl::Status ValidateOptions(const RunnerOptions& options);

struct RequestResult {
  int status = 0;  // HTTP status; 0 when none was read
  absl::Duration latency;
  absl::Status error;  // OK when the request succeeded
};

// Sends one request and reads the whole answer. Never throws.
RequestResult SendRequest(const RunnerOptions& options);

struct Summary {
  int64_t requests = 0;
  int64_t failures = 0;
  // Nearest-rank percentiles of every request's latency, in milliseconds.
  double p50_ms = 0;
  double p90_ms = 0;
  double p99_ms = 0;
};

// The summary of `latencies` (one per request) with `failures` of them
// failed.
Summary Summarize(std::vector<absl::Duration> latencies, int64_t failures);

// One line of JSON, without a newline:
// {"requests":N,"failures":F,"p50Ms":x,"p90Ms":y,"p99Ms":z}
std::string SummaryJson(const Summary& summary);

// Sends options.repeat requests in sequence; `on_failure` (may be empty)
// sees each failed one with its index.
Summary Run(const RunnerOptions& options,
            const std::function<void(int64_t, const RequestResult&)>&
                on_failure = nullptr);

}  // namespace kcr::loadtest

#endif  // KCR_CMD_LOADTEST_RUNNER_RUNNER_H_
