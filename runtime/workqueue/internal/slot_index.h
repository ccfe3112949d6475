// The work queue's items and their index: each item has one Entry in a
// Slab (internal/slab.h), whatever lists it is in, and a hash set of slot
// numbers finds an item's entry by key. FoldingQueue
// (internal/folding_queue.h) deduplicates through the index and links
// entries into its FIFO; a delaying queue's waiting items are entries too.
#ifndef KCR_RUNTIME_WORKQUEUE_INTERNAL_SLOT_INDEX_H_
#define KCR_RUNTIME_WORKQUEUE_INTERNAL_SLOT_INDEX_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/container/flat_hash_set.h"
#include "runtime/workqueue/internal/slab.h"

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

// The index stores a slot number and 32 bits of the key's hash, and looks
// keys up through the slab. With the hash at hand, growing the index never
// reads the slab, a probe touches the slab only on a likely match, and a
// reap (with the hash kept in the entry) compares slot numbers, not keys.
struct SlotRef {
  uint32_t slot;
  uint32_t hash;
};

// A key with its hash already computed.
template <typename T>
struct HashedKey {
  const T* key;
  uint32_t hash;
};

// The 32 bits of `Hash` that the queue keeps for a key.
template <typename T, typename Hash>
uint32_t HashOf(const T& key) {
  return static_cast<uint32_t>(Hash()(key));
}

template <typename T, typename Hash>
struct IndexHash {
  using is_transparent = void;
  size_t operator()(SlotRef ref) const { return ref.hash; }
  size_t operator()(HashedKey<T> key) const { return key.hash; }
  size_t operator()(const T& key) const { return HashOf<T, Hash>(key); }
};

template <typename T, typename Eq>
struct IndexEq {
  using is_transparent = void;
  const Slab<Entry<T>>* slab;
  bool operator()(SlotRef a, SlotRef b) const { return a.slot == b.slot; }
  bool operator()(SlotRef a, HashedKey<T> key) const {
    return a.hash == key.hash && Eq()(slab->at(a.slot).key, *key.key);
  }
  bool operator()(HashedKey<T> key, SlotRef a) const { return (*this)(a, key); }
  bool operator()(SlotRef a, const T& key) const {
    return Eq()(slab->at(a.slot).key, key);
  }
  bool operator()(const T& key, SlotRef a) const { return (*this)(a, key); }
};

// Every entry that is not free, by key: look up with a HashedKey (or a
// plain key, hashed on the spot), erase by SlotRef.
template <typename T, typename Hash, typename Eq>
using SlotIndex =
    absl::flat_hash_set<SlotRef, IndexHash<T, Hash>, IndexEq<T, Eq>>;

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_INTERNAL_SLOT_INDEX_H_
