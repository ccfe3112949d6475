// Clock: the source of time for everything in kcr that waits or measures.
//
// Queues, backoff, leader election and resync take a Clock so that tests can
// drive time with test/fakes/fake_clock.h instead of sleeping.
#ifndef KCR_RUNTIME_BASE_CLOCK_H_
#define KCR_RUNTIME_BASE_CLOCK_H_

#include "absl/time/time.h"
#include "runtime/base/mutex.h"

namespace kcr {

class Clock {
 public:
  virtual ~Clock() = default;

  // The current time. Thread-safe.
  virtual absl::Time Now() const = 0;

  // Waits on `cv`, with `mu` held, until `cv` is signalled or `deadline`
  // passes on this clock. May return early: callers re-check their state in
  // a loop. `mu` is released while waiting and held again on return.
  virtual void WaitUntil(Mutex* mu, CondVar* cv, absl::Time deadline) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;

  // The process-wide real clock. Never null, never destroyed.
  static const Clock* Real();
};

}  // namespace kcr

#endif  // KCR_RUNTIME_BASE_CLOCK_H_
