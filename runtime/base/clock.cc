#include "runtime/base/clock.h"

namespace kcr {
namespace {

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }

  void WaitUntil(Mutex* mu, CondVar* cv, absl::Time deadline) const override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (deadline == absl::InfiniteFuture()) {
      cv->Wait(mu);
    } else {
      cv->WaitWithDeadline(mu, deadline);
    }
  }
};

}  // namespace

const Clock* Clock::Real() {
  static const RealClock* const clock = new RealClock();
  return clock;
}

}  // namespace kcr
