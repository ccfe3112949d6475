// What a LoadTest run produced: each load pod's summary, read from the
// one line of JSON cmd/loadtest-runner leaves as its container's
// termination message, and the aggregate over the pods that
// status.result reports.
//
// Aggregation: requests and failures are sums. Per-pod percentiles cannot
// be merged exactly without the pods' latencies, so each aggregate
// percentile (p50, p90, p99) is the mean of the pods' values weighted by
// their request counts: exact when the pods saw the same distribution
// (the premise of replicas of one load), and always between the smallest
// and the largest pod's value (the largest is an upper bound of the true
// percentile over all requests). The runner reports no maximum, so
// latencyMs.max stays absent. The exact per-pod values are in
// result.pods.
#ifndef KCR_CONTROLLERS_LOADTEST_RUN_RESULT_H_
#define KCR_CONTROLLERS_LOADTEST_RUN_RESULT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "controllers/loadtest/loadtest_types.h"

namespace kcr::loadtest {

// Parses a termination message written by the runner:
// {"requests":N,"failures":F,"p50Ms":x,"p90Ms":y,"p99Ms":z} (surrounding
// whitespace allowed, unknown members ignored) into the PodResult of
// `pod`. InvalidArgument (naming what is wrong) when `message` is not such
// a summary: not JSON, not an object, requests or failures missing,
// negative or not integers, failures above requests, a percentile
// negative or not a number.
absl::StatusOr<LoadTest::PodResult> ParseSummary(std::string_view pod,
                                                 std::string_view message);

// The aggregate of `pods` (in the order given, which result.pods keeps).
// A PodResult without `requests` is a pod that left no summary: it is
// listed but counts in no sum; when no pod has a summary, requests,
// failures and latencyMs are absent.
LoadTest::Result Aggregate(std::vector<LoadTest::PodResult> pods);

// How many of `result.pods` left no summary.
int CountWithoutSummary(const LoadTest::Result& result);

}  // namespace kcr::loadtest

#endif  // KCR_CONTROLLERS_LOADTEST_RUN_RESULT_H_
