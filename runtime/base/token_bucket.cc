#include "runtime/base/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace kcr {

TokenBucket::TokenBucket(double qps, int burst, const Clock* clock)
    : qps_(qps),
      burst_(burst),
      clock_(clock != nullptr ? clock : Clock::Real()),
      tokens_(burst),
      last_(clock_->Now()) {}

absl::Duration TokenBucket::Reserve() {
  if (std::isinf(qps_) && qps_ > 0) return absl::ZeroDuration();
  const absl::Time now = clock_->Now();
  MutexLock lock(&mu_);
  // Refill for the time since the last reservation; a reservation that left
  // `last_` in the future (a clock step back) refills nothing.
  const absl::Time last = std::min(last_, now);
  if (qps_ > 0) {
    tokens_ = std::min<double>(
        burst_, tokens_ + absl::ToDoubleSeconds(now - last) * qps_);
  }
  last_ = now;
  if (qps_ <= 0) {
    if (tokens_ >= 1) {
      tokens_ -= 1;
      return absl::ZeroDuration();
    }
    return absl::InfiniteDuration();
  }
  tokens_ -= 1;
  if (tokens_ >= 0) return absl::ZeroDuration();
  return absl::Seconds(-tokens_ / qps_);
}

}  // namespace kcr
