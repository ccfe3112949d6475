// FoldingQueue: the implementation behind Queue and DelayingQueue
// (runtime/workqueue/queue.h, delaying_queue.h), which state the contract.
// Nothing outside runtime/workqueue uses this header.
//
// Two locks, so that neither producers nor the hashing ever hold up a
// worker:
//  * Add hashes the key outside every lock, then folds it in at once under
//    `index_mu_`: a hash index maps each key to its slot in a slab of
//    entries (key, state, intrusive FIFO link), so an Add that finds its
//    item queued collapses, one that finds it being processed marks it to
//    be queued again on Done, and a new or finished item is linked into the
//    pending batch. The batch joins the FIFO in one step under `mu_` every
//    kFoldBatch items, or at once when a worker sleeps; a worker that finds
//    the FIFO empty publishes it itself if no one holds the index, and Len
//    publishes first. The publish also reaps entries that finished since
//    the last one; a worker that finds kFoldBatch of them waiting reaps
//    them itself if no one holds the index.
//  * Workers take `mu_` only: Get pops the FIFO without hashing; Done finds
//    the slot through a per-thread note of the last Get (falling back to the
//    index) and marks it finished. The one state both sides change, "being
//    processed", moves by compare-and-swap, so an Add and a Done may run at
//    once. So workers pay O(1) per item and never read what producers write
//    per Add.
//  * Every Add has acted on its item's entry by the time it returns, so Get
//    and Done see client-go's state without looking for Adds on their way:
//    duplicates collapse, an item added while it is processed is queued
//    again on Done. The one thing an unpublished batch could change is the
//    order: Done that queues its item again first publishes a batch that
//    holds Adds made before it, so the item goes behind them, as in
//    client-go.
//  * A worker with nothing to do yields a few times, then sleeps; a
//    producer publishes and signals only when a worker sleeps and none is
//    already being woken.
//  * A queue with metrics takes the same path: the publish records adds,
//    depth and the first-add time of the batch's items (one clock read per
//    batch); Get and Done record under `mu_` and hand their observations to
//    the instruments in batches. Slots never move, so the metrics keep
//    their per-item times in arrays indexed by slot.
//
// The parts, each in a header of its own: the entries and their index
// (slot_index.h, over slab.h), the FIFO they are linked into
// (entry_fifo.h), and, for a delaying queue, the ready times of waiting
// items (ready_schedule.h) and the interface through which it hands them
// over (waiting_items.h). This header holds the queue that ties them
// together: the locks, Add, Get and Done, publishing and reaping, and the
// waiting items' entries.
//
// Not an API: an implementation detail of the public queue templates
// (queue.h, delaying_queue.h), which include it, and installed with them
// for that reason only.
#ifndef KCR_RUNTIME_WORKQUEUE_FOLDING_QUEUE_H_
#define KCR_RUNTIME_WORKQUEUE_FOLDING_QUEUE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "runtime/workqueue/entry_fifo.h"
#include "runtime/workqueue/metrics.h"
#include "runtime/workqueue/queue_metrics.h"
#include "runtime/workqueue/ready_schedule.h"
#include "runtime/workqueue/slab.h"
#include "runtime/workqueue/slot_index.h"
#include "runtime/workqueue/step_hooks.h"
#include "runtime/workqueue/waiting_items.h"

namespace kcr::workqueue::internal {

// How often the unfinished-work gauges are refreshed, as in client-go.
inline constexpr absl::Duration kUnfinishedWorkUpdatePeriod =
    absl::Milliseconds(500);

// Folded Adds join the FIFO in batches of kFoldBatch items (sooner when a
// worker waits for them). A delaying queue's timer folds its own inbox of
// AddAfters when it holds kInboxLimit of them.
inline constexpr size_t kFoldBatch = 64;
inline constexpr size_t kInboxLimit = 4096;

// Reaps fetch the index and slab lines of the item this many places ahead
// of the one they work on.
inline constexpr size_t kPrefetchAhead = 8;

// Fields written by different threads are kept this far apart.
inline constexpr size_t kCacheLine = 64;

// A worker with nothing to do yields this many times before it sleeps.
inline constexpr int kSpinsBeforeSleep = 64;
// An idle worker that sees folded Adds not yet published takes them after
// yielding this many times.
inline constexpr int kSpinsBeforeTakingPending = 16;

// The work queue's implementation: Queue's and DelayingQueue's semantics,
// documented on Interface (runtime/workqueue/queue.h). T is any copyable
// type hashable by `Hash` and comparable by `Eq`. A DelayingQueue keeps
// its waiting items here through WaitingItems (see "Waiting items" below).
template <typename T, typename Hash, typename Eq>
class FoldingQueue final : public WaitingItems<T> {
 public:
  // `clock` must not be null; `metrics` may be (no metrics).
  FoldingQueue(const Clock* clock, MetricsProvider* metrics,
               std::string_view name)
      : clock_(clock),
        real_clock_(clock == Clock::Real()),
        id_(next_id_.fetch_add(1) + 1),
        index_(&slab_) {
    if (metrics != nullptr) {
      metrics_ = std::make_unique<QueueMetrics>(metrics, name, clock_);
      updater_ = std::thread([this] { UpdateUnfinishedWorkLoop(); });
    }
  }

  // Shuts the queue down. Items still waiting are dropped.
  ~FoldingQueue() {
    ShutDown();
    if (updater_.joinable()) updater_.join();
  }

  FoldingQueue(const FoldingQueue&) = delete;
  FoldingQueue& operator=(const FoldingQueue&) = delete;

  void Add(const T& item) { AddImpl(item); }
  void Add(T&& item) { AddImpl(std::move(item)); }

  size_t Len() const {
    // Publishing changes where the queued items are kept, not which items
    // are queued, so a const Len may do it.
    Publish();
    PublishObservations();
    MutexLock lock(&mu_);
    return fifo_.len();
  }

  std::optional<T> Get() {
    // Workers share the reaping with whoever publishes, when the index is
    // free.
    if (finished_len_.load(std::memory_order_relaxed) >= kFoldBatch) TryReap();
    for (;;) {
      // A metered queue reads the clock outside mu_, and hands its
      // observations to the instruments outside mu_, so that neither holds
      // up the other workers.
      const int64_t now = NowNanosIfMetered();
      std::optional<T> item;
      mu_.Lock();
      if (!fifo_.empty()) item = PopLocked(now);
      UnlockAfterRecording();
      if (item.has_value()) return item;
      if (shutting_down_.load()) {
        // Nothing can be added any more: hand out what was folded in
        // before. Done may still queue an item.
        Publish();
        mu_.Lock();
        if (!fifo_.empty()) item = PopLocked(now);
        if (metrics_ != nullptr) {
          PublishObservationsLocked();  // releases mu_
        } else {
          mu_.Unlock();
        }
        return item;
      }
      // This thread's own Adds wait in the pending batch (a single thread
      // adding and taking, or a worker that added before it came back):
      // nobody else is about to publish them.
      if (last_add_.queue_id == id_ &&
          pending_filled_.load(std::memory_order_acquire)) {
        last_add_.queue_id = 0;
        Publish();
        continue;
      }
      if (SpinForWork()) continue;
      // Nothing published while this worker waited: publish what producers
      // have folded, unless one holds the index (it publishes when it sees
      // this worker sleep).
      if (index_mu_.TryLock()) {
        const bool queued = PublishPendingLocked();
        index_mu_.Unlock();
        if (queued) continue;
      }
      // An idle queue's instruments are exact.
      PublishObservations();
      SleepUntilWork();
    }
  }

  void Done(const T& item) {
    // The item's slot: this thread's last Get, or found through the index.
    // Only the worker that took the item calls Done for it, so the slot
    // cannot change hands before the check at the end.
    //
    // The usual case, this thread's last Get and an item not added again
    // while it was processed, checks and finishes in one hold of mu_ (the
    // clock read before it).
    const int64_t at = NowNanosIfMetered();
    uint32_t slot = kNil;
    mu_.Lock();
    const LastGet last = last_get_;
    if (last.queue_id == id_ && IsProcessingLocked(last.slot, item)) {
      slot = last.slot;
      if (!MustPublishBeforeDoneLocked(slot)) {
        FinishLocked(slot, at);
        UnlockAfterRecording();
        return;
      }
    }
    mu_.Unlock();
    MutexLock lock(&index_mu_);
    if (slot == kNil) {
      slot = index_.Find(item, HashOf(item));
      if (slot == kNil) return;  // not queued, not being processed
    }
    // The item was added again while it was processed, and Adds made
    // before this Done may still wait in the pending batch: publish them
    // first, so that the item is queued behind them, as in client-go. Adds
    // wait for index_mu_ meanwhile, so none can come between.
    AtStep(Step::kDoneChecked);
    PublishPendingLocked();
    const int64_t now = NowNanosIfMetered();
    mu_.Lock();
    if (IsProcessingLocked(slot, item)) FinishLocked(slot, now);
    UnlockAfterRecording();
  }

  void ShutDown() {
    {
      // Under index_mu_, so that no Add is folded in after it is seen; and
      // under sleep_mu_, so that no worker goes to sleep without seeing it.
      MutexLock lock(&index_mu_);
      MutexLock sleep_lock(&sleep_mu_);
      shutting_down_.store(true);
    }
    sleep_cv_.SignalAll();
    {
      MutexLock lock(&mu_);
      draining_ = false;
    }
    drain_cv_.SignalAll();
    updater_cv_.SignalAll();
  }

  void ShutDownWithDrain() {
    {
      MutexLock lock(&index_mu_);
      MutexLock sleep_lock(&sleep_mu_);
      shutting_down_.store(true);
    }
    sleep_cv_.SignalAll();
    updater_cv_.SignalAll();
    MutexLock lock(&mu_);
    draining_ = true;
    while (processing_ != 0 && draining_) drain_cv_.Wait(&mu_);
  }

  bool ShuttingDown() const { return shutting_down_.load(); }

 private:
  using Entry = internal::Entry<T>;
  using EntrySlab = Slab<Entry>;
  using Pending = ReadySchedule::Pending;
  static constexpr uint32_t kNil = kNilSlot;

  static uint32_t HashOf(const T& key) {
    return internal::HashOf<T, Hash>(key);
  }

  template <typename K>
  void AddImpl(K&& item) {
    // Hashed outside every lock; folded in at once, so that Get and Done
    // see its effect on the item's entry without looking for it.
    const uint32_t hash = HashOf(item);
    MutexLock lock(&index_mu_);
    if (shutting_down_.load(std::memory_order_relaxed)) return;
    const uint32_t slot = EntryForLocked(std::forward<K>(item), hash);
    // A queued entry gets its first-add time when its batch is published;
    // one being processed is not in the batch, so it gets it now.
    int64_t added_at = 0;
    if (metrics_ != nullptr &&
        slab_.at(slot).state.load(std::memory_order_acquire) == kProcessing) {
      added_at = NowNanos();
    }
    if (AddExistingLocked(slot, added_at, &pending_) == kNil) return;
    ++pending_counted_;
    if (!pending_filled_.load(std::memory_order_relaxed)) {
      // Sequentially consistent, before sleepers_pending_ is read: see
      // SleepUntilWork.
      pending_filled_.store(true);
    }
    AtStep(Step::kAddInboxed);
    if (pending_.len >= kFoldBatch || sleepers_pending_.load()) {
      PublishPendingLocked();
    } else {
      last_add_.queue_id = id_;
    }
  }

  // Publishes the pending batch, under index_mu_.
  void Publish() const {
    MutexLock lock(&index_mu_);
    PublishPendingLocked();
  }

  // Joins the pending batch (and its counted Adds) to the FIFO and reaps
  // the entries finished so far. Returns whether anything was queued.
  bool PublishPendingLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    const Batch batch = pending_;
    const size_t counted = pending_counted_;
    pending_ = Batch{};
    pending_counted_ = 0;
    PublishLocked(batch, counted);
    return batch.len != 0;
  }

  // Joins `batch` to the FIFO, counts in the metrics the `counted` Adds
  // that count (queued, or marked to be queued again), reaps the entries
  // finished so far, and wakes a worker if anything was queued. A metered
  // queue's Adds count from this moment, which also becomes the first-add
  // time of the batch's items that have none (one clock read per batch).
  void PublishLocked(const Batch& batch, size_t counted = 0) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    if (metrics_ != nullptr && batch.len != 0) StampLocked(batch);
    {
      MutexLock lock(&mu_);
      if (counted != 0 && metrics_ != nullptr) metrics_->Add(counted);
      if (batch.len != 0) PushLocked(batch);
      // Cleared with the push, under mu_: a Done that sees it clear sees
      // every Add made before it in the FIFO (MustPublishBeforeDoneLocked).
      if (pending_filled_.load(std::memory_order_relaxed)) {
        pending_filled_.store(false, std::memory_order_release);
      }
      TakeFinishedLocked();
    }
    ReapLocked();
    AtStep(Step::kPublished);
    if (batch.len != 0 && sleepers_pending_.load()) WakeOneSleeper();
  }

  // Sets the first-add time of the entries of `batch` that have none to
  // the clock's time now.
  void StampLocked(const Batch& batch) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    const int64_t now = NowNanos();
    for (uint32_t slot = batch.head;; slot = slab_.at(slot).next) {
      Entry& entry = slab_.at(slot);
      if (entry.added == 0) entry.added = now;
      if (slot == batch.tail) break;
    }
  }

  // Whether Done of the item in `slot`, being processed, must publish the
  // pending batch first to keep client-go's order: the item was added again
  // while it was processed (so Done queues it again), and the batch may
  // hold Adds made before this Done, which client-go has queued already.
  // An Add made after the item's state is read here is concurrent with
  // this Done and may go either side of it.
  bool MustPublishBeforeDoneLocked(uint32_t slot) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return slab_.at(slot).state.load(std::memory_order_acquire) ==
               kProcessingDirty &&
           pending_filled_.load(std::memory_order_acquire);
  }

  // Hands the entries finished so far to ReapLocked, after any already
  // there.
  void TakeFinishedLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_, mu_) {
    if (reaping_.empty()) {
      reaping_.swap(finished_);
    } else {
      reaping_.insert(reaping_.end(), finished_.begin(), finished_.end());
      finished_.clear();
    }
    finished_len_.store(0, std::memory_order_relaxed);
  }

  // Publishes the pending batch and reaps the entries finished so far,
  // unless another thread holds the index.
  void TryReap() const {
    if (!index_mu_.TryLock()) return;
    PublishPendingLocked();
    index_mu_.Unlock();
  }

  // The slot of `item`'s entry, created if it has none. A new entry is
  // kFinished: in no list, processed by no one. The key is copied (or
  // moved) into the slab only for a new entry.
  template <typename K>
  uint32_t EntryForLocked(K&& item, uint32_t hash) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    return index_.FindOrInsert(item, hash, [&] {
      const uint32_t slot = slab_.Allocate();
      // A reused entry was last written by whoever reaped it: fetch the one
      // that a later insert will get.
      const uint32_t later = slab_.Peek(kPrefetchAhead);
      if (later != kNil) PrefetchForWrite(&slab_.at(later));
      Entry& fresh = slab_.at(slot);
      new (&fresh.key) T(std::forward<K>(item));
      fresh.hash = hash;
      fresh.added = 0;
      fresh.state.store(kFinished, std::memory_order_relaxed);
      return slot;
    });
  }

  // client-go's Add on an entry. Returns the entry's slot if the Add counts
  // (queued, or marked to be queued again), kNil if it collapsed into an
  // entry already waiting. A newly queued slot is appended to `batch`. A
  // metered queue passes the Add's time in `added_at` (0: the batch's
  // publish stamps it), kept as the item's first-add time if the Add
  // counts.
  uint32_t AddExistingLocked(uint32_t slot, int64_t added_at,
                             Batch* batch) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    Entry& entry = slab_.at(slot);
    uint8_t state = entry.state.load(std::memory_order_acquire);
    if (state == kProcessing) {
      // Written before the compare-and-swap that lets Done queue the entry
      // (Done's failed swap acquires it). If Done finishes the entry first,
      // the Add still counts: it is queued below.
      if (added_at != 0 && entry.added == 0) entry.added = added_at;
      if (entry.state.compare_exchange_strong(state, kProcessingDirty,
                                              std::memory_order_acq_rel)) {
        return slot;  // Done queues it again
      }
    }
    // Already waiting, or about to be queued again by Done: collapse.
    if (state != kFinished) return kNil;
    // New, finished but not yet reaped, or only waiting for a delay: queue
    // the entry as it stands.
    if (added_at != 0 && entry.added == 0) entry.added = added_at;
    LinkLocked(slot, batch);
    return slot;
  }

  // Marks the entry queued and appends it to `batch`.
  void LinkLocked(uint32_t slot, Batch* batch) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    slab_.at(slot).state.store(kQueued, std::memory_order_relaxed);
    LinkInto(slab_, slot, batch);
  }

  void PushLocked(const Batch& batch) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    fifo_.Push(slab_, batch);
    queued_.store(fifo_.len());
  }

  // Takes the head of the FIFO. A metered queue records the Get at `now`
  // and leaves the item's queue latency in `*latency` (or -1), for the
  // caller to observe once mu_ is released.
  T PopLocked(int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const uint32_t slot = fifo_.Pop(slab_);
    Entry& entry = slab_.at(slot);
    if (!fifo_.empty()) {
      // Written by a producer: fetch it while this item is processed.
      __builtin_prefetch(&slab_.at(fifo_.head()), /*rw=*/1);
    }
    queued_.store(fifo_.len(), std::memory_order_relaxed);
    if (metrics_ != nullptr) {
      metrics_->Get(slot, now, entry.added);
      // Before the entry is marked processing: from then on an Add may
      // record a new Add's time here (AddExistingLocked acquires the state).
      entry.added = 0;
    }
    entry.state.store(kProcessing, std::memory_order_release);
    ++processing_;
    last_get_ = LastGet{id_, slot};
    // Others sleep while items wait: hand the next one on.
    if (!fifo_.empty() && sleepers_pending_.load(std::memory_order_relaxed)) {
      WakeOneSleeper();
    }
    return entry.key;
  }

  // Whether `slot` holds `item` and a worker is processing it. The key of a
  // processing entry does not change, so it may be compared under mu_.
  bool IsProcessingLocked(uint32_t slot, const T& item) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const Entry& entry = slab_.at(slot);
    const uint8_t state = entry.state.load(std::memory_order_acquire);
    return (state == kProcessing || state == kProcessingDirty) &&
           Eq()(entry.key, item);
  }

  // Marks the entry finished (or queues it again), at `now` for a metered
  // queue, which leaves the work duration in `*duration` for the caller.
  void FinishLocked(uint32_t slot, int64_t now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Entry& entry = slab_.at(slot);
    if (metrics_ != nullptr) metrics_->Done(slot, now);
    --processing_;
    bool requeued = false;
    // Read before the swap: once the entry is kFinished it is the folder's,
    // which may reap it and give the slot to another key at once.
    const uint32_t hash = entry.hash;
    uint8_t state = kProcessing;
    if (entry.state.compare_exchange_strong(state, kFinished,
                                            std::memory_order_acq_rel)) {
      finished_.push_back(SlotRef{slot, hash});
      finished_len_.store(finished_.size(), std::memory_order_relaxed);
    } else {  // kProcessingDirty: added again meanwhile
      entry.state.store(kQueued, std::memory_order_relaxed);
      entry.next = kNil;
      PushLocked(Batch{slot, slot, 1});
      requeued = true;
    }
    const bool wake_drain = processing_ == 0 && draining_;
    if (requeued && sleepers_pending_.load()) WakeOneSleeper();
    if (wake_drain) drain_cv_.SignalAll();
  }

  // Removes the finished entries taken from finished_ from the index and
  // frees them, unless an Add revived them meanwhile.
  void ReapLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    // The entries were last written by the workers that finished them, and
    // their index lines are anywhere in an index that may be far larger
    // than the cache: fetch both a few entries ahead of the one reaped.
    const size_t n = reaping_.size();
    for (size_t i = 0; i < n && i < kPrefetchAhead; ++i) PrefetchReap(i);
    for (size_t i = 0; i < n; ++i) {
      if (i + kPrefetchAhead < n) PrefetchReap(i + kPrefetchAhead);
      const SlotRef ref = reaping_[i];
      Entry& entry = slab_.at(ref.slot);
      if (entry.state.load(std::memory_order_acquire) != kFinished) continue;
      if (entry.ready != 0) continue;  // still waiting for its delay
      // A reference may be stale: the entry was revived and finished again
      // (a second reference follows), or reaped through an earlier reference
      // and its slot given to another key. Either way a finished entry is
      // due to be reaped, and the entry's own hash (the folder's to read)
      // finds its cell; the reference's only steered the prefetch.
      index_.Erase(ref.slot, entry.hash);
      entry.key.~T();
      entry.state.store(kFree, std::memory_order_relaxed);
      slab_.Free(ref.slot);
    }
    reaping_.clear();
  }

  void PrefetchReap(size_t i) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    PrefetchForWrite(&slab_.at(reaping_[i].slot));
    index_.Prefetch(reaping_[i].hash);
  }

  // Waiting items (DelayingQueue::AddAfter, through WaitingItems). An item
  // waiting for a delay has an entry in the index like any other, with its
  // ready time; if it is in no other state it is kFinished, which reaps skip
  // while the item waits. A due item gets client-go's Add on its entry.
  // schedule_ finds the next one due; a (ready, slot) pair whose ready time
  // no longer matches its entry's was superseded by an earlier AddAfter and
  // is skipped.

  Mutex* waiting_mu() const override ABSL_LOCK_RETURNED(index_mu_) {
    return &index_mu_;
  }

  void AddWaitingLocked(std::vector<typename WaitingItems<T>::Delayed>* items)
      override ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    for (auto& in : *items) AddWaitingItemLocked(std::move(in.item), in.ready);
  }

  // Keeps `item` waiting until `ready`, or until its earlier ready time.
  void AddWaitingItemLocked(T&& item, int64_t ready) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    const uint32_t hash = HashOf(item);
    const uint32_t slot = EntryForLocked(std::move(item), hash);
    Entry& entry = slab_.at(slot);
    if (entry.ready == 0) {
      ++waiting_;
    } else if (ready >= entry.ready) {
      return;  // keep the earlier time
    }
    entry.ready = ready;
    schedule_.Push(Pending{ready, slot});
  }

  // Stale pairs included, which only wake the timer early.
  std::optional<int64_t> NextReadyLocked() const override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    return schedule_.NextReady();
  }

  size_t AddDueLocked(int64_t now, size_t limit) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    // Adds made before these items came due are ahead of them in client-go:
    // the due items join the pending batch behind them.
    const int64_t added_at = metrics_ != nullptr ? now : 0;
    const bool shutting_down = shutting_down_.load();
    size_t due = 0;
    for (; due < limit; ++due) {
      const std::optional<int64_t> next = schedule_.NextReady();
      if (!next.has_value() || *next > now) break;
      const Pending p = schedule_.Pop();
      Entry& entry = slab_.at(p.slot);
      if (entry.ready != p.ready) continue;  // superseded, or added already
      entry.ready = 0;
      --waiting_;
      if (shutting_down) {
        // No Add after shutdown: let it go.
        reaping_.push_back(SlotRef{p.slot, entry.hash});
        continue;
      }
      if (AddExistingLocked(p.slot, added_at, &pending_) != kNil) {
        ++pending_counted_;
      }
    }
    if (due != 0) PublishPendingLocked();
    return due;
  }

  size_t WaitingLenLocked() const override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    return waiting_;
  }

  // Yields the CPU a few times while nothing is queued, in case work is
  // about to arrive: sleeping and being woken costs a futex round trip, and
  // on virtual machines waking an idle CPU costs tens of microseconds.
  // Returns whether work (or shutdown) arrived; false when it did not, or
  // when the pending batch has held Adds for a while (the caller publishes
  // it).
  bool SpinForWork() const {
    int pending = 0;
    for (int i = 0; i < kSpinsBeforeSleep; ++i) {
      if (queued_.load(std::memory_order_relaxed) != 0 ||
          shutting_down_.load(std::memory_order_relaxed)) {
        return true;
      }
      // A producer publishes its batch when it is full: take it from a
      // busy producer only when it has waited for a while, so that workers
      // do not take it one item at a time.
      if (pending_filled_.load(std::memory_order_relaxed) &&
          ++pending >= kSpinsBeforeTakingPending) {
        return false;
      }
      std::this_thread::yield();
    }
    return false;
  }

  // Blocks until the pending batch or the FIFO may hold an item, or
  // shutdown.
  void SleepUntilWork() {
    MutexLock lock(&sleep_mu_);
    ++sleepers_;
    for (;;) {
      // Announced before every look for work, the first and each one after
      // a wake-up: a waker that signalled this thread for work it has since
      // taken itself cleared the flag, and a sleeper that went back to sleep
      // without raising it again would never be woken (every later publish
      // would see no sleeper and skip the signal).
      sleepers_pending_.store(sleepers_ > signalled_);
      AtStep(Step::kSleepAnnounced);
      // queued_ is read after sleepers_pending_ is published (both
      // sequentially consistent), and whoever queues publishes queued_
      // before reading sleepers_pending_, so one of the two always sees the
      // other.
      if (pending_filled_.load() || queued_.load() != 0 ||
          shutting_down_.load(std::memory_order_relaxed)) {
        break;
      }
      sleep_cv_.Wait(&sleep_mu_);
      AtStep(Step::kSleepWoken);
      if (signalled_ > 0) --signalled_;
    }
    --sleepers_;
    if (signalled_ > sleepers_) signalled_ = sleepers_;
    sleepers_pending_.store(sleepers_ > signalled_);
  }

  void WakeOneSleeper() const {
    bool wake = false;
    {
      MutexLock lock(&sleep_mu_);
      wake = sleepers_ > signalled_;
      if (wake) ++signalled_;
      sleepers_pending_.store(sleepers_ > signalled_);
    }
    AtStep(Step::kBeforeSignal);
    if (wake) sleep_cv_.Signal();
  }

  // The clock in Unix nanoseconds. The real clock is read directly, which
  // is what its Now does, without the virtual call and the conversions
  // through absl::Time (a metered queue reads it twice per item).
  int64_t NowNanos() const {
    return real_clock_ ? absl::GetCurrentTimeNanos()
                       : absl::ToUnixNanos(clock_->Now());
  }

  // The clock in Unix nanoseconds for a metered queue; 0 (unread) otherwise.
  int64_t NowNanosIfMetered() const {
    return metrics_ != nullptr ? NowNanos() : 0;
  }

  // Whether the metrics' batch of observations is full: the Get or Done
  // that filled it publishes it before anything else is recorded.
  bool ObservationsFullLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return metrics_ != nullptr && metrics_->Full();
  }

  // Releases mu_, first handing the metrics' batch of observations to the
  // instruments if it is full.
  void UnlockAfterRecording() const ABSL_UNLOCK_FUNCTION(mu_) {
    if (ObservationsFullLocked()) {
      PublishObservationsLocked();  // releases mu_
    } else {
      mu_.Unlock();
    }
  }

  // Hands every observation recorded so far to the instruments, outside
  // mu_, which it releases. Publishers take publish_mu_ before they let go
  // of mu_, so when this returns every observation recorded before it
  // (including those another thread took) has reached the instruments.
  void PublishObservationsLocked() const ABSL_UNLOCK_FUNCTION(mu_) {
    Observations taken;
    const bool any = metrics_->HasPending();
    if (any) metrics_->Take(&taken);
    publish_mu_.Lock();
    mu_.Unlock();
    if (any) metrics_->Publish(taken);
    publish_mu_.Unlock();
  }

  // As PublishObservationsLocked, from outside mu_.
  void PublishObservations() const ABSL_LOCKS_EXCLUDED(mu_) {
    if (metrics_ == nullptr) return;
    mu_.Lock();
    PublishObservationsLocked();
  }

  // Every kUnfinishedWorkUpdatePeriod: publishes the pending batch and the
  // workers' pending observations, so that no instrument is further behind
  // than one period even when no worker calls Get, and refreshes the
  // unfinished-work gauges.
  void UpdateUnfinishedWorkLoop() {
    absl::Time next = clock_->Now();
    for (;;) {
      {
        MutexLock lock(&mu_);
        while (!shutting_down_.load() && clock_->Now() < next) {
          clock_->WaitUntil(&mu_, &updater_cv_, next);
        }
        if (shutting_down_.load()) return;
      }
      Publish();
      PublishObservations();
      MutexLock lock(&mu_);
      metrics_->UpdateUnfinishedWork();
      next = clock_->Now() + kUnfinishedWorkUpdatePeriod;
    }
  }

  // The last slot each thread took with Get, by queue id (ids are never
  // reused, so a note about a destroyed queue is simply ignored).
  struct LastGet {
    uint64_t queue_id = 0;
    uint32_t slot = 0;
  };
  static inline thread_local LastGet last_get_;
  // The queue of the last Add of each thread that left its item in the
  // pending batch (slot unused).
  static inline thread_local LastGet last_add_;
  static inline std::atomic<uint64_t> next_id_{0};

  const Clock* const clock_;
  const bool real_clock_;
  const uint64_t id_;

  // Set once in the constructor; its own state is guarded by mu_.
  std::unique_ptr<QueueMetrics> metrics_;
  // Serialises publishing metrics' batches; taken under mu_ (never the
  // other way round), held after mu_ is released.
  mutable Mutex publish_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::thread updater_;

  // Lock order: index_mu_, then mu_, then sleep_mu_. Each side's fields
  // start a cache line of their own, so that a producer's writes do not
  // evict what a worker reads on every Get, and the other way round.

  // Producers' side: deduplication. The index holds every entry that is
  // not free; the slab's allocation state is the producers' too.
  alignas(kCacheLine) mutable Mutex index_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Entries folded in and not yet in the FIFO, and the Adds since the last
  // publish that count, for the metrics.
  mutable Batch pending_ ABSL_GUARDED_BY(index_mu_);
  mutable size_t pending_counted_ ABSL_GUARDED_BY(index_mu_) = 0;
  mutable std::vector<SlotRef> reaping_ ABSL_GUARDED_BY(index_mu_);
  // Entries are read by workers under mu_ once pushed; see EntryState.
  mutable EntrySlab slab_;
  mutable SlotIndex<T, Eq> index_ ABSL_GUARDED_BY(index_mu_);
  // Waiting items: how many, and their (ready, slot) pairs.
  mutable size_t waiting_ ABSL_GUARDED_BY(index_mu_) = 0;
  mutable ReadySchedule schedule_ ABSL_GUARDED_BY(index_mu_);

  // Sleeping workers.
  alignas(kCacheLine) mutable Mutex sleep_mu_ ABSL_ACQUIRED_AFTER(mu_);
  mutable CondVar sleep_cv_;  // workers with nothing to do
  int sleepers_ ABSL_GUARDED_BY(sleep_mu_) = 0;
  // Sleepers signalled but not yet awake: no need to signal them again.
  mutable int signalled_ ABSL_GUARDED_BY(sleep_mu_) = 0;

  // Flags read without a lock and written rarely (not per item): producers
  // read sleepers_pending_ on every Add, workers the others when idle.
  // sleepers_ > signalled_: written only as workers fall asleep and wake.
  alignas(kCacheLine) mutable std::atomic<bool> sleepers_pending_{false};
  // The pending batch holds an Add: set by the Add that starts a batch
  // (under index_mu_), cleared by the publish (under index_mu_ and mu_).
  mutable std::atomic<bool> pending_filled_{false};
  // Written under index_mu_ and sleep_mu_, so no Add is folded in, and no
  // worker falls asleep, after it is seen.
  std::atomic<bool> shutting_down_{false};

  // Workers' side: the FIFO and the processing count.
  alignas(kCacheLine) mutable Mutex mu_;
  CondVar drain_cv_;    // ShutDownWithDrain
  CondVar updater_cv_;  // the unfinished-work updater
  mutable std::vector<SlotRef> finished_ ABSL_GUARDED_BY(mu_);  // to reap
  // finished_.size(), readable without the lock.
  mutable std::atomic<size_t> finished_len_{0};
  mutable EntryFifo fifo_ ABSL_GUARDED_BY(mu_);
  // fifo_.len(), readable by sleeping consumers without mu_.
  mutable std::atomic<size_t> queued_{0};
  size_t processing_ ABSL_GUARDED_BY(mu_) = 0;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_FOLDING_QUEUE_H_
