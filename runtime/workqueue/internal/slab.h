// Slab: entries addressed by a 32-bit slot number, in chunks that never
// move, with a free list. The work queue keeps its items (those waiting for
// a delay included) here and indexes them by slot, so that a hash index
// stores 8 bytes per item and an item can be linked into lists without
// allocating.
#ifndef KCR_RUNTIME_WORKQUEUE_INTERNAL_SLAB_H_
#define KCR_RUNTIME_WORKQUEUE_INTERNAL_SLAB_H_

#include <cstdint>
#include <memory>

#include "glog/logging.h"

namespace kcr::workqueue::internal {

inline constexpr uint32_t kNilSlot = UINT32_MAX;

// Entry must be default-constructible, destroy what it holds in its own
// destructor, and have a `uint32_t next` member, which the slab uses while
// the entry is free.
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
    if (free_ != kNilSlot) {
      const uint32_t slot = free_;
      free_ = at(slot).next;
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

  // Returns `slot` to the free list; the caller has released its contents.
  void Free(uint32_t slot) {
    at(slot).next = free_;
    free_ = slot;
  }

 private:
  static constexpr int kFirstChunkBits = 8;
  static constexpr uint64_t kFirstChunk = uint64_t{1} << kFirstChunkBits;
  static constexpr int kMaxChunks = 33 - kFirstChunkBits;

  std::unique_ptr<Entry[]> chunks_[kMaxChunks];
  uint32_t size_ = 0;  // slots ever allocated
  uint32_t free_ = kNilSlot;
};

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_INTERNAL_SLAB_H_
