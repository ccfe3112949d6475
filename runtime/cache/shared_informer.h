// SharedIndexInformer: an indexed in-memory cache of one collection, kept
// current by list+watch, that tells any number of handlers about every
// change (client-go's sharedIndexInformer).
//
//   SharedIndexInformer pods(NewListWatch(client, pods_resource), {});
//   auto reg = pods.AddEventHandler(handler);  // before or after Run
//   std::thread t([&] { pods.Run(ctx); });     // until ctx ends
//   pods.WaitForSync(ctx);
//   pods.GetIndexer()->ByIndex(kNamespaceIndex, "default");
//
// Inside: a Reflector lists and watches into a RealFifo (its own thread);
// Run's thread pops the FIFO in batches, applies each change to the
// Indexer and hands a notification to every handler's ProcessorListener
// (each with its own thread), so handlers never hold up the cache or each
// other. See docs/cache.md.
//
// Thread-safe. Run at most once.
#ifndef KCR_RUNTIME_CACHE_SHARED_INFORMER_H_
#define KCR_RUNTIME_CACHE_SHARED_INFORMER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "api/transform.h"
#include "base/clock.h"
#include "base/context.h"
#include "base/mutex.h"
#include "runtime/cache/fifo.h"
#include "runtime/cache/index.h"
#include "runtime/cache/list_watch.h"
#include "runtime/cache/metrics.h"
#include "runtime/cache/processor_listener.h"
#include "runtime/cache/reflector.h"
#include "runtime/cache/thread_safe_store.h"

namespace kcr::cache {

// A resync period below this is raised to it (client-go's
// minimumResyncPeriod).
inline constexpr absl::Duration kMinimumResyncPeriod = absl::Seconds(1);
// Shard selector changes this close together cost one relist.
inline constexpr absl::Duration kShardSelectorBatchWindow =
    absl::Milliseconds(100);

struct SharedInformerOptions {
  // For logs and metrics, e.g. "pods".
  std::string name;
  // Every handler's default resync period; zero for none.
  absl::Duration resync_period = absl::ZeroDuration();
  // Indexes beyond the namespace index, which every informer has.
  Indexers indexers;
  // Null: the real clock.
  const Clock* clock = nullptr;
  // The reflector's knobs (its name, clock and resync come from here).
  ReflectorOptions reflector;
  // Changes applied to the cache per batch.
  size_t batch_size = 1000;
  // See processor_listener.h.
  size_t handler_max_in_order = 16384;
  // For the reflector's, the FIFO's and each handler's queue-depth
  // instruments (runtime/cache/metrics.h); null: the global provider.
  MetricsProvider* metrics = nullptr;
};

// A handler's registration: what RemoveEventHandler takes, and its own
// HasSynced.
class ResourceEventHandlerRegistration {
 public:
  // The informer has synced and this handler has been given (and has
  // returned from) every notification of the initial list.
  bool HasSynced() const;

 private:
  friend class SharedIndexInformer;
  ResourceEventHandlerRegistration(const class SharedIndexInformer* informer,
                                   std::shared_ptr<ProcessorListener> listener)
      : informer_(informer), listener_(std::move(listener)) {}
  const SharedIndexInformer* const informer_;
  const std::shared_ptr<ProcessorListener> listener_;
};

class SharedIndexInformer {
 public:
  SharedIndexInformer(std::unique_ptr<ListerWatcher> list_watch,
                      SharedInformerOptions options);
  // Stops handlers; Run must have returned (end its context first).
  ~SharedIndexInformer();
  SharedIndexInformer(const SharedIndexInformer&) = delete;
  SharedIndexInformer& operator=(const SharedIndexInformer&) = delete;

  // Adds a handler, at any time. One added after Run started first gets
  // the cache's contents as OnAdd(object, true). `resync_period`: zero for
  // the informer's default; below 1 s it is raised to 1 s; after Run
  // started, one shorter than the informer's resync check period is raised
  // to it (client-go). kFailedPrecondition once the informer has stopped.
  absl::StatusOr<std::shared_ptr<ResourceEventHandlerRegistration>>
  AddEventHandler(std::shared_ptr<ResourceEventHandler> handler,
                  absl::Duration resync_period = absl::ZeroDuration());
  // Stops delivering to the handler (the call in progress finishes).
  absl::Status RemoveEventHandler(
      const std::shared_ptr<ResourceEventHandlerRegistration>& registration);

  // What runs on each object before it is cached (api/transform.h). The
  // default strips metadata.managedFields (a no-op when the client already
  // stripped them while parsing); null caches objects as decoded. Before
  // Run only (kFailedPrecondition after).
  absl::Status SetTransform(api::TransformFunc transform);
  // More indexes; also on a running informer.
  absl::Status AddIndexers(Indexers indexers);

  // Lists, watches and delivers until `ctx` ends, then stops every thread
  // it started and returns. Only the first call runs.
  void Run(const Context& ctx);

  // The cache holds the first list's contents (client-go's HasSynced).
  bool HasSynced() const;
  // Waits until HasSynced (OK) or `ctx` ends (ctx.Err()); kCancelled if the
  // informer stops first.
  absl::Status WaitForSync(const Context& ctx) const;
  bool IsStopped() const;
  // The resourceVersion of the last list or watch event seen.
  std::string LastSyncResourceVersion() const;

  // Read-your-own-writes: waits until the cache has seen `key` at
  // `resource_version` or later (or the object's deletion after it), e.g.
  // the version a write of the caller's returned. OK when it has;
  // ctx.Err() when `ctx` ends first. Versions are compared as numbers, as
  // kube-apiserver's etcd-backed versions are (see docs/cache.md); one that
  // is not a number is waited for exactly.
  absl::Status WaitForResourceVersion(const Context& ctx, std::string_view key,
                                      std::string_view resource_version) const;

  // Lists and watches only the objects `selector` (a KEP-5866
  // shardSelector, "" for all) matches from now on: when it changed, the
  // reflector ends its watch and lists again, and the cache drops what the
  // new list lacks (as deletions) and adds what it brings. A server that
  // ignores the selector sends everything, so handlers must filter too.
  // Changes less than kShardSelectorBatchWindow apart (unless the options'
  // reflector.relist_batch_window says otherwise) are listed together.
  // Unimplemented when the ListerWatcher cannot be sharded. Thread-safe.
  absl::Status SetShardSelector(std::string selector) ABSL_LOCKS_EXCLUDED(mu_);
  // True once a list with the current shardSelector reached the cache's
  // queue (and the informer runs).
  bool ShardSelectorListed() const ABSL_LOCKS_EXCLUDED(mu_);

  // The cache. Never null; read-only for callers (writes come from the
  // watch).
  const Indexer* GetIndexer() const { return store_.get(); }
  const Store* GetStore() const { return store_.get(); }

  const std::string& name() const { return options_.name; }

 private:
  // Applies popped changes to the cache and hands them to the handlers.
  absl::Status HandleDeltas(absl::Span<const Delta> batch, bool initial)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Hands `events` to every handler.
  void DistributeLocked(absl::Span<const HandlerEvent> events)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks the informer stopped and stops every handler's listener (their
  // threads are joined before it returns, unless another owner remains).
  void StopHandlers() ABSL_LOCKS_EXCLUDED(mu_);
  // The reflector's ShouldResync: picks the handlers due for a resync.
  bool ShouldResync() ABSL_LOCKS_EXCLUDED(mu_);
  bool SatisfiesLocked(std::string_view key, std::string_view rv,
                       int64_t wanted) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(wait_mu_);

  const SharedInformerOptions options_;
  const Clock* const clock_;
  MetricsProvider* const metrics_;
  const std::unique_ptr<ListerWatcher> list_watch_;
  const std::unique_ptr<ThreadSafeStore> store_;

  // client-go's blockDeltas: held while changes are handed to handlers, so
  // that a handler added meanwhile gets each object exactly once.
  mutable Mutex mu_;
  std::vector<std::shared_ptr<ProcessorListener>> listeners_
      ABSL_GUARDED_BY(mu_);
  // Listeners due for a resync at the current Sync deltas.
  std::vector<ProcessorListener*> syncing_ ABSL_GUARDED_BY(mu_);
  // Removed listeners, joined when Run ends.
  std::vector<std::shared_ptr<ProcessorListener>> retired_ ABSL_GUARDED_BY(mu_);
  api::TransformFunc transform_ ABSL_GUARDED_BY(mu_);
  absl::Duration resync_check_period_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  int handlers_added_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<Queue> fifo_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Reflector> reflector_ ABSL_GUARDED_BY(mu_);

  // The FIFO, once Run made it, for HasSynced.
  std::atomic<Queue*> running_fifo_{nullptr};

  // For WaitForSync and WaitForResourceVersion: signalled after every
  // batch; waiters also re-check every kWaitPoll (a FIFO that synced on
  // an empty list has nothing to pop).
  mutable Mutex wait_mu_;
  mutable CondVar wait_cv_;
  bool done_ ABSL_GUARDED_BY(wait_mu_) = false;
  int64_t applied_rv_ ABSL_GUARDED_BY(wait_mu_) = 0;
};

// Waits until every informer has synced (OK) or `ctx` ends (ctx.Err()),
// client-go's WaitForCacheSync.
absl::Status WaitForCacheSync(
    const Context& ctx, absl::Span<const SharedIndexInformer* const> informers);

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_SHARED_INFORMER_H_
