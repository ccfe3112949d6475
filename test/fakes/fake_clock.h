// FakeClock: a Clock whose time moves only when a test says so.
#ifndef KCR_TEST_FAKES_FAKE_CLOCK_H_
#define KCR_TEST_FAKES_FAKE_CLOCK_H_

#include <functional>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/internal/timer_queue.h"
#include "base/mutex.h"

namespace kcr::testing {

// Time starts at a fixed instant and changes only through SetTime/Advance.
//
// Timers (AfterFunc, NewTimer, NewTicker, Sleep, context deadlines) fire
// inside the SetTime/Advance that moves time to or past them, on the
// calling thread, in due order; when it returns, every callback due by the
// new time has run and every Timer::Wait due by then has been woken.
// BlockUntilTimers() is the barrier that tells a test another thread has
// armed its timer (e.g. gone to sleep) before it moves time.
//
// A thread in WaitUntil wakes within a millisecond of real time after fake
// time passes its deadline (it polls, so the fake clock never needs to reach
// into the waiter's mutex). BlockUntilWaiters() is the barrier tests use to
// know that background loops have seen the current time and gone back to
// sleep, so tests never sleep themselves.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000));

  absl::Time Now() const override;
  void WaitUntil(Mutex* mu, CondVar* cv, absl::Time deadline) const override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  std::unique_ptr<Timer> AfterFunc(absl::Duration d,
                                   std::function<void()> fn) const override;

  // Move time, then fire the timers due by then.
  void SetTime(absl::Time t);
  void Advance(absl::Duration d);

  // Blocks until `n` distinct waiters (identified by their CondVar) have
  // entered WaitUntil since the last SetTime/Advance, with a deadline still
  // in the future — i.e. they have reacted to the current time.
  void BlockUntilWaiters(int n) const;

  // Blocks until at least `n` timers are armed (not yet fired or stopped).
  void BlockUntilTimers(int n) const;
  // Timers armed now.
  int ArmedTimers() const;

 private:
  bool EnoughWaitersLocked(int n) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  // Bumped by every change of time.
  int64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;
  // The epoch at which each waiter last went to sleep.
  mutable absl::flat_hash_map<const CondVar*, int64_t> sleeping_
      ABSL_GUARDED_BY(mu_);
  mutable internal::TimerQueue timers_;
};

}  // namespace kcr::testing

#endif  // KCR_TEST_FAKES_FAKE_CLOCK_H_
