// RealFifo: the Queue between a Reflector and an informer, as client-go's
// RealFIFO (the_real_fifo.go). Every change is queued in the order it
// happened, with no per-key coalescing, and popped in batches; see
// docs/cache.md for why kcr uses it rather than DeltaFIFO.
//
// What each write queues:
//   Add / Update / Delete   one kAdded / kUpdated / kDeleted delta;
//   Replace(list, rv)       kReplaced for every listed object, in list
//                           order, then a kDeleted with final_state_unknown
//                           for every known key the list lacks, carrying
//                           the last state seen of it;
//   Resync()                kSync for every object of `known_objects` whose
//                           key has no delta waiting or being processed.
// A key is "known" when `known_objects` (the informer's indexer) holds it,
// or when its newest delta still waiting or being processed is not a
// kDeleted. The last state seen is that delta's object, else the indexer's.
//
// Writes may come from any thread. Pop hands each batch to its callback
// without holding the queue's lock, so the Reflector keeps queueing while
// the informer applies a batch; until the callback returns, the batch's
// keys count as waiting (Resync skips them, Replace sees them).
#ifndef KCR_RUNTIME_CACHE_REAL_FIFO_H_
#define KCR_RUNTIME_CACHE_REAL_FIFO_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "api/object.h"
#include "api/transform.h"
#include "base/context.h"
#include "base/mutex.h"
#include "runtime/cache/fifo.h"
#include "runtime/cache/metrics.h"
#include "runtime/cache/store.h"

namespace kcr::cache {

struct RealFifoOptions {
  // The objects the consumer has applied (the informer's indexer), read by
  // Replace and Resync. Not owned; null for none (then Resync queues
  // nothing, and Replace detects deletions among queued deltas only).
  const Store* known_objects = nullptr;
  // Applied to every object as it is queued by Add, Update, Delete and
  // Replace (not to kDeleted tombstones made by Replace, nor to kSync); an
  // error keeps the object out of the queue, logged and counted.
  api::TransformFunc transform;
  // For logs and the dropped-objects metric; metrics are recorded only
  // when it is non-empty.
  std::string name;
  // Null: the global provider (runtime/cache/metrics.h).
  MetricsProvider* metrics = nullptr;
};

// Thread-safe. One thread pops at a time.
class RealFifo final : public Queue {
 public:
  explicit RealFifo(RealFifoOptions options = {});
  ~RealFifo() override;

  RealFifo(const RealFifo&) = delete;
  RealFifo& operator=(const RealFifo&) = delete;

  // kInvalidArgument for an object without a key (nothing is queued). An
  // object its transform rejects is dropped and OK is returned: a bad
  // object from the server must not stop the reflector. After Close,
  // writes are ignored.
  absl::Status Add(api::ObjectPtr object) override;
  absl::Status Update(api::ObjectPtr object) override;
  absl::Status Delete(api::ObjectPtr object) override;
  // Objects without a key are skipped (logged); the rest are queued.
  absl::Status Replace(std::vector<api::ObjectPtr> objects,
                       std::string resource_version) override;
  absl::Status Resync() override;
  // While held, writes do not wake a waiting Pop; the last release does,
  // when anything is queued.
  void HoldWakeups() override;
  void ReleaseWakeups() override;

  // The newest state of every key with a delta waiting (not the ones being
  // processed), deleted ones excluded, as client-go's RealFIFO lists its
  // queue; mostly for tests.
  std::vector<api::ObjectPtr> List() const override;
  std::vector<std::string> ListKeys() const override;
  api::ObjectPtr GetByKey(std::string_view key) const override;

  absl::Status Pop(const Context& ctx, size_t max_batch,
                   const PopProcessFunc& process) override;
  bool HasSynced() const override;
  void Close() override;

  // Deltas waiting to be popped.
  size_t Len() const;

 private:
  // The batch being processed; immutable while the callback runs, so that
  // Replace and Resync may read it from other threads.
  struct Batch {
    std::vector<Delta> deltas;
  };

  // Applies the transform; null when the object is to be dropped.
  api::ObjectPtr Transform(api::ObjectPtr object);
  absl::Status Enqueue(DeltaType type, api::ObjectPtr object);
  // Queues without waking Pop: the caller calls WakeLocked once it is
  // done queueing.
  void PushLocked(Delta delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Wakes Pop when something is queued and no wake-ups are held.
  void WakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Store* const known_objects_;
  const api::TransformFunc transform_;
  const std::string name_;
  std::unique_ptr<CounterMetric> transform_errors_;
  std::unique_ptr<CounterMetric> no_key_;

  mutable Mutex mu_;
  ContextCondVar cv_;
  std::deque<Delta> items_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const Batch> in_flight_ ABSL_GUARDED_BY(mu_);
  bool popping_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // HoldWakeups calls not yet released.
  size_t holds_ ABSL_GUARDED_BY(mu_) = 0;
  // Set by the first Replace.
  bool populated_ ABSL_GUARDED_BY(mu_) = false;
  // Of the deltas queued up to the end of the first Replace: how many are
  // not popped yet, and how many are not processed yet (HasSynced is
  // true once the latter is zero).
  size_t initial_unpopped_ ABSL_GUARDED_BY(mu_) = 0;
  size_t initial_unprocessed_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_REAL_FIFO_H_
