// Slab: entries addressed by a 32-bit slot number, in chunks that never
// move, with a stack of free slots. The work queue keeps its items (those
// waiting for a delay included) here and indexes them by slot, so that a
// hash index stores 8 bytes per item and an item can be linked into lists
// without allocating.
//
// Not an API: an implementation detail of the public queue templates
// (queue.h, delaying_queue.h), which include it, and installed with them
// for that reason only.
#ifndef KCR_RUNTIME_WORKQUEUE_SLAB_H_
#define KCR_RUNTIME_WORKQUEUE_SLAB_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "glog/logging.h"

namespace kcr::workqueue::internal {

inline constexpr uint32_t kNilSlot = UINT32_MAX;

// Starts fetching the cache line at `p` to write it. An asm statement:
// GCC 12 at -O2 -DNDEBUG deleted __builtin_prefetch calls from the queue's
// fold and reap loops, which then paid one cache miss after another.
inline void PrefetchForWrite(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, /*rw=*/1);
#endif
}

// Entry must be default-constructible and destroy what it holds in its own
// destructor. Free slots are kept apart from the entries, so that
// allocating reads no entry: a free entry's line is fetched only when its
// new owner writes it, and a caller may prefetch the entries it is about to
// get (Peek).
//
// Chunk c holds kFirstChunk << c entries, so a fixed table of chunk pointers
// covers every slot number: allocating never moves or copies an entry, and a
// thread may read an entry it was handed while another allocates (the
// owner's locks order the two). Not otherwise thread-safe.
template <typename Entry>
class Slab {
 public:
  Slab() = default;
  Slab(const Slab&) = delete;
  Slab& operator=(const Slab&) = delete;

  Entry& at(uint32_t slot) const {
    const uint64_t j = uint64_t{slot} + kFirstChunk;
    const int chunk = 63 - __builtin_clzll(j) - kFirstChunkBits;
    return chunks_[chunk][j - (kFirstChunk << chunk)];
  }

  // A free slot, reusing freed ones first; its entry's contents are the
  // caller's to set.
  uint32_t Allocate() {
    if (!free_.empty()) {
      const uint32_t slot = free_.back();
      free_.pop_back();
      return slot;
    }
    CHECK_LT(size_, kNilSlot) << "a work queue holds 2^32 items";
    const uint64_t j = uint64_t{size_} + kFirstChunk;
    if ((j & (j - 1)) == 0) {  // the first entry of a new chunk
      const int chunk = 63 - __builtin_clzll(j) - kFirstChunkBits;
      chunks_[chunk] = std::make_unique<Entry[]>(kFirstChunk << chunk);
    }
    return size_++;
  }

  // The slot the `i`th next Allocate (from 0) will return if it reuses a
  // freed one, or kNilSlot.
  uint32_t Peek(size_t i) const {
    return i < free_.size() ? free_[free_.size() - 1 - i] : kNilSlot;
  }

  // Returns `slot` to the free slots; the caller has released its contents.
  void Free(uint32_t slot) { free_.push_back(slot); }

 private:
  static constexpr int kFirstChunkBits = 8;
  static constexpr uint64_t kFirstChunk = uint64_t{1} << kFirstChunkBits;
  static constexpr int kMaxChunks = 33 - kFirstChunkBits;

  std::unique_ptr<Entry[]> chunks_[kMaxChunks];
  uint32_t size_ = 0;           // slots ever allocated
  std::vector<uint32_t> free_;  // a stack: the most recently freed first
};

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_SLAB_H_
