// FoldingQueue: the implementation behind Queue and DelayingQueue
// (runtime/workqueue/queue.h, delaying_queue.h), which state the contract.
// Nothing outside runtime/workqueue uses this header.
//
// Three locks, so that neither producers nor the
// hashing ever hold up a worker:
//  * Add appends the key to an inbox under `inbox_mu_` (one short critical
//    section, no hashing). Every kFoldBatch items the producer folds the
//    inbox in if no one else is folding; at kInboxLimit it waits for the
//    folder, which bounds the inbox.
//  * Folding (under `index_mu_`) deduplicates: a hash index maps each key to
//    its slot in a slab of entries (key, state, intrusive FIFO link). New and
//    finished entries are linked into a batch that joins the FIFO in one
//    step under `mu_`; an entry being processed is marked to be queued again
//    on Done. The fold also reaps entries that finished since the last one;
//    a worker that finds kFoldBatch of them waiting reaps them itself if no
//    one is folding.
//  * Workers take `mu_` only: Get pops the FIFO without hashing; Done finds
//    the slot through a per-thread note of the last Get (falling back to the
//    index) and marks it finished. The one state both sides change, "being
//    processed", moves by compare-and-swap, so a fold and a Done may run at
//    once. So workers pay O(1) per item and the hashing happens in batches,
//    on whichever thread folds.
//  * A worker that finds the FIFO empty folds the inbox itself (and Len
//    folds first), so every observable result is that of client-go's queue:
//    duplicates collapse, order is kept, items added during processing are
//    queued again on Done. With nothing to fold it yields a few times, then
//    sleeps; a producer signals only when a worker sleeps and none is
//    already being woken.
//  * Done folds first when the inbox (or a fold under way) holds adds, so an
//    item added while it was processed is queued again behind everything
//    added before the Done, as in client-go.
//  * A queue with metrics takes the same path: each Add carries its time
//    through the inbox, and the fold records adds, depth and the first-add
//    time with the values client-go's Add records. Slots never move, so the
//    metrics keep their per-item times in arrays indexed by slot.
//
// The parts, each in a header of its own: the entries and their index
// (slot_index.h, over slab.h), the FIFO they are linked into
// (entry_fifo.h), the filter of unfolded Adds (hash_filter.h), and, for a
// delaying queue, the ready times of waiting items (ready_schedule.h) and
// the interface through which it hands them over (waiting_items.h). This
// header holds the queue that ties them together: the three locks, folding,
// Get and Done, reaping, and the waiting items' entries.
#ifndef KCR_RUNTIME_WORKQUEUE_INTERNAL_FOLDING_QUEUE_H_
#define KCR_RUNTIME_WORKQUEUE_INTERNAL_FOLDING_QUEUE_H_

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
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "runtime/workqueue/internal/entry_fifo.h"
#include "runtime/workqueue/internal/hash_filter.h"
#include "runtime/workqueue/internal/queue_metrics.h"
#include "runtime/workqueue/internal/ready_schedule.h"
#include "runtime/workqueue/internal/slab.h"
#include "runtime/workqueue/internal/slot_index.h"
#include "runtime/workqueue/internal/step_hooks.h"
#include "runtime/workqueue/internal/waiting_items.h"
#include "runtime/workqueue/metrics.h"

namespace kcr::workqueue::internal {

// How often the unfinished-work gauges are refreshed, as in client-go.
inline constexpr absl::Duration kUnfinishedWorkUpdatePeriod =
    absl::Milliseconds(500);

// A producer folds its inbox into the queue every kFoldBatch items when no
// other thread is folding, and at kInboxLimit in any case.
inline constexpr size_t kFoldBatch = 64;
inline constexpr size_t kInboxLimit = 4096;

// Folds and reaps fetch the index and slab lines of the item this many
// places ahead of the one they work on.
inline constexpr size_t kPrefetchAhead = 8;

// Fields written by different threads are kept this far apart.
inline constexpr size_t kCacheLine = 64;

// A worker with nothing to do yields this many times before it sleeps.
inline constexpr int kSpinsBeforeSleep = 64;

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
      : clock_(clock), id_(next_id_.fetch_add(1) + 1), index_(&slab_) {
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
    // Folding changes how the items are stored, not which items are queued,
    // so a const Len may do it.
    Fold();
    PublishObservations();
    MutexLock lock(&mu_);
    return fifo_.len();
  }

  std::optional<T> Get() {
    // Workers share the reaping with whoever folds, when no one is folding.
    if (finished_len_.load(std::memory_order_relaxed) >= kFoldBatch) TryReap();
    bool folded_for_head = false;
    for (;;) {
      // A metered queue reads the clock outside mu_, and hands its
      // observations to the instruments outside mu_, so that neither holds
      // up the other workers.
      const int64_t now = NowNanosIfMetered();
      std::optional<T> item;
      mu_.Lock();
      // An Add of the item at the head that precedes this Get may still
      // wait to be folded. In client-go it found the item queued and
      // collapsed; folded after the Get it would mark the item to be
      // processed again. Fold it first (once: Adds left after that fold are
      // concurrent with this Get).
      if (!fifo_.empty() &&
          (folded_for_head ||
           !UnfoldedAddMayBeOf(slab_.at(fifo_.head()).hash))) {
        item = PopLocked(now);
      }
      if (ObservationsFullLocked()) {
        PublishObservationsLocked();  // releases mu_
      } else {
        mu_.Unlock();
      }
      if (item.has_value()) return item;
      if (!folded_for_head && HeadIsQueued()) {
        Fold();
        folded_for_head = true;
        continue;
      }
      // Nothing queued: fold what producers left in the inbox, unless a fold
      // is under way (its batch is about to arrive).
      if (index_mu_.TryLock()) {
        const FoldResult folded = FoldLocked();
        index_mu_.Unlock();
        if (folded.queued) continue;
        if (folded.shutting_down) {
          // Nothing can be added any more; Done may still queue an item.
          mu_.Lock();
          if (!fifo_.empty()) item = PopLocked(now);
          if (metrics_ != nullptr) {
            PublishObservationsLocked();  // releases mu_
          } else {
            mu_.Unlock();
          }
          return item;
        }
      }
      if (!SpinForWork()) {
        // An idle queue's instruments are exact.
        PublishObservations();
        SleepUntilWork();
      }
    }
  }

  void Done(const T& item) {
    // The item's slot: this thread's last Get, or found through the index.
    // Only the worker that took the item calls Done for it, so the slot
    // cannot change hands before the check at the end.
    //
    // The usual case, this thread's last Get with no Add that this Done
    // must fold first, checks and finishes in one hold of mu_ (the clock
    // read before it); the others fold or look the item up, then finish.
    const int64_t at = NowNanosIfMetered();
    uint32_t slot = kNil;
    mu_.Lock();
    const LastGet last = last_get_;
    if (last.queue_id == id_ && IsProcessingLocked(last.slot, item)) {
      slot = last.slot;
      if (!MustFoldBeforeDone(slot)) {
        FinishLocked(slot, at);
        UnlockAfterRecording();
        return;
      }
    }
    mu_.Unlock();
    if (slot == kNil) {
      MutexLock lock(&index_mu_);
      slot = index_.Find(item, HashOf(item));
      if (slot == kNil) return;  // not queued, not being processed
    }
    if (MustFoldBeforeDone(slot)) Fold();
    AtStep(Step::kDoneChecked);
    const int64_t now = NowNanosIfMetered();
    mu_.Lock();
    if (IsProcessingLocked(slot, item)) FinishLocked(slot, now);
    UnlockAfterRecording();
  }

  void ShutDown() {
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

  void ShutDownWithDrain() {
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

  bool ShuttingDown() const { return shutting_down_.load(); }

 private:
  using Entry = internal::Entry<T>;
  using EntrySlab = Slab<Entry>;
  using Pending = ReadySchedule::Pending;
  static constexpr uint32_t kNil = kNilSlot;

  // An Add waiting in the inbox, hashed by the producer.
  struct Inboxed {
    T item;
    uint32_t hash;
  };

  static uint32_t HashOf(const T& key) {
    return internal::HashOf<T, Hash>(key);
  }

  struct FoldResult {
    bool queued = false;         // the fold queued at least one entry
    bool shutting_down = false;  // nothing can be added any more
  };

  template <typename K>
  void AddImpl(K&& item) {
    // Hashed here, outside every lock: the fold uses the hash, and Done
    // asks the inbox's filter whether its item waits to be folded.
    const uint32_t hash = HashOf(item);
    bool wake = false;
    size_t inboxed;
    {
      MutexLock lock(&inbox_mu_);
      if (shutting_down_.load(std::memory_order_relaxed)) return;
      inbox_.push_back(Inboxed{T(std::forward<K>(item)), hash});
      inbox_filter_.Insert(hash);
      wake = sleepers_ > signalled_;
      if (wake) ++signalled_;
      inboxed = inbox_.size();
      if (inboxed == 1) inbox_filled_.store(true, std::memory_order_relaxed);
    }
    AtStep(Step::kAddInboxed);
    if (wake) inbox_cv_.Signal();
    if (inboxed >= kInboxLimit) {
      Fold();
    } else if (inboxed % kFoldBatch == 0) {
      TryFold();
    }
  }

  // Moves every inboxed item into the queue proper, with client-go's Add
  // semantics, and reaps finished entries.
  void Fold() const {
    MutexLock lock(&index_mu_);
    FoldLocked();
  }

  // As Fold, unless another thread is folding (it will fold these items too).
  void TryFold() const {
    if (!index_mu_.TryLock()) return;
    FoldLocked();
    index_mu_.Unlock();
  }

  FoldResult FoldLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    FoldResult result;
    {
      MutexLock lock(&inbox_mu_);
      inbox_.swap(folding_);
      if (!folding_.empty()) {
        folding_filter_.CopyFrom(inbox_filter_);
        folding_now_.store(true, std::memory_order_release);
        inbox_filter_.Clear();
      }
      inbox_filled_.store(false, std::memory_order_release);
      result.shutting_down = shutting_down_.load(std::memory_order_relaxed);
    }
    if (folding_.empty()) {
      PublishLocked(Batch{});
      return result;
    }
    AtStep(Step::kFoldTaken);
    Batch batch;
    counted_ = 0;
    // A metered queue's Adds count from the moment they are folded in, a
    // few microseconds after the calls (one clock read per fold, none per
    // Add).
    const int64_t added_at =
        metrics_ != nullptr ? absl::ToUnixNanos(clock_->Now()) : 0;
    // The index's lines for the items a few places ahead are fetched while
    // this one is inserted: with a long FIFO the index is far larger than
    // the cache, and one miss after another would set the pace.
    const size_t n = folding_.size();
    for (size_t i = 0; i < n && i < kPrefetchAhead; ++i) PrefetchIndex(i);
    for (size_t i = 0; i < n; ++i) {
      if (i + kPrefetchAhead < n) PrefetchIndex(i + kPrefetchAhead);
      Inboxed& in = folding_[i];
      const uint32_t slot =
          InsertLocked(std::move(in.item), in.hash, added_at, &batch);
      if (slot != kNil) ++counted_;
    }
    folding_.clear();
    PublishLocked(batch, counted_);
    // Release: a reader that sees it clear sees this fold's effects. The
    // next fold sets it again only after this one releases index_mu_.
    folding_now_.store(false, std::memory_order_release);
    result.queued = batch.len != 0;
    return result;
  }

  // Starts fetching the index's lines where the `i`th item of the fold
  // under way would be found or inserted.
  void PrefetchIndex(size_t i) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    index_.Prefetch(folding_[i].hash);
  }

  // Whether Done of the item in `slot` must fold the inbox first to keep
  // client-go's order. In client-go an Add made before Done has already
  // marked the item dirty, and every other Add made before Done has already
  // queued its item, so Done queues the item again behind them all. Here
  // such Adds may still sit in the inbox or in a fold under way; they matter
  // only if one of them is of this item, or if the item is already marked
  // dirty (Done would queue it ahead of them).
  bool MustFoldBeforeDone(uint32_t slot) const {
    if (!UnfoldedAddsMayExist()) return false;
    const Entry& entry = slab_.at(slot);
    return UnfoldedAddMayBeOf(entry.hash) ||
           entry.state.load(std::memory_order_acquire) == kProcessingDirty;
  }

  bool UnfoldedAddsMayExist() const {
    return inbox_filled_.load(std::memory_order_acquire) ||
           folding_now_.load(std::memory_order_acquire);
  }

  // Whether an Add of an item with this hash may wait in the inbox or in a
  // fold under way: false positives possible, no misses, no lock.
  //
  // Why nothing is missed: an Add that precedes the caller left its hash in
  // inbox_filter_ and inbox_filled_ set, unless a fold has taken it since.
  // A fold copies the filter to folding_filter_ and sets folding_now_
  // (release) before it clears inbox_filter_ and inbox_filled_ (release),
  // and clears folding_now_ (release; a later fold, holding index_mu_ after
  // this one, sets it again only after) once its items are published. So each
  // acquire below either still sees the Add, or sees the fold that took it and
  // then that fold's filter, or sees that fold finished and its effects (the
  // item marked dirty, or the Add collapsed) visible.
  bool UnfoldedAddMayBeOf(uint32_t hash) const {
    if (!UnfoldedAddsMayExist()) return false;
    if (inbox_filter_.Has(hash)) return true;
    return folding_now_.load(std::memory_order_acquire) &&
           folding_filter_.Has(hash);
  }

  bool HeadIsQueued() const {
    MutexLock lock(&mu_);
    return !fifo_.empty();
  }

  // Joins `batch` to the FIFO, counts in the metrics the `counted` Adds
  // that count (queued, or marked to be queued again), reaps the entries
  // finished so far, and wakes a worker if anything was queued.
  void PublishLocked(const Batch& batch, size_t counted = 0) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    {
      MutexLock lock(&mu_);
      if (counted != 0 && metrics_ != nullptr) metrics_->Add(counted);
      if (batch.len != 0) PushLocked(batch);
      TakeFinishedLocked();
    }
    ReapLocked();
    AtStep(Step::kPublished);
    if (batch.len != 0 && sleepers_pending_.load()) WakeOneSleeper();
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

  // Reaps the entries finished so far, unless another thread holds the
  // index.
  void TryReap() const {
    if (!index_mu_.TryLock()) return;
    PublishLocked(Batch{});
    index_mu_.Unlock();
  }

  // client-go's Add for one item. Returns the item's slot if the Add counts
  // (queued, or marked to be queued again), kNil if it collapsed into an
  // entry already waiting. A newly queued slot is appended to `batch`.
  uint32_t InsertLocked(T&& item, uint32_t hash, int64_t added_at,
                        Batch* batch) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    return AddExistingLocked(EntryForLocked(std::move(item), hash), added_at,
                             batch);
  }

  // The slot of `item`'s entry, created if it has none. A new entry is
  // kFinished: in no list, processed by no one.
  uint32_t EntryForLocked(T&& item, uint32_t hash) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    return index_.FindOrInsert(item, hash, [&] {
      const uint32_t slot = slab_.Allocate();
      // A reused entry was last written by whoever reaped it: fetch the one
      // that a later insert of this fold will get.
      const uint32_t later = slab_.Peek(kPrefetchAhead);
      if (later != kNil) PrefetchForWrite(&slab_.at(later));
      Entry& fresh = slab_.at(slot);
      new (&fresh.key) T(std::move(item));
      fresh.hash = hash;
      fresh.added = 0;
      fresh.state.store(kFinished, std::memory_order_relaxed);
      return slot;
    });
  }

  // client-go's Add on an entry: as InsertLocked. A metered queue passes
  // the Add's time in `added_at` (0 otherwise), kept as the item's first-add
  // time if the Add counts.
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
      // Written by the folder: fetch it while this item is processed.
      __builtin_prefetch(&slab_.at(fifo_.head()), /*rw=*/1);
    }
    queued_.store(fifo_.len(), std::memory_order_relaxed);
    if (metrics_ != nullptr) {
      metrics_->Get(slot, now, entry.added);
      // Before the entry is marked processing: from then on the folder may
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
    uint8_t state = kProcessing;
    if (entry.state.compare_exchange_strong(state, kFinished,
                                            std::memory_order_acq_rel)) {
      finished_.push_back(SlotRef{slot, entry.hash});
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
      index_.Erase(ref.slot, ref.hash);
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
    // fold them in first.
    if (inbox_filled_.load(std::memory_order_acquire)) FoldLocked();
    Batch batch;
    counted_ = 0;
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
      if (AddExistingLocked(p.slot, added_at, &batch) != kNil) ++counted_;
    }
    if (due != 0) PublishLocked(batch, counted_);
    return due;
  }

  size_t WaitingLenLocked() const override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(index_mu_) {
    return waiting_;
  }

  // Yields the CPU a few times while nothing is waiting, in case work is
  // about to arrive: sleeping and being woken costs a futex round trip, and
  // on virtual machines waking an idle CPU costs tens of microseconds.
  // Returns whether work (or shutdown) arrived.
  bool SpinForWork() const {
    for (int i = 0; i < kSpinsBeforeSleep; ++i) {
      if (inbox_filled_.load(std::memory_order_relaxed) ||
          queued_.load(std::memory_order_relaxed) != 0 ||
          shutting_down_.load(std::memory_order_relaxed)) {
        return true;
      }
      std::this_thread::yield();
    }
    return false;
  }

  // Blocks until the inbox or the queue may hold an item, or shutdown.
  void SleepUntilWork() {
    MutexLock lock(&inbox_mu_);
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
      if (!inbox_.empty() || queued_.load() != 0 ||
          shutting_down_.load(std::memory_order_relaxed)) {
        break;
      }
      inbox_cv_.Wait(&inbox_mu_);
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
      MutexLock lock(&inbox_mu_);
      wake = sleepers_ > signalled_;
      if (wake) ++signalled_;
      sleepers_pending_.store(sleepers_ > signalled_);
    }
    AtStep(Step::kBeforeSignal);
    if (wake) inbox_cv_.Signal();
  }

  // The clock in Unix nanoseconds for a metered queue; 0 (unread) otherwise.
  int64_t NowNanosIfMetered() const {
    return metrics_ != nullptr ? absl::ToUnixNanos(clock_->Now()) : 0;
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

  // Every kUnfinishedWorkUpdatePeriod: folds the inbox and publishes the
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
      Fold();
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
  static inline std::atomic<uint64_t> next_id_{0};

  const Clock* const clock_;
  const uint64_t id_;

  // Set once in the constructor; its own state is guarded by mu_.
  std::unique_ptr<QueueMetrics> metrics_;
  // Serialises publishing metrics' batches; taken under mu_ (never the
  // other way round), held after mu_ is released.
  mutable Mutex publish_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::thread updater_;

  // Lock order: index_mu_, then mu_, then inbox_mu_. Each side's fields
  // start a cache line of their own, so that a producer's writes do not
  // evict what a worker reads on every Get, and the other way round.

  // The folder's side: deduplication. The index holds every entry that is
  // not free; the slab's allocation state is the folder's too.
  alignas(kCacheLine) mutable Mutex index_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable std::vector<Inboxed> folding_ ABSL_GUARDED_BY(index_mu_);
  // Adds of the current fold or due batch that count, for the metrics.
  mutable size_t counted_ ABSL_GUARDED_BY(index_mu_) = 0;
  mutable std::vector<SlotRef> reaping_ ABSL_GUARDED_BY(index_mu_);
  // Entries are read by workers under mu_ once pushed; see State.
  mutable EntrySlab slab_;
  mutable SlotIndex<T, Eq> index_ ABSL_GUARDED_BY(index_mu_);
  // Waiting items: how many, and their (ready, slot) pairs.
  mutable size_t waiting_ ABSL_GUARDED_BY(index_mu_) = 0;
  mutable ReadySchedule schedule_ ABSL_GUARDED_BY(index_mu_);

  // Producers' side.
  alignas(kCacheLine) mutable Mutex inbox_mu_ ABSL_ACQUIRED_AFTER(mu_);
  mutable CondVar inbox_cv_;  // consumers with nothing to do
  mutable std::vector<Inboxed> inbox_ ABSL_GUARDED_BY(inbox_mu_);
  // The hashes of the items in inbox_, and of those of the fold under way
  // (see MustFoldBeforeDone). Written under inbox_mu_.
  mutable HashFilter inbox_filter_;
  mutable HashFilter folding_filter_;
  int sleepers_ ABSL_GUARDED_BY(inbox_mu_) = 0;
  // Sleepers signalled but not yet awake: no need to signal them again.
  mutable int signalled_ ABSL_GUARDED_BY(inbox_mu_) = 0;
  // sleepers_ > signalled_, readable without the lock: read on every Get,
  // written only as workers fall asleep and wake.
  alignas(kCacheLine) mutable std::atomic<bool> sleepers_pending_{false};
  // !inbox_.empty(), readable without the lock; written as the inbox fills
  // and as it is folded, not on every Add, since idle workers watch it.
  mutable std::atomic<bool> inbox_filled_{false};
  // A fold has taken items from the inbox and not yet published them.
  // Written under index_mu_ (set under inbox_mu_ too).
  mutable std::atomic<bool> folding_now_{false};
  // Written under inbox_mu_, so no Add is accepted after it is seen.
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

#endif  // KCR_RUNTIME_WORKQUEUE_INTERNAL_FOLDING_QUEUE_H_
