#include "base/token_bucket.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace kcr {

TokenBucket::TokenBucket(double qps, int burst, const Clock* clock)
    : qps_(qps),
      burst_(burst),
      clock_(clock != nullptr ? clock : Clock::Real()),
      tokens_(burst),
      last_(clock_->Now()),
      last_event_(absl::InfinitePast()) {}

absl::Duration TokenBucket::Reserve() {
  if (std::isinf(qps_) && qps_ > 0) return absl::ZeroDuration();
  const absl::Time now = clock_->Now();
  MutexLock lock(&mu_);
  absl::Time time_to_act;
  return ReserveLocked(now, &time_to_act);
}

absl::Duration TokenBucket::ReserveLocked(absl::Time now,
                                          absl::Time* time_to_act) {
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
      *time_to_act = now;
      return absl::ZeroDuration();
    }
    *time_to_act = absl::InfiniteFuture();
    return absl::InfiniteDuration();
  }
  tokens_ -= 1;
  const absl::Duration wait =
      tokens_ >= 0 ? absl::ZeroDuration() : absl::Seconds(-tokens_ / qps_);
  *time_to_act = now + wait;
  last_event_ = std::max(last_event_, *time_to_act);
  return wait;
}

void TokenBucket::CancelReservation(absl::Time time_to_act) {
  const absl::Time now = clock_->Now();
  MutexLock lock(&mu_);
  if (qps_ <= 0 || time_to_act <= now) return;
  // Reservations made after this one were priced with its token spent;
  // give back only what they do not already count on.
  const double restore =
      1 - absl::ToDoubleSeconds(last_event_ - time_to_act) * qps_;
  if (restore <= 0) return;
  const absl::Time last = std::min(last_, now);
  tokens_ = std::min<double>(
      burst_, tokens_ + absl::ToDoubleSeconds(now - last) * qps_ + restore);
  last_ = now;
  if (time_to_act == last_event_) {
    const absl::Time previous = time_to_act - absl::Seconds(1 / qps_);
    if (previous >= now) last_event_ = previous;
  }
}

absl::Status TokenBucket::Wait(const Context& ctx) {
  if (ctx.done()) return ctx.Err();
  if (std::isinf(qps_) && qps_ > 0) return absl::OkStatus();
  absl::Duration wait;
  absl::Time time_to_act;
  {
    const absl::Time now = clock_->Now();
    MutexLock lock(&mu_);
    wait = ReserveLocked(now, &time_to_act);
  }
  if (wait <= absl::ZeroDuration()) return absl::OkStatus();
  if (ctx.clock() == clock_ && time_to_act > ctx.deadline()) {
    CancelReservation(time_to_act);
    return absl::DeadlineExceededError(
        absl::StrCat("rate limiter: waiting ", absl::FormatDuration(wait),
                     " for a token would exceed the context deadline"));
  }
  absl::Status slept = clock_->Sleep(ctx, wait);
  if (!slept.ok()) CancelReservation(time_to_act);
  return slept;
}

}  // namespace kcr
