// PriorityQueue: a rate-limiting work queue whose items carry a priority
// (controller-runtime's pkg/controller/priorityqueue, its default queue
// since v0.23).
//
// It keeps the work-queue contract of queue.h (stingy: an item is handed to
// one worker at a time and added several times before it is taken it is
// handed out once; an item added while it is processed is queued again on
// Done; ShutDown and ShutDownWithDrain as there), and the delaying and
// rate-limiting layers of delaying_queue.h and rate_limiting_queue.h, so a
// controller can use it wherever it takes a RateLimitingInterface. What it
// adds:
//
//  * Every item has an int priority (default 0). Get hands out the item of
//    the highest priority; within a priority, items go in the order they
//    became ready (FIFO, so fair within a priority).
//  * AddWithOpts(opts, items) adds with a priority, a delay, or a delay
//    chosen by the rate limiter; Add, AddAfter and AddRateLimited are
//    AddWithOpts at the default priority.
//  * Adding an item already queued (ready or waiting for its delay) merges
//    the two adds, as controller-runtime does: the item keeps the higher of
//    the two priorities and the earlier of the two ready times (an item
//    already ready stays ready). An item whose priority rises goes to the
//    back of its new priority's line.
//  * GetWithPriority tells the worker at which priority it took the item,
//    so that a retry can keep it.
//
// A low priority only orders items; it never starves anything by itself: a
// low-priority item waits while items of a higher priority are ready.
//
// Metrics are the queue's usual seven (metrics.h), under the same names; a
// provider that also implements PriorityMetricsProvider gets the depth per
// priority besides.
//
// Implementation: one mutex guards an index (item -> entry), the ready
// items as one intrusive FIFO per priority in a map from priority to FIFO
// (few priorities are in use at a time, so the map is small), and the
// waiting items ordered by ready time. Get and Done are O(log P) for P
// priorities in use; an add is O(1) for a ready item and O(log W) for a
// waiting one. One timer thread per queue moves waiting items to their
// FIFO when they are due and refreshes the unfinished-work gauges every
// 500 ms; Get and Len also move due items themselves, so neither waits for
// that thread.
#ifndef KCR_RUNTIME_WORKQUEUE_PRIORITY_QUEUE_H_
#define KCR_RUNTIME_WORKQUEUE_PRIORITY_QUEUE_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "runtime/workqueue/default_rate_limiters.h"
#include "runtime/workqueue/metrics.h"
#include "runtime/workqueue/queue.h"
#include "runtime/workqueue/rate_limiter.h"
#include "runtime/workqueue/rate_limiting_queue.h"

namespace kcr::workqueue {

// The priority of an add that names none.
inline constexpr int kDefaultPriority = 0;

// How an item is added (controller-runtime's AddOpts).
struct AddOpts {
  // Higher is handed out first. Unset: kDefaultPriority.
  std::optional<int> priority;
  // Ready once this has passed (at once if <= 0).
  absl::Duration after = absl::ZeroDuration();
  // Ready once the rate limiter's delay for the item has passed (the
  // shorter of that and `after` when both are set). Counts a failure for
  // per-item limiters, as AddRateLimited does.
  bool rate_limited = false;
};

// An item handed out with the priority it was queued at.
template <typename T>
struct PrioritizedItem {
  T item;
  int priority = kDefaultPriority;
};

// The priority-queue contract: a RateLimitingInterface whose adds may carry
// a priority. All methods are thread-safe.
template <typename T>
class PriorityInterface : public RateLimitingInterface<T> {
 public:
  // Adds every item of `items` with `opts`; see the file comment for how an
  // add merges into an item already queued. Ignored once shutting down.
  virtual void AddWithOpts(const AddOpts& opts, absl::Span<const T> items) = 0;
  void AddWithOpts(const AddOpts& opts, const T& item) {
    AddWithOpts(opts, absl::Span<const T>(&item, 1));
  }

  // As Get, with the priority the item was queued at.
  virtual std::optional<PrioritizedItem<T>> GetWithPriority() = 0;
};

// Depth per priority, for a provider that offers it.
class PriorityGaugeMetric {
 public:
  virtual ~PriorityGaugeMetric() = default;
  virtual void Inc(int priority) = 0;
  virtual void Dec(int priority) = 0;
};

// A MetricsProvider may also implement this; a PriorityQueue then records
// its depth per priority beside workqueue_depth.
class PriorityMetricsProvider {
 public:
  virtual ~PriorityMetricsProvider() = default;
  // Items waiting in the queue, by priority.
  virtual std::unique_ptr<PriorityGaugeMetric> NewDepthWithPriorityMetric(
      std::string_view name) = 0;
};

// How often the unfinished-work gauges are refreshed (client-go's period).
inline constexpr absl::Duration kPriorityQueueMetricsPeriod =
    absl::Milliseconds(500);

template <typename T = std::string, typename Hash = absl::Hash<T>,
          typename Eq = std::equal_to<T>>
class PriorityQueue final : public PriorityInterface<T> {
 public:
  using Options = QueueOptions;
  using PriorityInterface<T>::AddWithOpts;

  // `limiter` null means DefaultControllerRateLimiter() on the queue's clock,
  // as for RateLimitingQueue.
  explicit PriorityQueue(std::unique_ptr<RateLimiter<T>> limiter = nullptr,
                         Options options = {})
      : clock_(options.clock != nullptr ? options.clock : Clock::Real()),
        limiter_(limiter != nullptr
                     ? std::move(limiter)
                     : DefaultControllerRateLimiter<T>(options.clock)) {
    if (MetricsProvider* provider = internal::ResolveProvider(options)) {
      metrics_ = std::make_unique<Metrics>(provider, options.name);
    }
    timer_ = std::thread([this] { TimerLoop(); });
  }

  // Shuts the queue down. Items still queued are dropped.
  ~PriorityQueue() override {
    ShutDown();
    timer_.join();
  }

  PriorityQueue(const PriorityQueue&) = delete;
  PriorityQueue& operator=(const PriorityQueue&) = delete;

  void AddWithOpts(const AddOpts& opts, absl::Span<const T> items) override {
    if (items.empty() || ShuttingDown()) return;
    const int priority = opts.priority.value_or(kDefaultPriority);
    const bool retry = opts.rate_limited || opts.after > absl::ZeroDuration();
    if (!opts.rate_limited) {
      // One delay for all: read the clock once, outside the lock.
      const int64_t ready_at = ReadyAt(opts.after);
      MutexLock lock(&mu_);
      for (const T& item : items) AddLocked(item, priority, ready_at, retry);
      return;
    }
    // The limiter has a lock of its own: ask it before taking ours.
    std::vector<int64_t> ready_at;
    ready_at.reserve(items.size());
    for (const T& item : items) {
      absl::Duration after = limiter_->When(item);
      if (opts.after > absl::ZeroDuration())
        after = std::min(after, opts.after);
      ready_at.push_back(ReadyAt(after));
    }
    MutexLock lock(&mu_);
    for (size_t i = 0; i < items.size(); ++i) {
      AddLocked(items[i], priority, ready_at[i], retry);
    }
  }

  void Add(const T& item) override {
    MutexLock lock(&mu_);
    AddLocked(item, kDefaultPriority, kNow, false);
  }
  void Add(T&& item) override {
    MutexLock lock(&mu_);
    AddLocked(std::move(item), kDefaultPriority, kNow, false);
  }
  // Counted as a retry even when `delay` <= 0, as DelayingQueue counts it.
  void AddAfter(const T& item, absl::Duration delay) override {
    if (ShuttingDown()) return;
    const int64_t ready_at = ReadyAt(delay);
    MutexLock lock(&mu_);
    AddLocked(item, kDefaultPriority, ready_at, true);
  }
  void AddRateLimited(const T& item) override {
    AddWithOpts(AddOpts{std::nullopt, absl::ZeroDuration(), true}, item);
  }
  void Forget(const T& item) override { limiter_->Forget(item); }
  int NumRequeues(const T& item) override {
    return limiter_->NumRequeues(item);
  }

  // Items ready to be handed out (not those waiting for their delay, nor
  // those being processed).
  size_t Len() const override {
    MutexLock lock(&mu_);
    MoveDueLocked(clock_->Now());
    return ready_count_;
  }

  // Items waiting for their delay to pass.
  size_t WaitingLen() const {
    MutexLock lock(&mu_);
    MoveDueLocked(clock_->Now());
    return waiting_.size();
  }

  std::optional<T> Get() override {
    std::optional<PrioritizedItem<T>> got = GetWithPriority();
    if (!got.has_value()) return std::nullopt;
    return std::move(got->item);
  }

  std::optional<PrioritizedItem<T>> GetWithPriority() override {
    std::optional<PrioritizedItem<T>> out;
    double latency = -1;
    {
      MutexLock lock(&mu_);
      bool spun = false;
      for (;;) {
        if (!waiting_.empty()) MoveDueLocked(clock_->Now());
        if (ready_count_ > 0) break;
        if (shutting_down_) return std::nullopt;
        if (!spun) {
          // Nothing ready: yield a few times before sleeping, so that a
          // producer adding one item at a time does not pay a futex wake-up
          // per item (costly on virtual machines).
          spun = true;
          mu_.Unlock();
          for (int i = 0; i < kSpinsBeforeSleep &&
                          ready_hint_.load(std::memory_order_relaxed) == 0;
               ++i) {
            std::this_thread::yield();
          }
          mu_.Lock();
          continue;
        }
        ++sleeping_workers_;
        worker_cv_.Wait(&mu_);
        --sleeping_workers_;
        if (signalled_workers_ > 0) --signalled_workers_;
      }
      Entry* e = PopLocked();
      e->processing = true;
      e->state = State::kNone;
      ++processing_count_;
      if (metrics_ != nullptr) {
        const int64_t now = absl::ToUnixNanos(clock_->Now());
        metrics_->Got(e->priority);
        if (e->added_ns != 0) latency = Seconds(now - e->added_ns);
        e->added_ns = 0;
        e->started_ns = now;
      }
      out.emplace(PrioritizedItem<T>{*e->key, e->priority});
      // Another item may be ready for another sleeping worker (several
      // became due at once, or one Signal woke a worker that lost the race).
      if (ready_count_ > 0) WakeWorkerLocked();
    }
    if (latency >= 0) metrics_->latency->Observe(latency);
    return out;
  }

  void Done(const T& item) override {
    double work = -1;
    {
      MutexLock lock(&mu_);
      auto it = index_.find(item);
      if (it == index_.end() || !it->second.processing) return;
      Entry* e = &it->second;
      e->processing = false;
      --processing_count_;
      if (metrics_ != nullptr && e->started_ns != 0) {
        work = Seconds(absl::ToUnixNanos(clock_->Now()) - e->started_ns);
        e->started_ns = 0;
      }
      switch (e->state) {
        case State::kNone:
          index_.erase(it);
          break;
        case State::kDirty:
          // Added while processed: queued now, behind its priority's line.
          e->seq = next_seq_++;
          LinkReadyLocked(e);
          WakeWorkerLocked();
          break;
        case State::kWaiting:
        case State::kReady:
          break;
      }
      if (processing_count_ == 0 && draining_) drain_cv_.SignalAll();
    }
    if (work >= 0) metrics_->work_duration->Observe(work);
  }

  void ShutDown() override {
    MutexLock lock(&mu_);
    shutting_down_ = true;
    draining_ = false;
    worker_cv_.SignalAll();
    timer_cv_.Signal();
    drain_cv_.SignalAll();
  }

  // As ShutDown, then blocks until every item handed out is Done (or until
  // ShutDown is called from another thread).
  void ShutDownWithDrain() override {
    MutexLock lock(&mu_);
    shutting_down_ = true;
    draining_ = true;
    worker_cv_.SignalAll();
    timer_cv_.Signal();
    while (draining_ && processing_count_ > 0) drain_cv_.Wait(&mu_);
    draining_ = false;
  }

  bool ShuttingDown() const override {
    MutexLock lock(&mu_);
    return shutting_down_;
  }

 private:
  // Where an entry is, besides (perhaps) being processed.
  enum class State {
    kNone,     // nowhere: only being processed
    kReady,    // in its priority's FIFO (never while processed)
    kDirty,    // ready, but being processed: queued again on Done
    kWaiting,  // in waiting_, until ready_at
  };

  struct Entry {
    const T* key = nullptr;  // the index's key, stable (node_hash_map)
    int priority = kDefaultPriority;
    // Order within a priority (FIFO), or among equal ready times.
    uint64_t seq = 0;
    int64_t ready_at = 0;  // Unix ns, while kWaiting
    State state = State::kNone;
    bool processing = false;
    // The FIFO of its priority, while kReady.
    Entry* prev = nullptr;
    Entry* next = nullptr;
    // Metrics: when it first became ready since its last Get, and when its
    // processing started (Unix ns; 0: unknown).
    int64_t added_ns = 0;
    int64_t started_ns = 0;
  };

  // One priority's ready items, oldest first.
  struct Fifo {
    Entry* head = nullptr;
    Entry* tail = nullptr;
  };

  // Earliest first; then as Get would take them.
  struct WaitingOrder {
    bool operator()(const Entry* a, const Entry* b) const {
      if (a->ready_at != b->ready_at) return a->ready_at < b->ready_at;
      if (a->priority != b->priority) return a->priority > b->priority;
      return a->seq < b->seq;
    }
  };

  struct Metrics {
    Metrics(MetricsProvider* provider, std::string_view name)
        : depth(provider->NewDepthMetric(name)),
          adds(provider->NewAddsMetric(name)),
          latency(provider->NewLatencyMetric(name)),
          work_duration(provider->NewWorkDurationMetric(name)),
          unfinished_work(provider->NewUnfinishedWorkSecondsMetric(name)),
          longest_running(
              provider->NewLongestRunningProcessorSecondsMetric(name)),
          retries(provider->NewRetriesMetric(name)) {
      if (auto* p = dynamic_cast<PriorityMetricsProvider*>(provider)) {
        depth_by_priority = p->NewDepthWithPriorityMetric(name);
      }
    }
    void Added(int priority) {
      adds->Inc();
      depth->Inc();
      if (depth_by_priority != nullptr) depth_by_priority->Inc(priority);
    }
    void Got(int priority) {
      depth->Dec();
      if (depth_by_priority != nullptr) depth_by_priority->Dec(priority);
    }
    void Moved(int from, int to) {
      if (depth_by_priority == nullptr) return;
      depth_by_priority->Dec(from);
      depth_by_priority->Inc(to);
    }

    const std::unique_ptr<GaugeMetric> depth;
    const std::unique_ptr<CounterMetric> adds;
    const std::unique_ptr<HistogramMetric> latency;
    const std::unique_ptr<HistogramMetric> work_duration;
    const std::unique_ptr<SettableGaugeMetric> unfinished_work;
    const std::unique_ptr<SettableGaugeMetric> longest_running;
    const std::unique_ptr<CounterMetric> retries;
    std::unique_ptr<PriorityGaugeMetric> depth_by_priority;  // may be null
  };

  // A ready time meaning "now".
  static constexpr int64_t kNow = INT64_MIN;
  // How long the timer sleeps at most with nothing to do.
  static constexpr absl::Duration kMaxWait = absl::Seconds(10);
  // Yields of a worker that finds nothing ready, before it sleeps.
  static constexpr int kSpinsBeforeSleep = 64;
  // Lines (priorities) kept while empty.
  static constexpr size_t kMaxEmptyLines = 8;

  static double Seconds(int64_t nanos) { return nanos * 1e-9; }

  int64_t ReadyAt(absl::Duration after) const {
    if (after <= absl::ZeroDuration()) return kNow;
    return absl::ToUnixNanos(clock_->Now() + after);
  }

  // One add of `item` at `priority`, ready at `ready_at` (kNow: at once).
  template <typename U>
  void AddLocked(U&& item, int priority, int64_t ready_at, bool retry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (shutting_down_) return;
    if (retry && metrics_ != nullptr) metrics_->retries->Inc();
    auto [it, inserted] = index_.try_emplace(std::forward<U>(item));
    Entry* e = &it->second;
    if (inserted) {
      e->key = &it->first;
      e->priority = priority;
      e->seq = next_seq_++;
      if (ready_at == kNow) {
        BecomeReadyLocked(e);
      } else {
        WaitLocked(e, ready_at);
      }
      return;
    }
    const bool raised = priority > e->priority;
    switch (e->state) {
      case State::kNone:  // being processed, not added since
        e->priority = priority;
        e->seq = next_seq_++;
        if (ready_at == kNow) {
          BecomeReadyLocked(e);
        } else {
          WaitLocked(e, ready_at);
        }
        return;
      case State::kReady:  // stays ready; moves back only if raised
        if (!raised) return;
        UnlinkReadyLocked(e);
        if (metrics_ != nullptr) metrics_->Moved(e->priority, priority);
        e->priority = priority;
        e->seq = next_seq_++;
        LinkReadyLocked(e);
        return;
      case State::kDirty:  // ready at Done, behind its priority's line
        if (raised) {
          if (metrics_ != nullptr) metrics_->Moved(e->priority, priority);
          e->priority = priority;
        }
        return;
      case State::kWaiting: {
        if (ready_at != kNow && ready_at >= e->ready_at && !raised) return;
        waiting_.erase(e);
        if (raised) {
          e->priority = priority;
          e->seq = next_seq_++;
        }
        if (ready_at == kNow) {
          e->state = State::kNone;
          BecomeReadyLocked(e);
        } else {
          WaitLocked(e, std::min(ready_at, e->ready_at));
        }
        return;
      }
    }
  }

  // `e` (kNone, not in waiting_) is ready now: into its FIFO, or marked
  // to be queued at Done if it is being processed.
  void BecomeReadyLocked(Entry* e) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (metrics_ != nullptr) {
      metrics_->Added(e->priority);
      if (e->added_ns == 0) e->added_ns = absl::ToUnixNanos(clock_->Now());
    }
    if (e->processing) {
      e->state = State::kDirty;
      return;
    }
    LinkReadyLocked(e);
    WakeWorkerLocked();
  }

  // Signals a worker asleep in Get, unless every sleeper has been
  // signalled already and not yet woken (a Signal per add would cost a
  // futex call per add while one worker is slow to wake).
  void WakeWorkerLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (sleeping_workers_ > signalled_workers_) {
      ++signalled_workers_;
      worker_cv_.Signal();
    }
  }

  // `e` waits until `ready_at`; wakes the timer if it is the new earliest.
  void WaitLocked(Entry* e, int64_t ready_at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    e->state = State::kWaiting;
    e->ready_at = ready_at;
    waiting_.insert(e);
    if (ready_at < timer_wake_at_) {
      timer_wake_at_ = ready_at;
      timer_cv_.Signal();
    }
    // A worker asleep in Get waits for ready items only; the timer (or the
    // next Get) moves this one when it is due.
  }

  void LinkReadyLocked(Entry* e) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    e->state = State::kReady;
    Fifo& fifo = ready_[e->priority];
    e->prev = fifo.tail;
    e->next = nullptr;
    if (fifo.tail != nullptr) {
      fifo.tail->next = e;
    } else {
      fifo.head = e;
    }
    fifo.tail = e;
    ++ready_count_;
    ready_hint_.store(ready_count_, std::memory_order_relaxed);
  }

  void UnlinkReadyLocked(Entry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = ready_.find(e->priority);
    Fifo& fifo = it->second;
    (e->prev != nullptr ? e->prev->next : fifo.head) = e->next;
    (e->next != nullptr ? e->next->prev : fifo.tail) = e->prev;
    e->prev = e->next = nullptr;
    e->state = State::kNone;
    --ready_count_;
    ready_hint_.store(ready_count_, std::memory_order_relaxed);
    // An empty line is kept (a queue that empties and fills again would
    // otherwise free and allocate its map node every time), unless many
    // priorities have been used.
    if (fifo.head == nullptr && ready_.size() > kMaxEmptyLines) {
      ready_.erase(it);
    }
  }

  // The head of the highest priority's FIFO, unlinked. ready_count_ > 0.
  Entry* PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = ready_.begin();
    while (it->second.head == nullptr) ++it;
    Entry* e = it->second.head;
    UnlinkReadyLocked(e);
    return e;
  }

  // Moves the items due by `now` to their FIFOs, earliest first. Nothing
  // becomes ready once the queue is shutting down (as DelayingQueue).
  void MoveDueLocked(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (waiting_.empty() || shutting_down_) return;
    const int64_t now_ns = absl::ToUnixNanos(now);
    while (!waiting_.empty() && (*waiting_.begin())->ready_at <= now_ns) {
      Entry* e = *waiting_.begin();
      waiting_.erase(waiting_.begin());
      e->state = State::kNone;
      // In the order they became ready, not the order they were added.
      e->seq = next_seq_++;
      BecomeReadyLocked(e);
    }
  }

  void UpdateUnfinishedWorkLocked(int64_t now_ns)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    double total = 0;
    double oldest = 0;
    if (processing_count_ > 0) {
      for (const auto& [key, e] : index_) {
        if (!e.processing || e.started_ns == 0) continue;
        const double age = Seconds(now_ns - e.started_ns);
        total += age;
        oldest = std::max(oldest, age);
      }
    }
    metrics_->unfinished_work->Set(total);
    metrics_->longest_running->Set(oldest);
  }

  // Moves due items to their FIFOs and refreshes the unfinished-work
  // gauges, then sleeps until the next item is due, an earlier one is
  // added, or the next refresh.
  void TimerLoop() {
    MutexLock lock(&mu_);
    absl::Time next_refresh = clock_->Now() + kPriorityQueueMetricsPeriod;
    while (!shutting_down_) {
      const absl::Time now = clock_->Now();
      MoveDueLocked(now);
      absl::Time wake = now + kMaxWait;
      if (metrics_ != nullptr) {
        if (now >= next_refresh) {
          UpdateUnfinishedWorkLocked(absl::ToUnixNanos(now));
          next_refresh = now + kPriorityQueueMetricsPeriod;
        }
        wake = std::min(wake, next_refresh);
      }
      if (!waiting_.empty()) {
        wake =
            std::min(wake, absl::FromUnixNanos((*waiting_.begin())->ready_at));
      }
      timer_wake_at_ = absl::ToUnixNanos(wake);
      clock_->WaitUntil(&mu_, &timer_cv_, wake);
    }
  }

  const Clock* const clock_;
  const std::unique_ptr<RateLimiter<T>> limiter_;
  std::unique_ptr<Metrics> metrics_;  // null: no metrics

  mutable Mutex mu_;
  // Every item queued, waiting or being processed.
  absl::node_hash_map<T, Entry, Hash, Eq> index_ ABSL_GUARDED_BY(mu_);
  // The ready items by priority, highest first. Mutable, with the waiting
  // items: Len moves the due ones.
  mutable std::map<int, Fifo, std::greater<int>> ready_ ABSL_GUARDED_BY(mu_);
  mutable size_t ready_count_ ABSL_GUARDED_BY(mu_) = 0;
  mutable std::set<Entry*, WaitingOrder> waiting_ ABSL_GUARDED_BY(mu_);
  mutable uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  size_t processing_count_ ABSL_GUARDED_BY(mu_) = 0;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  // A ShutDownWithDrain waits for processing_count_ to reach 0.
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  int sleeping_workers_ ABSL_GUARDED_BY(mu_) = 0;
  // Sleepers signalled and not yet awake.
  mutable int signalled_workers_ ABSL_GUARDED_BY(mu_) = 0;
  // ready_count_, for a worker about to sleep to watch without the lock.
  mutable std::atomic<size_t> ready_hint_{0};
  // When the timer thread will wake by itself (Unix ns).
  int64_t timer_wake_at_ ABSL_GUARDED_BY(mu_) = INT64_MIN;

  mutable CondVar worker_cv_;  // a ready item for a worker asleep in Get
  mutable CondVar timer_cv_;   // an earlier ready time, or shutdown
  mutable CondVar drain_cv_;   // processing_count_ fell to 0, or ShutDown
  std::thread timer_;
};

}  // namespace kcr::workqueue

#endif  // KCR_RUNTIME_WORKQUEUE_PRIORITY_QUEUE_H_
