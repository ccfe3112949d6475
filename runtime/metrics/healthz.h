// HealthChecks: named checks served as controller-runtime's healthz
// handler serves them (pkg/healthz), so kubelet probes and people reading
// them by hand see the same answers:
//
//   GET /healthz             200 "ok" when every check passes; else 500
//                            and one line per check, "[+]name ok" or
//                            "[-]name failed: reason withheld", then
//                            "healthz check failed"
//   GET /healthz?verbose     the per-check lines even when all pass, then
//                            "healthz check passed"
//   GET /healthz?exclude=n   check n is skipped ("[+]n excluded: ok")
//   GET /healthz/<name>      that check alone: 200 "ok", or 500 with its
//                            error; 404 for an unknown name
//
// A check added with a detail (AddWithDetail) answers with a line of text
// when it passes, shown as "[+]name ok: <detail>" in the verbose listing
// and as the body of its own path (kopf's liveness endpoint shows each
// probe's value so). Checks without one answer as above.
//
// With no checks, a "ping" check that always passes answers. The overall
// answer withholds reasons (the endpoint is public); a failing check's
// error is logged at V(1) and shown only on its own path.
//
// Thread-safe: checks may be added while the endpoint serves.
#ifndef KCR_RUNTIME_METRICS_HEALTHZ_H_
#define KCR_RUNTIME_METRICS_HEALTHZ_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "runtime/metrics/http_endpoint.h"

namespace kcr::metrics {

class HealthChecks {
 public:
  using Check = std::function<absl::Status()>;
  // A check that says something when it passes: its value, or its error.
  using DetailedCheck = std::function<absl::StatusOr<std::string>()>;

  // Adds (or replaces) the check `name`. A name must be non-empty and
  // hold no '/': kInvalidArgument otherwise.
  absl::Status Add(const std::string& name, Check check);
  // The same, for a check with a detail. Line breaks in the detail are
  // shown as spaces; an empty detail is shown as a plain "ok".
  absl::Status AddWithDetail(const std::string& name, DetailedCheck check);

  // Serves these checks at `path` (e.g. "/healthz") and `path`/<name> on
  // `endpoint`, before it starts. The checks must outlive the endpoint.
  void ServeOn(HttpEndpoint& endpoint, const std::string& path);

  // The answer to a GET of the aggregate (`name` empty) or of one check.
  HttpReply Answer(const HttpGet& get, const std::string& name) const;

 private:
  mutable Mutex mu_;
  std::map<std::string, DetailedCheck> checks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::metrics

#endif  // KCR_RUNTIME_METRICS_HEALTHZ_H_
