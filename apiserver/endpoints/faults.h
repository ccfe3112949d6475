// FaultInjector: faults the local API server injects on purpose, so that
// clients' retry, relist and rewatch paths can be tested. Off by default;
// set from flags or through the HTTP control endpoint (see handler.h).
// Faults never change stored state: a failed request fails before it is
// processed, and a closed watch just ends its stream.
//
// Thread-safe.
#ifndef KCR_APISERVER_ENDPOINTS_FAULTS_H_
#define KCR_APISERVER_ENDPOINTS_FAULTS_H_

#include <cstdint>
#include <string>

#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/mutex.h"

namespace kcr {
namespace apiserver {

struct FaultOptions {
  // Close every watch stream after it has sent this many events (0: never).
  int64_t watch_close_after_events = 0;
  // Close every watch stream this long after it started (0: never).
  absl::Duration watch_close_after = absl::ZeroDuration();
  // Share of resource requests answered 500 InternalError (0..1).
  double error_fraction = 0;
  // Share of resource requests answered 429 TooManyRequests with a
  // Retry-After header (0..1).
  double throttle_fraction = 0;
  int retry_after_seconds = 1;
  // Delay before every resource request is processed. A request whose
  // client goes away, or that a stopping server cancels, ends its delay
  // there, unanswered.
  absl::Duration delay = absl::ZeroDuration();
  // Serve lists and watches as a server without the ShardedListAndWatch
  // gate does: shardSelector is ignored (every object is sent, and no
  // metadata.shardInfo).
  bool ignore_shard_selector = false;

  // {"watchCloseAfterEvents":0,"watchCloseAfterSeconds":0,
  //  "errorFraction":0,"throttleFraction":0,"retryAfterSeconds":1,
  //  "delayMilliseconds":0,"ignoreShardSelector":false}
  std::string ToJson() const;
  // Parses that form; absent members keep the value in `base`.
  static absl::StatusOr<FaultOptions> FromJson(const std::string& json,
                                               const FaultOptions& base);
};

class FaultInjector {
 public:
  enum class Verdict { kNone, kError, kThrottle };

  FaultInjector() = default;
  explicit FaultInjector(FaultOptions options) : options_(options) {}

  FaultOptions options() const;
  void set_options(const FaultOptions& options);

  // Decides the fault for one resource request (random per the fractions).
  Verdict Roll();
  // The delay to inject before one resource request is processed (zero for
  // none); counts it in delays_injected() when it is not zero.
  absl::Duration TakeDelay();

  // Counters of injected faults.
  int64_t errors_injected() const;
  int64_t throttles_injected() const;
  int64_t delays_injected() const;

 private:
  mutable Mutex mu_;
  FaultOptions options_ ABSL_GUARDED_BY(mu_);
  absl::BitGen gen_ ABSL_GUARDED_BY(mu_);
  int64_t errors_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t throttles_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t delays_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_FAULTS_H_
