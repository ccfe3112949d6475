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
// inbox into its own structures: each waiting item is stored once, in a slab
// entry with its ready time, found through a hash index of slot numbers.
// Ready times usually arrive in non-decreasing order (the same delay for
// every item), so (ready, slot) pairs are appended to a sorted run in O(1);
// only out-of-order times go to a binary heap. The next item is the earlier
// of the two fronts. An earlier AddAfter for a waiting item updates its entry
// and pushes a new pair; pairs that no longer match their entry are skipped.
#ifndef KCR_RUNTIME_WORKQUEUE_DELAYING_QUEUE_H_
#define KCR_RUNTIME_WORKQUEUE_DELAYING_QUEUE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/time/time.h"
#include "runtime/base/clock.h"
#include "runtime/base/mutex.h"
#include "runtime/workqueue/internal/slab.h"
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
    const int64_t ready = absl::ToUnixNanos(clock_->Now() + delay);
    bool wake = false;
    {
      MutexLock lock(&inbox_mu_);
      if (stopping_) return;
      inbox_.push_back(Incoming{ready, item});
      // Due before the timer wakes, or enough items to fold: wake it now.
      if (ready < wake_at_ ||
          (inbox_.size() >= kInboxLimit && wake_at_ != kAwake)) {
        wake_at_ = kAwake;
        kicked_ = true;
        wake = true;
      }
    }
    if (wake) cv_.Signal();
  }

  // Items waiting for their delay to pass (not yet in the queue).
  size_t WaitingLen() const {
    MutexLock lock(&mu_);
    FoldInboxLocked();
    return index_.size();
  }

 private:
  // An AddAfter not yet folded in.
  struct Incoming {
    int64_t ready;  // Unix nanoseconds
    T item;
  };

  // A waiting item; `key` is alive while `live`.
  struct Entry {
    Entry() {}
    ~Entry() {
      if (live) key.~T();
    }
    union {
      T key;
    };
    int64_t ready = 0;  // Unix nanoseconds
    uint32_t next = internal::kNilSlot;
    uint32_t hash = 0;  // the key's, so that moving it on never hashes it
    bool live = false;
  };
  // A ready time for an entry; stale once the entry's time changes or the
  // entry leaves.
  struct Pending {
    int64_t ready;
    uint32_t slot;
  };
  struct LaterFirst {
    bool operator()(const Pending& a, const Pending& b) const {
      return a.ready > b.ready;
    }
  };

  // The index holds (slot, 32 bits of the key's hash) and compares keys
  // through the slab, as the queue's does.
  struct SlotRef {
    uint32_t slot;
    uint32_t hash;
  };
  struct HashedKey {
    const T* key;
    uint32_t hash;
  };
  static uint32_t HashOf(const T& key) {
    return static_cast<uint32_t>(Hash()(key));
  }
  struct IndexHash {
    using is_transparent = void;
    size_t operator()(SlotRef ref) const { return ref.hash; }
    size_t operator()(HashedKey key) const { return key.hash; }
  };
  struct IndexEq {
    using is_transparent = void;
    const internal::Slab<Entry>* slab;
    bool operator()(SlotRef a, SlotRef b) const { return a.slot == b.slot; }
    bool operator()(SlotRef a, HashedKey key) const {
      return a.hash == key.hash && Eq()(slab->at(a.slot).key, *key.key);
    }
    bool operator()(HashedKey key, SlotRef a) const { return (*this)(a, key); }
  };

  void StopTimer() {
    {
      MutexLock lock(&inbox_mu_);
      stopping_ = true;
    }
    cv_.SignalAll();
  }

  // Moves the inbox into the slab, the index and the pending pairs, keeping
  // the earlier ready time of an item added twice.
  void FoldInboxLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    {
      MutexLock lock(&inbox_mu_);
      if (inbox_.empty()) return;
      inbox_.swap(folding_);
    }
    for (Incoming& in : folding_) {
      const uint32_t hash = HashOf(in.item);
      uint32_t slot = internal::kNilSlot;
      // The lambda runs inside lazy_emplace, under mu_; the analysis cannot
      // follow it there.
      auto it = index_.lazy_emplace(
          HashedKey{&in.item, hash},
          [&](const auto& construct) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            slot = slab_.Allocate();
            Entry& entry = slab_.at(slot);
            new (&entry.key) T(std::move(in.item));
            entry.live = true;
            entry.ready = in.ready;
            entry.hash = hash;
            construct(SlotRef{slot, hash});
          });
      if (slot == internal::kNilSlot) {
        slot = it->slot;
        Entry& entry = slab_.at(slot);
        if (in.ready >= entry.ready) continue;  // keep the earlier time
        entry.ready = in.ready;
      }
      PushLocked(Pending{in.ready, slot});
    }
    folding_.clear();
  }

  bool HasNextLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !sorted_.empty() || !heap_.empty();
  }

  int64_t NextReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (sorted_.empty()) return heap_.front().ready;
    if (heap_.empty()) return sorted_.front().ready;
    return std::min(sorted_.front().ready, heap_.front().ready);
  }

  void PushLocked(Pending p) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (sorted_.empty() || p.ready >= sorted_.back().ready) {
      sorted_.push_back(p);
    } else {
      heap_.push_back(p);
      std::push_heap(heap_.begin(), heap_.end(), LaterFirst());
    }
  }

  Pending PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (heap_.empty() ||
        (!sorted_.empty() && sorted_.front().ready <= heap_.front().ready)) {
      const Pending p = sorted_.front();
      sorted_.pop_front();
      return p;
    }
    std::pop_heap(heap_.begin(), heap_.end(), LaterFirst());
    const Pending p = heap_.back();
    heap_.pop_back();
    return p;
  }

  // Folds the inbox, moves due items to the queue in batches (adding them
  // with mu_ released), and sleeps until the next item is due, an AddAfter
  // wakes it, or shutdown.
  void WaitingLoop() {
    std::vector<T> due;
    for (;;) {
      int64_t next;
      {
        MutexLock lock(&mu_);
        // Time first: every item added before it is in the inbox, so items
        // due now come out in ready order whichever fold brought them in.
        const int64_t now = absl::ToUnixNanos(clock_->Now());
        FoldInboxLocked();
        while (HasNextLocked() && NextReadyLocked() <= now &&
               due.size() < kMaxDueBatch) {
          const Pending p = PopLocked();
          Entry& entry = slab_.at(p.slot);
          // Superseded by an earlier AddAfter, or already moved.
          if (!entry.live || entry.ready != p.ready) continue;
          index_.erase(SlotRef{p.slot, entry.hash});
          due.push_back(std::move(entry.key));
          entry.key.~T();
          entry.live = false;
          slab_.Free(p.slot);
        }
        next = HasNextLocked() ? NextReadyLocked()
                               : now + absl::ToInt64Nanoseconds(
                                           kDelayingQueueMaxWait);
      }
      if (!due.empty()) {
        queue_.AddAll(&due);
        continue;
      }
      MutexLock lock(&inbox_mu_);
      if (stopping_) return;
      if (!inbox_.empty()) continue;
      wake_at_ = next;
      const absl::Time deadline = absl::FromUnixNanos(next);
      while (!stopping_ && !kicked_ && clock_->Now() < deadline) {
        clock_->WaitUntil(&inbox_mu_, &cv_, deadline);
      }
      if (stopping_) return;
      kicked_ = false;
      wake_at_ = kAwake;
    }
  }

  // Due items moved per batch, so that a long run of due items reaches the
  // queue in steps.
  static constexpr size_t kMaxDueBatch = 256;

  // The timer thread is awake: AddAfter need not wake it.
  static constexpr int64_t kAwake = INT64_MIN;

  const Clock* const clock_;
  Queue<T, Hash, Eq> queue_;
  std::unique_ptr<CounterMetric> retries_;

  // Lock order: mu_, then inbox_mu_.

  // AddAfter's side.
  mutable Mutex inbox_mu_ ABSL_ACQUIRED_AFTER(mu_);
  CondVar cv_;  // wakes the timer thread
  mutable std::vector<Incoming> inbox_ ABSL_GUARDED_BY(inbox_mu_);
  bool stopping_ ABSL_GUARDED_BY(inbox_mu_) = false;
  // When the timer thread will wake by itself, or kAwake.
  int64_t wake_at_ ABSL_GUARDED_BY(inbox_mu_) = kAwake;
  bool kicked_ ABSL_GUARDED_BY(inbox_mu_) = false;

  // The timer's side: every waiting item, once, and the index from key to
  // slot.
  mutable Mutex mu_;
  mutable std::vector<Incoming> folding_ ABSL_GUARDED_BY(mu_);
  mutable internal::Slab<Entry> slab_ ABSL_GUARDED_BY(mu_);
  mutable absl::flat_hash_set<SlotRef, IndexHash, IndexEq> index_
      ABSL_GUARDED_BY(mu_){0, IndexHash{}, IndexEq{&slab_}};
  // (ready, slot) pairs in ready order, and those that arrived out of order.
  mutable std::deque<Pending> sorted_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<Pending> heap_ ABSL_GUARDED_BY(mu_);
  std::thread timer_;
};

}  // namespace kcr::workqueue

#endif  // KCR_RUNTIME_WORKQUEUE_DELAYING_QUEUE_H_
