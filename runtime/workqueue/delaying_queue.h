// DelayingQueue: a work queue that can also add an item after a delay.
//
// One timer thread per queue (none per item) keeps the waiting items ordered
// by ready time and adds each to the queue when its time comes. Waiting
// items are deduplicated: a second AddAfter for an item already waiting keeps
// the earlier ready time, as client-go does.
//
// Implementation note: AddAfter only appends (ready time, item) to an inbox
// and wakes the timer thread if the item is due before the timer would wake
// anyway; the timer thread does the rest, off the caller's path. It folds the
// inbox into the queue itself, through the queue's WaitingItems interface
// (waiting_items.h): a waiting item has an entry in the queue's
// index, with its ready time beside it, so a due item joins the queue's FIFO
// without being hashed or copied again, and an item both waiting and queued
// is stored once.
#ifndef KCR_RUNTIME_WORKQUEUE_DELAYING_QUEUE_H_
#define KCR_RUNTIME_WORKQUEUE_DELAYING_QUEUE_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "runtime/workqueue/folding_queue.h"
#include "runtime/workqueue/metrics.h"
#include "runtime/workqueue/queue.h"
#include "runtime/workqueue/waiting_items.h"

namespace kcr::workqueue {

template <typename T>
class DelayingInterface : public Interface<T> {
 public:
  // Adds `item` once `delay` has passed (at once if delay <= 0). Ignored
  // once the queue is shutting down.
  virtual void AddAfter(const T& item, absl::Duration delay) = 0;
};

// How long the timer thread sleeps at most when nothing is waiting, as
// client-go's heartbeat: it bounds the damage of a missed wake-up.
inline constexpr absl::Duration kDelayingQueueMaxWait = absl::Seconds(10);

template <typename T = std::string, typename Hash = absl::Hash<T>,
          typename Eq = std::equal_to<T>>
class DelayingQueue final : public DelayingInterface<T> {
 public:
  using Options = QueueOptions;

  explicit DelayingQueue(Options options = {})
      : clock_(options.clock != nullptr ? options.clock : Clock::Real()),
        queue_(clock_, internal::ResolveProvider(options), options.name),
        waiting_(&queue_) {
    if (MetricsProvider* provider = internal::ResolveProvider(options)) {
      retries_ = provider->NewRetriesMetric(options.name);
    }
    timer_ = std::thread([this] { WaitingLoop(); });
  }

  ~DelayingQueue() override {
    ShutDown();
    timer_.join();
  }

  DelayingQueue(const DelayingQueue&) = delete;
  DelayingQueue& operator=(const DelayingQueue&) = delete;

  void Add(const T& item) override { queue_.Add(item); }
  void Add(T&& item) override { queue_.Add(std::move(item)); }
  size_t Len() const override { return queue_.Len(); }
  std::optional<T> Get() override { return queue_.Get(); }
  void Done(const T& item) override { queue_.Done(item); }
  bool ShuttingDown() const override { return queue_.ShuttingDown(); }

  void ShutDown() override {
    StopTimer();
    queue_.ShutDown();
  }

  void ShutDownWithDrain() override {
    StopTimer();
    queue_.ShutDownWithDrain();
  }

  void AddAfter(const T& item, absl::Duration delay) override {
    if (queue_.ShuttingDown()) return;
    if (retries_ != nullptr) retries_->Inc();
    if (delay <= absl::ZeroDuration()) {
      queue_.Add(item);
      return;
    }
    const int64_t ready = absl::ToUnixNanos(clock_->Now() + delay);
    internal::AtStep(internal::Step::kAddAfterTimed);
    bool wake = false;
    {
      MutexLock lock(&inbox_mu_);
      if (stopping_) return;
      inbox_.push_back(Delayed{ready, item});
      if (ready < inbox_earliest_.load(std::memory_order_relaxed)) {
        inbox_earliest_.store(ready, std::memory_order_relaxed);
      }
      // Due before the timer wakes, or enough items to fold (repeated
      // AddAfters of one item collapse only when folded): wake it now.
      if (ready < wake_at_ ||
          (inbox_.size() >= internal::kInboxLimit && wake_at_ != kAwake)) {
        wake_at_ = kAwake;
        kicked_ = true;
        wake = true;
      }
    }
    internal::AtStep(internal::Step::kAddInboxed);
    if (wake) cv_.Signal();
  }

  // Items waiting for their delay to pass (not yet in the queue).
  size_t WaitingLen() const {
    size_t waiting;
    bool folded;
    {
      MutexLock lock(waiting_->waiting_mu());
      folded = FoldInboxLocked();
      waiting = waiting_->WaitingLenLocked();
    }
    // The timer may have planned its sleep before these items reached the
    // queue: make it look again.
    if (folded) {
      {
        MutexLock lock(&inbox_mu_);
        kicked_ = true;
        wake_at_ = kAwake;
      }
      cv_.Signal();
    }
    return waiting;
  }

 private:
  // An AddAfter not yet folded in.
  using Delayed = typename internal::WaitingItems<T>::Delayed;

  void StopTimer() {
    {
      MutexLock lock(&inbox_mu_);
      stopping_ = true;
    }
    cv_.SignalAll();
  }

  // Moves the inbox into the queue's waiting items.
  // Returns whether there was anything to fold.
  bool FoldInboxLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(waiting_->waiting_mu()) {
    std::vector<Delayed> folding;
    {
      MutexLock lock(&inbox_mu_);
      if (inbox_.empty()) return false;
      // Taken, not handed back and forth: a reused buffer would bring every
      // AddAfter a cache line last written by this thread.
      inbox_.swap(folding);
      inbox_earliest_.store(kNever, std::memory_order_relaxed);
    }
    waiting_->AddWaitingLocked(&folding);
    return true;
  }

  // Folds the inbox, adds due items to the queue, and sleeps until the next
  // item is due, an AddAfter wakes it, or shutdown.
  void WaitingLoop() {
    int spins = 0;
    bool inbox_full =
        false;  // woken because the inbox reached internal::kInboxLimit
    for (;;) {
      int64_t next;
      size_t due;
      {
        MutexLock lock(waiting_->waiting_mu());
        // Time first: every item added before it is in the inbox, so items
        // due now come out in ready order whichever fold brought them in.
        const int64_t now = absl::ToUnixNanos(clock_->Now());
        internal::AtStep(internal::Step::kTimerNow);
        // Items added since the last fold are folded when the first of them
        // is due, not one by one as they come, or when there are many, or
        // before a waiting item is added: an AddAfter that found the item
        // waiting for an earlier time is dropped, as client-go drops it,
        // not kept to wait a second time.
        const std::optional<int64_t> first_ready = waiting_->NextReadyLocked();
        if (inbox_full ||
            inbox_earliest_.load(std::memory_order_relaxed) <= now ||
            (first_ready.has_value() && *first_ready <= now)) {
          FoldInboxLocked();
          inbox_full = false;
        }
        due = waiting_->AddDueLocked(now, kMaxDueBatch);
        next = waiting_->NextReadyLocked().value_or(
            now + absl::ToInt64Nanoseconds(kDelayingQueueMaxWait));
        next = std::min(next, inbox_earliest_.load(std::memory_order_relaxed));
        if (due == kMaxDueBatch) continue;  // more may be due: let others in
        // The next item is due in a moment (a steady stream of AddAfters):
        // yield rather than sleep and be woken, a few times in a row.
        if (next - now < kSpinNanos && ++spins < internal::kSpinsBeforeSleep) {
          std::this_thread::yield();
          continue;
        }
      }
      spins = 0;
      internal::AtStep(internal::Step::kTimerPlanned);
      MutexLock lock(&inbox_mu_);
      if (stopping_) return;
      next = std::min(next, inbox_earliest_.load(std::memory_order_relaxed));
      wake_at_ = next;
      const absl::Time deadline = absl::FromUnixNanos(next);
      while (!stopping_ && !kicked_ && clock_->Now() < deadline) {
        clock_->WaitUntil(&inbox_mu_, &cv_, deadline);
        internal::AtStep(internal::Step::kTimerWoken);
      }
      if (stopping_) return;
      kicked_ = false;
      wake_at_ = kAwake;
      inbox_full = inbox_.size() >= internal::kInboxLimit;
    }
  }

  // Due items added per hold of the queue's index lock.
  static constexpr size_t kMaxDueBatch = 1024;
  // How soon the next item must be due for the timer to yield, not sleep.
  static constexpr int64_t kSpinNanos = 50'000;
  // The timer thread is awake: AddAfter need not wake it.
  static constexpr int64_t kAwake = INT64_MIN;
  static constexpr int64_t kNever = INT64_MAX;

  const Clock* const clock_;
  internal::FoldingQueue<T, Hash, Eq> queue_;
  // queue_, seen as the keeper of the waiting items.
  internal::WaitingItems<T>* const waiting_;
  std::unique_ptr<CounterMetric> retries_;

  // AddAfter's side. Lock order: the queue's index lock, then inbox_mu_.
  mutable Mutex inbox_mu_;
  mutable CondVar cv_;  // wakes the timer thread
  mutable std::vector<Delayed> inbox_ ABSL_GUARDED_BY(inbox_mu_);
  bool stopping_ ABSL_GUARDED_BY(inbox_mu_) = false;
  // When the timer thread will wake by itself, or kAwake.
  mutable int64_t wake_at_ ABSL_GUARDED_BY(inbox_mu_) = kAwake;
  // Set to make the timer thread look at the queue again before it sleeps.
  mutable bool kicked_ ABSL_GUARDED_BY(inbox_mu_) = false;
  // The earliest ready time in the inbox, or kNever.
  // Written under inbox_mu_, read by the timer without it.
  mutable std::atomic<int64_t> inbox_earliest_{kNever};
  std::thread timer_;
};

}  // namespace kcr::workqueue

#endif  // KCR_RUNTIME_WORKQUEUE_DELAYING_QUEUE_H_
