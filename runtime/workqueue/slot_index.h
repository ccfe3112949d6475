// The work queue's items and their index: each item has one Entry in a
// Slab (slab.h), whatever lists it is in, and a hash set of slot
// numbers finds an item's entry by key. FoldingQueue
// (folding_queue.h) deduplicates through the index and links
// entries into its FIFO; a delaying queue's waiting items are entries too.
//
// Not an API: an implementation detail of the public queue templates
// (queue.h, delaying_queue.h), which include it, and installed with them
// for that reason only.
#ifndef KCR_RUNTIME_WORKQUEUE_SLOT_INDEX_H_
#define KCR_RUNTIME_WORKQUEUE_SLOT_INDEX_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/workqueue/slab.h"

namespace kcr::workqueue::internal {

// An entry's life: kFree → kQueued (folded in) → kProcessing (Get) →
// kFinished (Done) → kFree (reaped), with kProcessingDirty (added again
// while processing; Done queues it again) and kFinished → kQueued (added
// again before the reap). The folder (under the queue's index lock) moves
// kProcessing to kProcessingDirty and kFinished onwards; workers (under the
// FIFO's lock) move kQueued, kProcessing and kProcessingDirty onwards. The
// one transition both sides start from, kProcessing, is a compare-and-swap.
enum EntryState : uint8_t {
  kFree,
  kQueued,
  kProcessing,
  kProcessingDirty,
  kFinished
};

// One item. `key` is alive unless state == kFree and does not change until
// the entry is reaped; `next` links the FIFO, a fold's batch or the free
// list; `hash` is 32 bits of the key's hash, as in the index.
//
// Who may touch which field (the folder holds the queue's index lock, the
// workers its FIFO lock; the two run at once):
//  * `state` is atomic; either side reads it at any time.
//  * `key` and `hash` are written only by the folder, when it allocates the
//    entry or reaps it, and only the folder frees an entry, only once it
//    is kFinished. A worker reads them only while the entry is queued in
//    the FIFO or being processed (so it cannot be freed) — in particular
//    Done reads the hash before the swap that makes the entry kFinished,
//    since from that moment the folder may reap it and give its slot to
//    another key.
//  * `next` belongs to whoever holds the list the entry is in: the folder
//    for a batch not yet published (and for kFinished and free entries),
//    the workers for the FIFO (and for an entry being processed, which Done
//    may queue again). Publishing a batch under both locks hands it over.
//  * `ready` is the folder's alone.
//  * `added` is the workers' while the entry is in the FIFO (Get reads and
//    clears it before the release store of kProcessing) and the folder's
//    otherwise: it stamps a batch before publishing it, and records an Add
//    of an entry being processed before the compare-and-swap that marks it
//    dirty (Done's failed swap acquires it).
template <typename T>
struct Entry {
  Entry() {}
  ~Entry() {
    if (state.load(std::memory_order_relaxed) != kFree) key.~T();
  }
  union {
    T key;
  };
  uint32_t next = kNilSlot;
  uint32_t hash = 0;  // the key's, so that the reap never hashes
  std::atomic<uint8_t> state{kFree};
  // Under the index lock: when a delaying queue adds the item (Unix
  // nanoseconds), or 0 if it is not waiting.
  int64_t ready = 0;
  // A metered queue's first-add time of the item (Unix nanoseconds), for
  // its queue latency, or 0. Kept here, on the line a worker fetches
  // anyway, rather than in the metrics. Written by the folder before the
  // entry is published or marked dirty, read and cleared by Get.
  int64_t added = 0;
};

// An entry's slot with 32 bits of its key's hash: what the index stores,
// and what a reap needs to erase an entry without hashing or comparing
// keys.
struct SlotRef {
  uint32_t slot = kNilSlot;
  uint32_t hash = 0;
};

// The 32 bits of `Hash` that the queue keeps for a key.
template <typename T, typename Hash>
uint32_t HashOf(const T& key) {
  return static_cast<uint32_t>(Hash()(key));
}

// Every entry that is not free, by key: an open-addressing table (linear
// probing, at most half full) of (slot, 32-bit hash) cells, 8 bytes each.
// With the hash at hand, growing never reads the slab, a probe compares
// keys only on a matching hash, and erasing compares slot numbers, not
// keys. Where a key would be is a function of its hash alone, so a batch of
// lookups can fetch its cells ahead (Prefetch) and overlap the cache misses
// of an index far larger than the cache: a fold's inserts and a reap's
// erases do. Not thread-safe.
template <typename T, typename Eq>
class SlotIndex {
 public:
  explicit SlotIndex(const Slab<Entry<T>>* slab) : slab_(slab) {
    Resize(kMinBits);
  }
  SlotIndex(const SlotIndex&) = delete;
  SlotIndex& operator=(const SlotIndex&) = delete;

  size_t size() const { return size_; }

  // Starts fetching the cell where a key with this hash would be.
  void Prefetch(uint32_t hash) const { PrefetchForWrite(&cells_[Home(hash)]); }

  // The slot of `key`'s entry, or kNilSlot.
  uint32_t Find(const T& key, uint32_t hash) const {
    for (size_t i = Home(hash);; i = (i + 1) & mask_) {
      const Cell c = cells_[i];
      if (c.slot == kNilSlot) return kNilSlot;
      if (c.hash == hash && Eq()(slab_->at(c.slot).key, key)) return c.slot;
    }
  }

  // The slot of `key`'s entry; if it has none, the slot `make()` returns,
  // which must hold `key` by then, is inserted.
  template <typename Make>
  uint32_t FindOrInsert(const T& key, uint32_t hash, Make make) {
    if (size_ + 1 > (mask_ + 1) / 2) Resize(bits_ + 1);
    size_t i = Home(hash);
    for (;; i = (i + 1) & mask_) {
      const Cell c = cells_[i];
      if (c.slot == kNilSlot) break;
      if (c.hash == hash && Eq()(slab_->at(c.slot).key, key)) return c.slot;
    }
    const uint32_t slot = make();
    cells_[i] = Cell{slot, hash};
    ++size_;
    return slot;
  }

  // Removes the entry in `slot`, whose key has this hash. It must be there.
  void Erase(uint32_t slot, uint32_t hash) {
    size_t i = Home(hash);
    while (cells_[i].slot != slot) i = (i + 1) & mask_;
    // Backward-shift deletion: move up each later cell of the run that may
    // live at i (its home is not cyclically within (i, j]), so that no
    // tombstones are needed.
    for (size_t j = (i + 1) & mask_; cells_[j].slot != kNilSlot;
         j = (j + 1) & mask_) {
      const size_t home = Home(cells_[j].hash);
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        cells_[i] = cells_[j];
        i = j;
      }
    }
    cells_[i] = Cell{};
    --size_;
  }

 private:
  static constexpr int kMinBits = 4;

  using Cell = SlotRef;  // slot == kNilSlot: empty

  // Fibonacci hashing: the top bits of the product, so that the position
  // depends on every bit of the hash.
  size_t Home(uint32_t hash) const {
    return static_cast<size_t>((uint64_t{hash} * 0x9E3779B97F4A7C15ull) >>
                               (64 - bits_));
  }

  void Resize(int bits) {
    const size_t old_capacity = cells_ != nullptr ? mask_ + 1 : 0;
    std::unique_ptr<Cell[]> old = std::move(cells_);
    bits_ = bits;
    mask_ = (size_t{1} << bits) - 1;
    cells_ = std::make_unique<Cell[]>(mask_ + 1);
    for (size_t k = 0; k < old_capacity; ++k) {
      const Cell c = old[k];
      if (c.slot == kNilSlot) continue;
      size_t i = Home(c.hash);
      while (cells_[i].slot != kNilSlot) i = (i + 1) & mask_;
      cells_[i] = c;
    }
  }

  const Slab<Entry<T>>* const slab_;
  std::unique_ptr<Cell[]> cells_;
  int bits_ = 0;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_SLOT_INDEX_H_
