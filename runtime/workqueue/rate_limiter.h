// RateLimiter: decides how long an item waits before it is retried.
#ifndef KCR_RUNTIME_WORKQUEUE_RATE_LIMITER_H_
#define KCR_RUNTIME_WORKQUEUE_RATE_LIMITER_H_

#include "absl/time/time.h"

namespace kcr::workqueue {

// Implementations are thread-safe.
template <typename T>
class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // How long `item` should wait now. Counts a failure for per-item limiters:
  // calling When is the retry.
  virtual absl::Duration When(const T& item) = 0;
  // Stops tracking `item` (it succeeded). The queue's Done is still needed.
  virtual void Forget(const T& item) = 0;
  // How many times `item` has been rate limited since it was last forgotten.
  virtual int NumRequeues(const T& item) = 0;
};

}  // namespace kcr::workqueue

#endif  // KCR_RUNTIME_WORKQUEUE_RATE_LIMITER_H_
