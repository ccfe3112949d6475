// The Timer of a clock whose timers live in an internal::TimerQueue (the
// real clock and the fake clock).
#ifndef KCR_BASE_INTERNAL_QUEUE_TIMER_H_
#define KCR_BASE_INTERNAL_QUEUE_TIMER_H_

#include <functional>
#include <memory>

#include "absl/time/time.h"
#include "base/clock.h"
#include "base/internal/timer_queue.h"

namespace kcr {
namespace internal {

// A timer of `clock` in `queue` (both not owned, outliving it), armed to
// fire `d` from clock->Now() and call `fn` (may be empty).
std::unique_ptr<Timer> NewQueueTimer(const Clock* clock, TimerQueue* queue,
                                     absl::Duration d,
                                     std::function<void()> fn);

}  // namespace internal
}  // namespace kcr

#endif  // KCR_BASE_INTERNAL_QUEUE_TIMER_H_
