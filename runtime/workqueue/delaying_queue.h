// DelayingQueue: a work queue that can also add an item after a delay.
//
// One timer thread per queue (none per item) keeps the waiting items ordered
// by ready time and adds each to the queue when its time comes. Waiting
// items are deduplicated: a second AddAfter for an item already waiting keeps
// the earlier ready time, as client-go does.
//
// Implementation note: ready times usually arrive in non-decreasing order
// (the same delay for every item), so they are appended to a sorted run in
// O(1); only out-of-order times go to a binary heap. The next item is the
// earlier of the two fronts.
#ifndef KCR_RUNTIME_WORKQUEUE_DELAYING_QUEUE_H_
#define KCR_RUNTIME_WORKQUEUE_DELAYING_QUEUE_H_

#include <algorithm>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/time/time.h"
#include "runtime/base/clock.h"
#include "runtime/base/mutex.h"
#include "runtime/workqueue/metrics.h"
#include "runtime/workqueue/queue.h"

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
        queue_(options) {
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
    const absl::Time ready = clock_->Now() + delay;
    bool wake = false;
    {
      MutexLock lock(&mu_);
      if (stopping_) return;
      auto [it, inserted] = waiting_.try_emplace(item, ready);
      if (!inserted) {
        if (ready >= it->second) return;  // keep the earlier time
        it->second = ready;
      }
      wake = !HasNextLocked() || ready < NextReadyLocked();
      PushLocked(Waiting{ready, item});
    }
    if (wake) cv_.Signal();
  }

  // Items waiting for their delay to pass (not yet in the queue).
  size_t WaitingLen() const {
    MutexLock lock(&mu_);
    return waiting_.size();
  }

 private:
  struct Waiting {
    absl::Time ready;
    T item;
  };
  struct LaterFirst {
    bool operator()(const Waiting& a, const Waiting& b) const {
      return a.ready > b.ready;
    }
  };

  void StopTimer() {
    {
      MutexLock lock(&mu_);
      stopping_ = true;
    }
    cv_.SignalAll();
  }

  bool HasNextLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !sorted_.empty() || !heap_.empty();
  }

  absl::Time NextReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (sorted_.empty()) return heap_.front().ready;
    if (heap_.empty()) return sorted_.front().ready;
    return std::min(sorted_.front().ready, heap_.front().ready);
  }

  void PushLocked(Waiting w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (sorted_.empty() || w.ready >= sorted_.back().ready) {
      sorted_.push_back(std::move(w));
    } else {
      heap_.push_back(std::move(w));
      std::push_heap(heap_.begin(), heap_.end(), LaterFirst());
    }
  }

  Waiting PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (heap_.empty() ||
        (!sorted_.empty() && sorted_.front().ready <= heap_.front().ready)) {
      Waiting w = std::move(sorted_.front());
      sorted_.pop_front();
      return w;
    }
    std::pop_heap(heap_.begin(), heap_.end(), LaterFirst());
    Waiting w = std::move(heap_.back());
    heap_.pop_back();
    return w;
  }

  void WaitingLoop() {
    MutexLock lock(&mu_);
    while (!stopping_) {
      const absl::Time now = clock_->Now();
      while (HasNextLocked() && NextReadyLocked() <= now) {
        Waiting w = PopLocked();
        auto it = waiting_.find(w.item);
        // An entry superseded by an earlier AddAfter of the same item.
        if (it == waiting_.end() || it->second != w.ready) continue;
        waiting_.erase(it);
        queue_.Add(std::move(w.item));
      }
      const absl::Time next = HasNextLocked()
                                  ? NextReadyLocked()
                                  : now + kDelayingQueueMaxWait;
      clock_->WaitUntil(&mu_, &cv_, next);
    }
  }

  const Clock* const clock_;
  Queue<T, Hash, Eq> queue_;
  std::unique_ptr<CounterMetric> retries_;
  mutable Mutex mu_;
  CondVar cv_;  // wakes the timer thread
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // The ready time of every waiting item; heap entries that disagree with
  // it were superseded.
  absl::flat_hash_map<T, absl::Time, Hash, Eq> waiting_ ABSL_GUARDED_BY(mu_);
  std::deque<Waiting> sorted_ ABSL_GUARDED_BY(mu_);
  std::vector<Waiting> heap_ ABSL_GUARDED_BY(mu_);
  std::thread timer_;
};

}  // namespace kcr::workqueue

#endif  // KCR_RUNTIME_WORKQUEUE_DELAYING_QUEUE_H_
