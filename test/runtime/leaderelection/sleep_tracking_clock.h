// SleepTrackingClock: a FakeClock seen through a Clock that knows which
// threads are asleep on it (in Timer::Wait, as Clock::Sleep is) and until
// when, so that a test moves time only once the code under test has
// reacted to the last move and gone back to sleep.
#ifndef KCR_TEST_RUNTIME_LEADERELECTION_SLEEP_TRACKING_CLOCK_H_
#define KCR_TEST_RUNTIME_LEADERELECTION_SLEEP_TRACKING_CLOCK_H_

#include <functional>
#include <memory>
#include <set>
#include <utility>

#include "absl/time/time.h"
#include "base/clock.h"
#include "base/context.h"
#include "base/mutex.h"
#include "test/fakes/fake_clock.h"

namespace kcr::leaderelection::testing {

class SleepTrackingClock final : public Clock {
 public:
  explicit SleepTrackingClock(kcr::testing::FakeClock* fake) : fake_(fake) {}

  absl::Time Now() const override { return fake_->Now(); }
  void WaitUntil(Mutex* mu, CondVar* cv, absl::Time deadline) const override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    fake_->WaitUntil(mu, cv, deadline);
  }
  std::unique_ptr<Timer> AfterFunc(absl::Duration d,
                                   std::function<void()> fn) const override {
    const bool waitable = !fn;
    std::unique_ptr<Timer> inner = fake_->AfterFunc(d, std::move(fn));
    if (!waitable) return inner;
    return std::make_unique<TrackedTimer>(this, std::move(inner), Now() + d);
  }

  // Blocks (up to a minute of real time) until exactly `n` threads sleep,
  // each until a time still ahead. Returns whether that happened.
  bool Settle(int n) const {
    MutexLock lock(&mu_);
    auto settled = [this, n]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return static_cast<int>(sleeping_.size()) == n &&
             (n == 0 || *sleeping_.begin() > fake_->Now());
    };
    return mu_.AwaitWithTimeout(absl::Condition(&settled), absl::Minutes(1));
  }

  // When the first sleeper wakes (InfiniteFuture when none sleeps).
  absl::Time NextWake() const {
    MutexLock lock(&mu_);
    return sleeping_.empty() ? absl::InfiniteFuture() : *sleeping_.begin();
  }

  // Moves time to the first wake-up and returns it; when nobody sleeps,
  // leaves time alone and returns InfiniteFuture. Call it after Settle.
  absl::Time AdvanceToNextWake() {
    const absl::Time t = NextWake();
    if (t != absl::InfiniteFuture()) fake_->SetTime(t);
    return t;
  }

 private:
  class TrackedTimer final : public Timer {
   public:
    TrackedTimer(const SleepTrackingClock* clock, std::unique_ptr<Timer> inner,
                 absl::Time deadline)
        : clock_(clock), inner_(std::move(inner)), deadline_(deadline) {}
    bool Stop() override { return inner_->Stop(); }
    bool Reset(absl::Duration d) override {
      deadline_ = clock_->Now() + d;
      return inner_->Reset(d);
    }
    absl::Status Wait(const Context& ctx) override {
      {
        MutexLock lock(&clock_->mu_);
        clock_->sleeping_.insert(deadline_);
      }
      absl::Status s = inner_->Wait(ctx);
      MutexLock lock(&clock_->mu_);
      clock_->sleeping_.erase(clock_->sleeping_.find(deadline_));
      return s;
    }

   private:
    const SleepTrackingClock* const clock_;
    const std::unique_ptr<Timer> inner_;
    // Set by the thread that owns the timer (Reset and Wait).
    absl::Time deadline_;
  };

  kcr::testing::FakeClock* const fake_;
  mutable Mutex mu_;
  mutable std::multiset<absl::Time> sleeping_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::leaderelection::testing

#endif  // KCR_TEST_RUNTIME_LEADERELECTION_SLEEP_TRACKING_CLOCK_H_
