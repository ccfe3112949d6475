// Deltas and the Queue between a Reflector and an informer, as client-go's
// cache.Queue. The Reflector writes into the Queue as into any Store (Add,
// Update, Delete, Replace, Resync); the informer Pops what it wrote, in
// order, and applies it to its Indexer and its handlers.
//
// kcr's one implementation is RealFifo (real_fifo.h): every change in the
// order it happened, as client-go's RealFIFO (its default since 1.33); see
// docs/cache.md for why not DeltaFIFO.
#ifndef KCR_RUNTIME_CACHE_FIFO_H_
#define KCR_RUNTIME_CACHE_FIFO_H_

#include <cstddef>
#include <functional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "api/object.h"
#include "base/context.h"
#include "runtime/cache/store.h"

namespace kcr::cache {

enum class DeltaType {
  kAdded,
  kUpdated,
  kDeleted,
  // From a (re)list: the object as the list had it. Whether it is new to
  // the cache is for the consumer to find out.
  kReplaced,
  // From a periodic resync: the object as the cache has it.
  kSync,
};

std::string_view DeltaTypeName(DeltaType type);

// One change, to the key MetaNamespaceKey(*object) (a queue holds only
// objects that have one). For kDeleted, `object` is the object's last
// state; when `final_state_unknown` is set (client-go's
// DeletedFinalStateUnknown) the object vanished while the watch was down
// and was noticed by a relist, so `object` is the last state the cache saw,
// which may be stale.
//
// No key string is kept: at 24 bytes a delta of a 150,000-object list
// costs 3.6 MB in the queue, where a key string would add 80 bytes each.
struct Delta {
  DeltaType type = DeltaType::kAdded;
  bool final_state_unknown = false;
  api::ObjectPtr object;
};

// Handles one batch of popped deltas, oldest first. `is_in_initial_list`:
// every delta of the batch belongs to the first list (batches never mix the
// two). An error is logged by the caller; the deltas are not requeued.
using PopProcessFunc = std::function<absl::Status(absl::Span<const Delta> batch,
                                                  bool is_in_initial_list)>;

class Queue : public Store {
 public:
  // Waits until there is at least one delta, then removes up to
  // `max_batch` (>= 1) of them, oldest first, and hands them to `process`
  // on this thread. Returns kCancelled once the queue is closed (after the
  // deltas queued before Close have been popped) or ctx.Err() when `ctx`
  // ends first. One thread pops at a time.
  virtual absl::Status Pop(const Context& ctx, size_t max_batch,
                           const PopProcessFunc& process) = 0;

  // True once the first Replace has happened and every delta it queued has
  // been popped and processed (client-go's HasSynced).
  virtual bool HasSynced() const = 0;

  // Ends Pop once the queue is drained; later writes are ignored.
  virtual void Close() = 0;
};

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_FIFO_H_
