// Clock: the source of time for everything in kcr that waits or measures,
// with timers and tickers on it (Go's time.Timer and time.Ticker).
//
// Queues, backoff, leader election and resync take a Clock so that tests can
// drive time with test/fakes/fake_clock.h instead of sleeping: on the fake
// clock, timers fire when the test moves time past them.
#ifndef KCR_BASE_CLOCK_H_
#define KCR_BASE_CLOCK_H_

#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/mutex.h"

namespace kcr {

class Context;

// A one-shot timer on a Clock, as Go's time.Timer (with Go 1.23's
// guarantee: after Stop or Reset returns, no firing from before is seen).
// Destroying it stops it. Thread-safe.
class Timer {
 public:
  virtual ~Timer() = default;

  // Prevents the timer from firing. Returns true if it was armed. When its
  // callback (Clock::AfterFunc) is running on another thread, first waits
  // for it to return; from inside the callback, returns at once. Do not
  // call it holding a lock the callback takes.
  virtual bool Stop() = 0;

  // Re-arms the timer to fire `d` from now on its clock (a stopped or
  // fired timer too). Returns true if it was armed. Waits for a running
  // callback as Stop does.
  virtual bool Reset(absl::Duration d) = 0;

  // Blocks until the timer fires, then returns OK and consumes the firing
  // (returns at once if it fired since the last Wait, Stop or Reset), or
  // until `ctx` is done and returns ctx.Err(). Waiting on a stopped timer
  // ends only with `ctx`.
  virtual absl::Status Wait(const Context& ctx) = 0;
};

// A periodic timer, as Go's time.Ticker: ticks every `period` from its
// creation or last Reset. A tick nobody waited for is kept, one at most:
// a slow receiver skips ticks rather than receiving a burst. Destroying it
// stops it. Thread-safe.
class Ticker {
 public:
  virtual ~Ticker() = default;

  // No tick after Stop returns (a pending one is dropped).
  virtual void Stop() = 0;
  // Ticks every `period` (> 0) from now on; a pending tick is dropped.
  virtual void Reset(absl::Duration period) = 0;
  // Blocks until the next tick (OK; consumed) or until `ctx` is done
  // (ctx.Err()).
  virtual absl::Status Wait(const Context& ctx) = 0;
};

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

  // A timer that calls `fn` (may be empty) once `d` has passed on this
  // clock: on the real clock's timer thread, or on the fake clock inside the
  // SetTime/Advance that passes it (one whose `d` <= 0 fires at the next
  // one). Callbacks of one clock run one at a time: keep them short (signal,
  // cancel), never blocking on the thread that arms or stops the timer.
  virtual std::unique_ptr<Timer> AfterFunc(absl::Duration d,
                                           std::function<void()> fn) const = 0;

  // A timer that fires after `d`, for Timer::Wait (Go's time.NewTimer and,
  // with Wait, time.After).
  std::unique_ptr<Timer> NewTimer(absl::Duration d) const {
    return AfterFunc(d, nullptr);
  }

  // A ticker with `period` (> 0; a programming error otherwise).
  std::unique_ptr<Ticker> NewTicker(absl::Duration period) const;

  // Waits for `d` to pass on this clock, or for `ctx` to be done. Returns OK
  // after `d` (at once when `d` <= 0 and `ctx` is not done), ctx.Err() when
  // `ctx` ended first.
  absl::Status Sleep(const Context& ctx, absl::Duration d) const;

  // The process-wide real clock. Never null, never destroyed. Its timers
  // run on one thread it starts on first use.
  static const Clock* Real();
};

}  // namespace kcr

#endif  // KCR_BASE_CLOCK_H_
