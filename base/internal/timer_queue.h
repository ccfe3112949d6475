// TimerQueue: the timers of one clock, ordered by when they are due. Shared
// by the real clock (whose timer thread runs them) and the fake clock
// (whose SetTime/Advance runs them), so both give Timer the same meaning.
//
// Thread-safe. Callbacks run one at a time on the thread that calls
// RunDue, outside the queue's lock; they may create, arm and cancel timers
// (their own included).
#ifndef KCR_BASE_INTERNAL_TIMER_QUEUE_H_
#define KCR_BASE_INTERNAL_TIMER_QUEUE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <thread>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "base/mutex.h"

namespace kcr {
namespace internal {

class TimerQueue {
 public:
  using TimerId = uint64_t;

  TimerQueue() = default;
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  // Called, outside the queue's lock, whenever a timer is armed: the
  // earliest due time may have moved. Set once, before any timer exists.
  void set_on_armed(std::function<void()> on_armed) {
    on_armed_ = std::move(on_armed);
  }

  // A new disarmed timer that calls `fn` (which may be empty) when due.
  TimerId Create(std::function<void()> fn);

  // Arms `id` to be due at `when`, re-arming it if it was armed. Returns
  // whether it was armed.
  bool Arm(TimerId id, absl::Time when);

  // Disarms `id`; returns whether it was armed. When its callback is
  // running on another thread, first waits for it to return, so that the
  // caller may then free what the callback uses (a callback re-arming
  // itself is disarmed too). From inside the callback, returns at once.
  // The caller must not hold a lock the callback takes.
  bool Disarm(TimerId id);

  // Disarms (as Disarm) and forgets `id`.
  void Destroy(TimerId id);

  // Runs the callback of every timer due at or before `now`, in due order
  // (ties in arming order), including timers armed by those callbacks that
  // are due by then.
  void RunDue(absl::Time now);

  // When the earliest armed timer is due; InfiniteFuture() when none is.
  absl::Time NextDue() const;

  // Armed timers.
  int armed() const;
  // Blocks until at least `n` timers are armed.
  void AwaitArmed(int n) const;

 private:
  struct Timer {
    std::shared_ptr<const std::function<void()>> fn;
    bool armed = false;
    absl::Time when;
    uint64_t seq = 0;
    bool running = false;
    std::thread::id runner;
  };
  using Key = std::tuple<absl::Time, uint64_t, TimerId>;

  bool DisarmLocked(TimerId id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ArmedAtLeastLocked(int n) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<int>(due_.size()) >= n;
  }

  std::function<void()> on_armed_;
  mutable Mutex mu_;
  // Signalled when a callback returns.
  CondVar callback_done_;
  TimerId next_id_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<TimerId, Timer> timers_ ABSL_GUARDED_BY(mu_);
  // The armed timers, earliest first.
  std::set<Key> due_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace kcr

#endif  // KCR_BASE_INTERNAL_TIMER_QUEUE_H_
