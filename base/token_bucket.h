// TokenBucket: a rate limiter with golang.org/x/time/rate's reservation
// semantics, shared by the work queue's BucketRateLimiter and client-side
// request throttling.
#ifndef KCR_BASE_TOKEN_BUCKET_H_
#define KCR_BASE_TOKEN_BUCKET_H_

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/context.h"
#include "base/mutex.h"

namespace kcr {

// Tokens refill continuously at `qps` up to `burst`; the bucket starts full.
// Reserve() takes one token, going into debt if none is left, and returns how
// long the caller must wait before acting (as rate.Limiter.Reserve().Delay()).
// Thread-safe.
class TokenBucket {
 public:
  // qps <= 0 never refills: once the burst is spent Reserve returns
  // absl::InfiniteDuration(). qps == infinity never waits. `clock` is not
  // owned; null means the real clock.
  TokenBucket(double qps, int burst, const Clock* clock = nullptr);

  absl::Duration Reserve();

  // Takes one token and waits on the clock until it may be used, as
  // rate.Limiter.Wait. Returns ctx.Err() if `ctx` ends first (at once if it
  // already has), and DeadlineExceeded at once when the wait would outlast
  // the deadline of `ctx` (on the same clock); either way the token is
  // given back, minus what later reservations already count on.
  absl::Status Wait(const Context& ctx);

  double qps() const { return qps_; }
  int burst() const { return burst_; }

 private:
  // Takes a token at `now`; returns the wait and sets *time_to_act.
  absl::Duration ReserveLocked(absl::Time now, absl::Time* time_to_act)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Gives back the token of a reservation due at `time_to_act`.
  void CancelReservation(absl::Time time_to_act);

  const double qps_;
  const int burst_;
  const Clock* const clock_;
  Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time last_ ABSL_GUARDED_BY(mu_);
  // When the latest reservation may act (rate.Limiter's lastEvent).
  absl::Time last_event_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr

#endif  // KCR_BASE_TOKEN_BUCKET_H_
