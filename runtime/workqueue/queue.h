// Queue: the work queue every controller drains, with client-go's
// util/workqueue semantics.
//
//  * Fair: items are handed out in the order they were added.
//  * Stingy: an item is never handed to two workers at once, and an item
//    added several times before a worker takes it is handed out once.
//  * An item added again while a worker processes it is queued again when
//    that worker calls Done.
//  * Any number of producers and consumers; Get blocks until an item is
//    available or the queue shuts down.
//
// Interface is the seam (DelayingInterface and RateLimitingInterface extend
// it); Queue is its one implementation. How Queue does it, so that neither
// producers nor hashing hold up a worker, is described in
// folding_queue.h; nothing here depends on it.
#ifndef KCR_RUNTIME_WORKQUEUE_QUEUE_H_
#define KCR_RUNTIME_WORKQUEUE_QUEUE_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/hash/hash.h"
#include "base/clock.h"
#include "runtime/workqueue/folding_queue.h"
#include "runtime/workqueue/metrics.h"

namespace kcr::workqueue {

// The work-queue contract. All methods are thread-safe.
template <typename T>
class Interface {
 public:
  virtual ~Interface() = default;

  // Marks `item` as needing processing. Collapses into an item already
  // waiting; if the item is being processed it is queued again on Done.
  // Ignored once the queue is shutting down.
  virtual void Add(const T& item) = 0;
  virtual void Add(T&& item) = 0;

  // Items waiting to be handed out (not those being processed).
  virtual size_t Len() const = 0;

  // Blocks until an item is available and returns it; the caller must call
  // Done(item) when finished with it. After ShutDown, items still waiting are
  // handed out first; then Get returns std::nullopt at once.
  virtual std::optional<T> Get() = 0;

  // Marks the processing of `item` finished. If the item was added again
  // meanwhile, it is queued again. Done for an item that is not being
  // processed is ignored.
  virtual void Done(const T& item) = 0;

  // Stops accepting items and wakes every blocked Get. Returns at once.
  virtual void ShutDown() = 0;

  // As ShutDown, then blocks until every item handed out has been marked
  // Done. A later ShutDown from another thread releases it. Workers must call
  // Done, or this blocks forever.
  virtual void ShutDownWithDrain() = 0;

  virtual bool ShuttingDown() const = 0;
};

struct QueueOptions {
  // Names the queue in metrics (the `name` label). Empty: no metrics.
  std::string name;
  // Not owned. Null: the provider set with SetGlobalMetricsProvider, if any.
  MetricsProvider* metrics_provider = nullptr;
  // Not owned. Null: the real clock.
  const Clock* clock = nullptr;
};

namespace internal {

inline MetricsProvider* ResolveProvider(const QueueOptions& options) {
  if (options.name.empty()) return nullptr;
  return options.metrics_provider != nullptr ? options.metrics_provider
                                             : GlobalMetricsProvider();
}

}  // namespace internal

// The work queue. T is any copyable type hashable by `Hash` (absl::Hash by
// default) and comparable by `Eq`; std::string keys ("namespace/name") are
// the usual case.
template <typename T = std::string, typename Hash = absl::Hash<T>,
          typename Eq = std::equal_to<T>>
class Queue final : public Interface<T> {
 public:
  using Options = QueueOptions;

  explicit Queue(Options options = {})
      : impl_(options.clock != nullptr ? options.clock : Clock::Real(),
              internal::ResolveProvider(options), options.name) {}

  // Shuts the queue down. Items still waiting are dropped.
  ~Queue() override = default;

  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  void Add(const T& item) override { impl_.Add(item); }
  void Add(T&& item) override { impl_.Add(std::move(item)); }
  size_t Len() const override { return impl_.Len(); }
  std::optional<T> Get() override { return impl_.Get(); }
  void Done(const T& item) override { impl_.Done(item); }
  void ShutDown() override { impl_.ShutDown(); }
  void ShutDownWithDrain() override { impl_.ShutDownWithDrain(); }
  bool ShuttingDown() const override { return impl_.ShuttingDown(); }

 private:
  internal::FoldingQueue<T, Hash, Eq> impl_;
};

}  // namespace kcr::workqueue

#endif  // KCR_RUNTIME_WORKQUEUE_QUEUE_H_
