// Queue: the work queue every controller drains, with client-go's
// util/workqueue semantics.
//
//  * Fair: items are handed out in the order they were added.
//  * Stingy: an item is never handed to two workers at once, and an item
//    added several times before a worker takes it is handed out once.
//  * An item added again while a worker processes it is queued again when
//    that worker calls Done.
//  * Any number of producers and consumers; Get blocks until an item is
//    available or the queue shuts down.
//
// Interface is the seam (DelayingInterface and RateLimitingInterface extend
// it); Queue is its one implementation.
//
// Implementation note. Producers and consumers use different locks, so a
// producer never waits for a worker:
//  * Add appends the key to a small inbox under `inbox_mu_` (one short
//    critical section, no hashing). Every kFoldBatch items the producer folds
//    the inbox into the queue proper if `mu_` is free (it never waits for a
//    worker there); at kInboxLimit it waits, which bounds the inbox.
//  * A consumer that finds nothing waiting folds the inbox itself (and Len
//    folds it first), so every observable result is that of client-go's
//    queue: duplicates collapse, order is kept, items added during
//    processing are queued again on Done.
//  * The queue proper is one chunked slab of slots (key, state, intrusive
//    FIFO link) and a hash index from key to slot. Folding an item in hashes
//    it once; Get hashes nothing; Done finds the slot through a per-thread
//    note of the last Get (falling back to the index) and only marks it
//    finished, and finished slots leave the index in batches at the next
//    fold. So workers pay O(1) per item and the hashing happens in batches.
//    Slots never move, so metrics key their timestamps by slot number.
//  * A consumer sleeps only when both are empty; a producer signals only when
//    a consumer sleeps and none is already being woken.
//  * A queue with metrics skips the inbox, so that adds, depth and queue
//    latency are recorded at the moment of Add, exactly as client-go does.
#ifndef KCR_RUNTIME_WORKQUEUE_QUEUE_H_
#define KCR_RUNTIME_WORKQUEUE_QUEUE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/time/time.h"
#include "glog/logging.h"
#include "runtime/base/clock.h"
#include "runtime/base/mutex.h"
#include "runtime/workqueue/internal/queue_metrics.h"
#include "runtime/workqueue/metrics.h"

namespace kcr::workqueue {

// The work-queue contract. All methods are thread-safe.
template <typename T>
class Interface {
 public:
  virtual ~Interface() = default;

  // Marks `item` as needing processing. Collapses into an item already
  // waiting; if the item is being processed it is queued again on Done.
  // Ignored once the queue is shutting down.
  virtual void Add(const T& item) = 0;
  virtual void Add(T&& item) = 0;

  // Items waiting to be handed out (not those being processed).
  virtual size_t Len() const = 0;

  // Blocks until an item is available and returns it; the caller must call
  // Done(item) when finished with it. After ShutDown, items still waiting are
  // handed out first; then Get returns std::nullopt at once.
  virtual std::optional<T> Get() = 0;

  // Marks the processing of `item` finished. If the item was added again
  // meanwhile, it is queued again. Done for an item that is not being
  // processed is ignored.
  virtual void Done(const T& item) = 0;

  // Stops accepting items and wakes every blocked Get. Returns at once.
  virtual void ShutDown() = 0;

  // As ShutDown, then blocks until every item handed out has been marked
  // Done. A later ShutDown from another thread releases it. Workers must call
  // Done, or this blocks forever.
  virtual void ShutDownWithDrain() = 0;

  virtual bool ShuttingDown() const = 0;
};

struct QueueOptions {
  // Names the queue in metrics (the `name` label). Empty: no metrics.
  std::string name;
  // Not owned. Null: the provider set with SetGlobalMetricsProvider, if any.
  MetricsProvider* metrics_provider = nullptr;
  // Not owned. Null: the real clock.
  const Clock* clock = nullptr;
};

namespace internal {

inline MetricsProvider* ResolveProvider(const QueueOptions& options) {
  if (options.name.empty()) return nullptr;
  return options.metrics_provider != nullptr ? options.metrics_provider
                                             : GlobalMetricsProvider();
}

}  // namespace internal

// How often the unfinished-work gauges are refreshed, as in client-go.
inline constexpr absl::Duration kUnfinishedWorkUpdatePeriod =
    absl::Milliseconds(500);

// A producer folds its inbox into the queue every kFoldBatch items when the
// queue's lock is free, and at kInboxLimit in any case.
inline constexpr size_t kFoldBatch = 64;
inline constexpr size_t kInboxLimit = 4096;

// T is any copyable type hashable by `Hash` (absl::Hash by default) and
// comparable by `Eq`; std::string keys ("namespace/name") are the usual case.
template <typename T = std::string, typename Hash = absl::Hash<T>,
          typename Eq = std::equal_to<T>>
class Queue final : public Interface<T> {
 public:
  using Options = QueueOptions;

  explicit Queue(Options options = {})
      : clock_(options.clock != nullptr ? options.clock : Clock::Real()),
        id_(next_id_.fetch_add(1) + 1),
        index_(0, IndexHash{&slab_}, IndexEq{&slab_}) {
    if (MetricsProvider* provider = internal::ResolveProvider(options)) {
      metrics_ = std::make_unique<internal::QueueMetrics>(provider,
                                                          options.name, clock_);
      updater_ = std::thread([this] { UpdateUnfinishedWorkLoop(); });
    }
  }

  // Shuts the queue down. Items still waiting are dropped.
  ~Queue() override {
    ShutDown();
    if (updater_.joinable()) updater_.join();
  }

  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  void Add(const T& item) override { AddImpl(item); }
  void Add(T&& item) override { AddImpl(std::move(item)); }

  size_t Len() const override {
    MutexLock lock(&mu_);
    // Folding changes how the items are stored, not which items are queued,
    // so a const Len may do it; the inbox and the queue proper are mutable.
    FoldInboxLocked();
    return len_;
  }

  std::optional<T> Get() override {
    for (;;) {
      {
        MutexLock lock(&mu_);
        bool shutting_down = false;
        if (head_ == kNil) shutting_down = FoldInboxLocked();
        if (head_ != kNil) return PopLocked();
        if (shutting_down) return std::nullopt;
      }
      SleepUntilWork();
    }
  }

  void Done(const T& item) override {
    bool requeued = false;
    bool wake_drain = false;
    {
      MutexLock lock(&mu_);
      const uint32_t slot = FindProcessingLocked(item);
      if (slot == kNil) return;  // not being processed
      Entry& entry = slab_.at(slot);
      if (metrics_ != nullptr) metrics_->Done(slot);
      --processing_;
      if (entry.state == kProcessingDirty) {
        entry.state = kQueued;
        PushLocked(slot);
        requeued = true;
      } else {
        entry.state = kFinished;
        finished_.push_back(slot);
        if (finished_.size() >= kInboxLimit) ReapLocked();
      }
      wake_drain = processing_ == 0 && draining_;
    }
    if (requeued) WakeOneSleeper();
    if (wake_drain) drain_cv_.SignalAll();
  }

  void ShutDown() override {
    {
      MutexLock lock(&inbox_mu_);
      shutting_down_.store(true);
    }
    inbox_cv_.SignalAll();
    {
      MutexLock lock(&mu_);
      draining_ = false;
    }
    drain_cv_.SignalAll();
    updater_cv_.SignalAll();
  }

  void ShutDownWithDrain() override {
    {
      MutexLock lock(&inbox_mu_);
      shutting_down_.store(true);
    }
    inbox_cv_.SignalAll();
    updater_cv_.SignalAll();
    MutexLock lock(&mu_);
    draining_ = true;
    while (processing_ != 0 && draining_) drain_cv_.Wait(&mu_);
  }

  bool ShuttingDown() const override { return shutting_down_.load(); }

 private:
  // kFinished: processed and Done, still in the index until the next reap.
  enum State : uint8_t {
    kFree,
    kQueued,
    kProcessing,
    kProcessingDirty,
    kFinished
  };
  static constexpr uint32_t kNil = UINT32_MAX;

  // One item. `key` is alive unless state == kFree; `next` links the FIFO
  // (kQueued) or the free list (kFree).
  struct Entry {
    Entry() {}
    ~Entry() {}
    union {
      T key;
    };
    uint32_t next = kNil;
    State state = kFree;
  };

  // Fixed-size chunks so that entries never move and growth never copies.
  class Slab {
   public:
    Slab() = default;
    Slab(const Slab&) = delete;
    Slab& operator=(const Slab&) = delete;
    ~Slab() {
      for (uint32_t i = 0; i < size_; ++i) {
        if (at(i).state != kFree) at(i).key.~T();
      }
    }

    Entry& at(uint32_t i) { return chunks_[i >> kChunkBits][i & kChunkMask]; }
    const Entry& at(uint32_t i) const {
      return chunks_[i >> kChunkBits][i & kChunkMask];
    }
    uint32_t size() const { return size_; }

    template <typename K>
    uint32_t Allocate(K&& key) {
      uint32_t i;
      if (free_ != kNil) {
        i = free_;
        free_ = at(i).next;
      } else {
        CHECK_LT(size_, kNil) << "work queue holds 2^32 items";
        if ((size_ & kChunkMask) == 0) {
          chunks_.push_back(std::make_unique<Entry[]>(kChunkSize));
        }
        i = size_++;
      }
      Entry& entry = at(i);
      new (&entry.key) T(std::forward<K>(key));
      entry.next = kNil;
      return i;
    }

    void Free(uint32_t i) {
      Entry& entry = at(i);
      entry.key.~T();
      entry.state = kFree;
      entry.next = free_;
      free_ = i;
    }

   private:
    static constexpr uint32_t kChunkBits = 8;
    static constexpr uint32_t kChunkSize = 1u << kChunkBits;
    static constexpr uint32_t kChunkMask = kChunkSize - 1;

    std::vector<std::unique_ptr<Entry[]>> chunks_;
    uint32_t size_ = 0;
    uint32_t free_ = kNil;
  };

  // The index stores a slot number and 32 bits of the key's hash, and looks
  // keys up through the slab. With the hash at hand, growing the index never
  // reads the slab, and a probe touches the slab only on a likely match.
  struct SlotRef {
    uint32_t slot;
    uint32_t hash;
  };
  // A key with its hash already computed.
  struct HashedKey {
    const T* key;
    uint32_t hash;
  };
  static uint32_t HashOf(const T& key) { return static_cast<uint32_t>(Hash()(key)); }
  struct IndexHash {
    using is_transparent = void;
    const Slab* slab;
    size_t operator()(SlotRef ref) const { return ref.hash; }
    size_t operator()(HashedKey key) const { return key.hash; }
    size_t operator()(const T& key) const { return HashOf(key); }
  };
  struct IndexEq {
    using is_transparent = void;
    const Slab* slab;
    bool operator()(SlotRef a, SlotRef b) const { return a.slot == b.slot; }
    bool operator()(SlotRef a, HashedKey key) const {
      return a.hash == key.hash && Eq()(slab->at(a.slot).key, *key.key);
    }
    bool operator()(HashedKey key, SlotRef a) const { return (*this)(a, key); }
    bool operator()(SlotRef a, const T& key) const {
      return Eq()(slab->at(a.slot).key, key);
    }
    bool operator()(const T& key, SlotRef a) const { return (*this)(a, key); }
  };

  template <typename K>
  void AddImpl(K&& item) {
    if (metrics_ != nullptr) {
      // Metrics see every Add at the moment it happens, as client-go's do:
      // skip the inbox.
      {
        MutexLock lock(&mu_);
        if (shutting_down_.load()) return;
        InsertLocked(T(std::forward<K>(item)));
      }
      if (sleepers_pending_.load()) WakeOneSleeper();
      return;
    }
    bool wake = false;
    size_t inboxed;
    {
      MutexLock lock(&inbox_mu_);
      if (shutting_down_.load(std::memory_order_relaxed)) return;
      inbox_.push_back(std::forward<K>(item));
      wake = sleepers_ > signalled_;
      if (wake) ++signalled_;
      inboxed = inbox_.size();
    }
    if (wake) inbox_cv_.Signal();
    if (inboxed >= kInboxLimit) {
      MutexLock lock(&mu_);
      FoldInboxLocked();
    } else if (inboxed % kFoldBatch == 0 && mu_.TryLock()) {
      FoldInboxLocked();
      mu_.Unlock();
    }
  }

  // Moves every inboxed item into the queue proper, with client-go's Add
  // semantics. Returns whether the queue was shutting down when the inbox was
  // taken: no item can arrive after that.
  bool FoldInboxLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    bool shutting_down;
    {
      MutexLock lock(&inbox_mu_);
      if (inbox_.empty()) return shutting_down_.load(std::memory_order_relaxed);
      inbox_.swap(folding_);
      shutting_down = shutting_down_.load(std::memory_order_relaxed);
    }
    for (T& item : folding_) InsertLocked(std::move(item));
    folding_.clear();
    // After the inserts, so that finished items added again are reused.
    ReapLocked();
    return shutting_down;
  }

  void InsertLocked(T&& item) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    bool inserted = false;
    uint32_t slot = kNil;
    const uint32_t hash = HashOf(item);
    // The lambda runs inside lazy_emplace, under mu_; the analysis cannot
    // follow it there.
    auto it = index_.lazy_emplace(
        HashedKey{&item, hash},
        [&](const auto& construct) ABSL_NO_THREAD_SAFETY_ANALYSIS {
      slot = slab_.Allocate(std::move(item));
      inserted = true;
      construct(SlotRef{slot, hash});
    });
    if (!inserted) {
      slot = it->slot;
      Entry& entry = slab_.at(slot);
      if (entry.state == kProcessing) {
        entry.state = kProcessingDirty;
        if (metrics_ != nullptr) metrics_->Add(slot);
        return;
      }
      // Already waiting (or waiting to be queued again): collapse.
      if (entry.state != kFinished) return;
      // Finished but not yet reaped: the slot is reused as it stands.
    }
    slab_.at(slot).state = kQueued;
    if (metrics_ != nullptr) metrics_->Add(slot);
    PushLocked(slot);
  }

  void PushLocked(uint32_t slot) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    slab_.at(slot).next = kNil;
    if (tail_ == kNil) {
      head_ = slot;
    } else {
      slab_.at(tail_).next = slot;
    }
    tail_ = slot;
    ++len_;
    queued_.store(len_);
  }

  T PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const uint32_t slot = head_;
    Entry& entry = slab_.at(slot);
    head_ = entry.next;
    if (head_ == kNil) tail_ = kNil;
    --len_;
    queued_.store(len_, std::memory_order_relaxed);
    entry.state = kProcessing;
    ++processing_;
    if (metrics_ != nullptr) metrics_->Get(slot);
    last_get_ = LastGet{id_, slot};
    // Others sleep while items wait: hand the next one on.
    if (head_ != kNil && sleepers_pending_.load(std::memory_order_relaxed)) {
      WakeOneSleeper();
    }
    return entry.key;
  }

  // The slot of `item` if it is being processed, else kNil. Usually the
  // calling thread's last Get was this item: then no hashing is needed.
  uint32_t FindProcessingLocked(const T& item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const LastGet last = last_get_;
    if (last.queue_id == id_ && last.slot < slab_.size()) {
      const Entry& entry = slab_.at(last.slot);
      if ((entry.state == kProcessing || entry.state == kProcessingDirty) &&
          Eq()(entry.key, item)) {
        return last.slot;
      }
    }
    auto it = index_.find(item);
    if (it == index_.end()) return kNil;
    const State state = slab_.at(it->slot).state;
    if (state != kProcessing && state != kProcessingDirty) return kNil;
    return it->slot;
  }

  // Removes finished slots from the index and frees them, unless an Add
  // revived them meanwhile.
  void ReapLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const uint32_t slot : finished_) {
      Entry& entry = slab_.at(slot);
      if (entry.state != kFinished) continue;
      index_.erase(HashedKey{&entry.key, HashOf(entry.key)});
      slab_.Free(slot);
    }
    finished_.clear();
  }

  // Blocks until the inbox or the queue may hold an item, or shutdown.
  void SleepUntilWork() {
    MutexLock lock(&inbox_mu_);
    ++sleepers_;
    sleepers_pending_.store(sleepers_ > signalled_);
    // queued_ is read after sleepers_ is published (both sequentially
    // consistent), and Done publishes queued_ before reading sleepers_, so
    // one of the two always sees the other.
    while (inbox_.empty() && queued_.load() == 0 &&
           !shutting_down_.load(std::memory_order_relaxed)) {
      inbox_cv_.Wait(&inbox_mu_);
      if (signalled_ > 0) --signalled_;
    }
    --sleepers_;
    if (signalled_ > sleepers_) signalled_ = sleepers_;
    sleepers_pending_.store(sleepers_ > signalled_);
  }

  void WakeOneSleeper() {
    bool wake = false;
    {
      MutexLock lock(&inbox_mu_);
      wake = sleepers_ > signalled_;
      if (wake) ++signalled_;
      sleepers_pending_.store(sleepers_ > signalled_);
    }
    if (wake) inbox_cv_.Signal();
  }

  void UpdateUnfinishedWorkLoop() {
    MutexLock lock(&mu_);
    absl::Time next = clock_->Now();
    while (!shutting_down_.load()) {
      if (clock_->Now() >= next) {
        metrics_->UpdateUnfinishedWork();
        next = clock_->Now() + kUnfinishedWorkUpdatePeriod;
      }
      clock_->WaitUntil(&mu_, &updater_cv_, next);
    }
  }

  // The last slot each thread took with Get, by queue id (ids are never
  // reused, so a note about a destroyed queue is simply ignored).
  struct LastGet {
    uint64_t queue_id = 0;
    uint32_t slot = 0;
  };
  static inline thread_local LastGet last_get_;
  static inline std::atomic<uint64_t> next_id_{0};

  const Clock* const clock_;
  const uint64_t id_;

  // Producers' side.
  mutable Mutex inbox_mu_ ABSL_ACQUIRED_AFTER(mu_);
  CondVar inbox_cv_;  // consumers with nothing to do
  mutable std::vector<T> inbox_ ABSL_GUARDED_BY(inbox_mu_);
  int sleepers_ ABSL_GUARDED_BY(inbox_mu_) = 0;
  // Sleepers signalled but not yet awake: no need to signal them again.
  int signalled_ ABSL_GUARDED_BY(inbox_mu_) = 0;
  // sleepers_ > signalled_, readable without the lock.
  std::atomic<bool> sleepers_pending_{false};
  // Written under inbox_mu_, so no Add is accepted after it is seen.
  std::atomic<bool> shutting_down_{false};

  // Consumers' side: the queue proper.
  mutable Mutex mu_;
  CondVar drain_cv_;    // ShutDownWithDrain
  CondVar updater_cv_;  // the unfinished-work updater
  mutable std::vector<T> folding_ ABSL_GUARDED_BY(mu_);  // the inbox being folded in
  mutable std::vector<uint32_t> finished_ ABSL_GUARDED_BY(mu_);  // slots to reap
  mutable Slab slab_ ABSL_GUARDED_BY(mu_);
  mutable absl::flat_hash_set<SlotRef, IndexHash, IndexEq> index_
      ABSL_GUARDED_BY(mu_);
  mutable uint32_t head_ ABSL_GUARDED_BY(mu_) = kNil;
  mutable uint32_t tail_ ABSL_GUARDED_BY(mu_) = kNil;
  mutable size_t len_ ABSL_GUARDED_BY(mu_) = 0;
  // len_, readable by sleeping consumers without mu_.
  mutable std::atomic<size_t> queued_{0};
  size_t processing_ ABSL_GUARDED_BY(mu_) = 0;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  // Set once in the constructor; its own state is guarded by mu_.
  std::unique_ptr<internal::QueueMetrics> metrics_;
  std::thread updater_;
};

}  // namespace kcr::workqueue

#endif  // KCR_RUNTIME_WORKQUEUE_QUEUE_H_
