// Step hooks: named points between the steps of the work queue's lock-free
// handshakes (an Add's fold, the publish of a batch, the sleep/wake of
// workers and of the delaying queue's timer), where a test can stall the
// thread that reaches them.
//
// A race in a handshake shows only when a thread is held up at one exact
// point, which an idle machine almost never does. Stress tests compile the
// queue with KCR_WORKQUEUE_STEP_HOOKS defined and install a hook that
// yields or sleeps at random points, so that every interleaving the
// scheduler of a loaded machine could produce is tried thousands of times a
// second. Without the define, AtStep is an empty inline function and the
// queue carries no trace of the hooks.
//
// Not an API: an implementation detail of the public queue templates
// (queue.h, delaying_queue.h), which include it, and installed with them
// for that reason only.
#ifndef KCR_RUNTIME_WORKQUEUE_STEP_HOOKS_H_
#define KCR_RUNTIME_WORKQUEUE_STEP_HOOKS_H_

#ifdef KCR_WORKQUEUE_STEP_HOOKS
#include <atomic>
#endif

namespace kcr::workqueue::internal {

enum class Step {
  // Queue: a producer has folded its Add into the pending batch, before it
  // publishes or wakes anyone. DelayingQueue: AddAfter has appended to its
  // inbox, before it wakes the timer.
  kAddInboxed,
  // A fold or due batch is in the FIFO, before the waker looks for sleepers.
  kPublished,
  // A waker has counted its signal, before it signals.
  kBeforeSignal,
  // A worker has said it is about to sleep, before it looks for work again.
  kSleepAnnounced,
  // A worker has woken, before it looks for work.
  kSleepWoken,
  // Done has found its item added again while processed, before it
  // publishes the pending batch and queues the item behind it.
  kDoneChecked,
  // DelayingQueue: AddAfter has computed the ready time, before the inbox.
  kAddAfterTimed,
  // The timer has read the time, before it folds and adds due items.
  kTimerNow,
  // The timer has planned its sleep, before it sleeps.
  kTimerPlanned,
  // The timer has woken, before it looks at the inbox and the waiting items.
  kTimerWoken,
};

#ifdef KCR_WORKQUEUE_STEP_HOOKS
// The installed hook, or null. Tests set it before they create a queue and
// clear it after the queue is destroyed.
inline std::atomic<void (*)(Step)> step_hook{nullptr};

inline void AtStep(Step step) {
  if (void (*hook)(Step) = step_hook.load(std::memory_order_acquire)) {
    hook(step);
  }
}
#else
inline void AtStep(Step) {}
#endif

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_STEP_HOOKS_H_
