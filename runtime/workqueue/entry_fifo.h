// EntryFifo: the work queue's FIFO of queued items, a list of slab entries
// (slot_index.h) linked through their `next` slot. A fold links
// the entries it queues into a Batch off the FIFO's lock, and the batch
// joins the FIFO in one step; Get pops the head without hashing.
//
// Not an API: an implementation detail of the public queue templates
// (queue.h, delaying_queue.h), which include it, and installed with them
// for that reason only.
#ifndef KCR_RUNTIME_WORKQUEUE_ENTRY_FIFO_H_
#define KCR_RUNTIME_WORKQUEUE_ENTRY_FIFO_H_

#include <cstddef>
#include <cstdint>

#include "runtime/workqueue/slab.h"

namespace kcr::workqueue::internal {

// Entries linked through `next`, head to tail, not yet in the FIFO.
struct Batch {
  uint32_t head = kNilSlot;
  uint32_t tail = kNilSlot;
  size_t len = 0;
};

// Appends the entry in `slot` to `batch`.
template <typename Entry>
void LinkInto(const Slab<Entry>& slab, uint32_t slot, Batch* batch) {
  slab.at(slot).next = kNilSlot;
  if (batch->tail == kNilSlot) {
    batch->head = slot;
  } else {
    slab.at(batch->tail).next = slot;
  }
  batch->tail = slot;
  ++batch->len;
}

// Not thread-safe: the queue's worker lock guards it.
class EntryFifo {
 public:
  bool empty() const { return head_ == kNilSlot; }
  // The slot at the head, or kNilSlot.
  uint32_t head() const { return head_; }
  size_t len() const { return len_; }

  // Appends the entries of `batch`, in order.
  template <typename Entry>
  void Push(const Slab<Entry>& slab, const Batch& batch) {
    if (tail_ == kNilSlot) {
      head_ = batch.head;
    } else {
      slab.at(tail_).next = batch.head;
    }
    tail_ = batch.tail;
    len_ += batch.len;
  }

  // Unlinks the head and returns its slot. Not empty.
  template <typename Entry>
  uint32_t Pop(const Slab<Entry>& slab) {
    const uint32_t slot = head_;
    head_ = slab.at(slot).next;
    if (head_ == kNilSlot) tail_ = kNilSlot;
    --len_;
    return slot;
  }

 private:
  uint32_t head_ = kNilSlot;
  uint32_t tail_ = kNilSlot;
  size_t len_ = 0;
};

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_ENTRY_FIFO_H_
