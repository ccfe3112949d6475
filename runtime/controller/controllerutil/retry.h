// RetryOnConflict: runs an update again while it fails with a conflict
// (409, a stale resourceVersion), as client-go's retry.RetryOnConflict with
// a wait.Backoff.
#ifndef KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_RETRY_H_
#define KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_RETRY_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/context.h"

namespace kcr::controller::controllerutil {

// wait.Backoff. The defaults are retry.DefaultRetry: 5 attempts, 10 ms
// apart, jittered by up to 10%.
struct Backoff {
  // Attempts in all (at least one is made).
  int steps = 5;
  absl::Duration duration = absl::Milliseconds(10);
  // Each wait is the previous one times `factor` (1: constant).
  double factor = 1.0;
  // Each wait grows by a random fraction of itself in [0, jitter).
  double jitter = 0.1;
  // When > 0, waits stop growing past it.
  absl::Duration cap = absl::ZeroDuration();
};

struct RetryOptions {
  Backoff backoff;
  // How to wait between attempts. Null: Clock::Sleep on `clock`, ended
  // early by the context (which then ends the retries).
  std::function<void(absl::Duration)> sleep;
  // Not owned; null means the real clock.
  const Clock* clock = nullptr;
  // Uniform in [0, 1), for the jitter. Null: seeded at random.
  std::function<double()> random;
};

// Calls `fn` until it returns anything but a conflict (api::IsConflict),
// at most backoff.steps times, waiting between attempts; returns its last
// status. Stops, returning ctx.Err(), when `ctx` is done between attempts.
absl::Status RetryOnConflict(const Context& ctx, const RetryOptions& options,
                             const std::function<absl::Status()>& fn);

}  // namespace kcr::controller::controllerutil

#endif  // KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_RETRY_H_
