// WaitingItems: what a delaying queue needs of the queue it feeds.
//
// DelayingQueue (runtime/workqueue/delaying_queue.h) keeps the items that
// wait for a delay in the queue's own index, beside the queued ones, so
// that a due item joins the FIFO without being hashed or copied again and
// an item both waiting and queued is stored once. This interface is that
// seam: the delaying queue's timer thread hands items over with their ready
// times and asks for the due ones to be added, all under the lock that
// guards the waiting items (the queue's index lock; FoldingQueue implements
// it).
//
// Not an API: an implementation detail of the public queue templates
// (queue.h, delaying_queue.h), which include it, and installed with them
// for that reason only.
#ifndef KCR_RUNTIME_WORKQUEUE_WAITING_ITEMS_H_
#define KCR_RUNTIME_WORKQUEUE_WAITING_ITEMS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"

namespace kcr::workqueue::internal {

template <typename T>
class WaitingItems {
 public:
  // An item to add once `ready` (Unix nanoseconds) has come.
  struct Delayed {
    int64_t ready;
    T item;
  };

  // The lock that guards the waiting items. The queue takes it before its
  // FIFO's lock; a caller's own locks taken under it come after both.
  virtual Mutex* waiting_mu() const = 0;

  // Keeps each item waiting until its ready time, or until the earlier
  // ready time it is already waiting for (client-go drops the later
  // AddAfter). Moves the items out of `*items`.
  virtual void AddWaitingLocked(std::vector<Delayed>* items)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(waiting_mu()) = 0;

  // The earliest ready time of a waiting item, or nullopt when none waits.
  // May be earlier than any item's (a superseded time): it only wakes the
  // caller early.
  virtual std::optional<int64_t> NextReadyLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(waiting_mu()) = 0;

  // Adds to the queue, as Add would and in ready order, up to `limit` items
  // due at `now` (Unix nanoseconds). Returns how many ready times it took,
  // superseded ones included: when that is `limit`, more may be due.
  virtual size_t AddDueLocked(int64_t now, size_t limit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(waiting_mu()) = 0;

  // Items waiting for their ready time.
  virtual size_t WaitingLenLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(waiting_mu()) = 0;

 protected:
  ~WaitingItems() = default;
};

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_WAITING_ITEMS_H_
