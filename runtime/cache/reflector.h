// Reflector: keeps a Store in step with one collection on the server by
// listing it and then watching it, as client-go's cache.Reflector.
//
// Run() loops until its context ends:
//   1. List. The first list asks for resourceVersion "0" (any version, so
//      the server may answer from its watch cache) in pages of 500,
//      following continue tokens; a later list asks for the last synced
//      resourceVersion with no limit (so the watch cache answers, sparing
//      etcd a thundering herd), or in pages if an earlier "0" list came
//      back paged (the server has no watch cache); after a 410 Expired /
//      Gone (or "too large resourceVersion") it asks for "" (a quorum read)
//      at once. A continue token that expires mid-list falls back to one
//      full list. The items are collected and handed to store->Replace
//      together once the list is complete.
//   2. Watch from the list's resourceVersion, with bookmarks and a
//      timeoutSeconds drawn at random in [min, max) watch timeout. ADDED,
//      MODIFIED and DELETED become store->Add, Update and Delete; every
//      event (bookmarks too) moves LastSyncResourceVersion on. A watch that
//      ends cleanly (or whose connection breaks) is re-opened from the last
//      resourceVersion at once; one that closed within a second without an
//      event counts as an error. A watch that cannot be opened because the
//      connection was refused, or because the server answered 429, is
//      re-opened after a backoff, without a relist.
//   3. Any other end (a 410 ERROR event, another ERROR, a watch that cannot
//      be opened, a failed list) goes back to 1 after a backoff: 800 ms
//      doubling to 30 s, with jitter, reset after 2 minutes without one
//      (backoff.h).
// With use_watch_list, step 1 is a streaming list instead (KEP-3157): a
// watch with sendInitialEvents=true whose initial events are collected
// until the bookmark annotated k8s.io/initial-events-end, then
// store->Replace'd, and whose stream carries on as step 2's watch. A server
// that refuses it gets a plain list instead, every time.
// Relist() ends the current watch and lists again at once (no backoff;
// after relist_batch_window if set),
// for a collection whose options changed (a new shardSelector).
// Every `resync_period` (0: never) of each list-and-watch, and when
// should_resync (if set) agrees, store->Resync() is called.
//
// Objects of another kind than expected_kind are dropped (logged and
// counted); nothing the server sends makes the reflector crash or stop.
#ifndef KCR_RUNTIME_CACHE_REFLECTOR_H_
#define KCR_RUNTIME_CACHE_REFLECTOR_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "base/clock.h"
#include "base/context.h"
#include "base/mutex.h"
#include "runtime/cache/backoff.h"
#include "runtime/cache/list_watch.h"
#include "runtime/cache/metrics.h"
#include "runtime/cache/store.h"
#include "runtime/client/options.h"
#include "runtime/client/watch.h"

namespace kcr::cache {

struct ReflectorOptions {
  // For logs and the `name` label of the metrics; metrics are recorded
  // only when it is non-empty.
  std::string name;
  // Objects whose apiVersion / kind differ are dropped; "" accepts any.
  std::string expected_api_version;
  std::string expected_kind;
  // Not owned; null: the real clock.
  const Clock* clock = nullptr;
  // client-go's WatchListPageSize: when set, every list is paged with it.
  // 0: pages of 500 for a list at "0" or "", and for any list once a "0"
  // list came back paged; no limit at a specific resourceVersion.
  int64_t page_size = 0;
  // How often to call store->Resync() while watching; 0 for never.
  absl::Duration resync_period = absl::ZeroDuration();
  // Asked before each periodic resync; null: always resync.
  std::function<bool()> should_resync;
  // A streaming list (watch with sendInitialEvents) instead of a list.
  bool use_watch_list = false;
  BackoffOptions backoff;
  // Each watch asks the server to end it after a random time in [min, max).
  absl::Duration min_watch_timeout = absl::Minutes(5);
  absl::Duration max_watch_timeout = absl::Minutes(10);
  // A list asked for by Relist() waits until no other Relist() came for
  // this long (at most ten times this long in all), so that a burst of
  // requests, e.g. the shard changes of one round, costs one list. 0: the
  // list starts at once.
  absl::Duration relist_batch_window = absl::ZeroDuration();
  // Null: the global provider (runtime/cache/metrics.h).
  MetricsProvider* metrics = nullptr;
  // The jitter of the backoff and of the watch timeout; null: seeded from
  // std::random_device. SeededRandom(n) makes them reproducible.
  RandomFunc random;
};

class Reflector {
 public:
  // `lister_watcher` and `store` are not owned and must outlive the
  // Reflector.
  Reflector(ListerWatcher* lister_watcher, Store* store,
            ReflectorOptions options = {});
  ~Reflector();

  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  // Lists and watches, as the file comment says, until `ctx` is done; then
  // returns OK promptly (a list or watch in flight is abandoned). Errors
  // along the way are logged and retried, never returned.
  // kFailedPrecondition if Run is already running.
  absl::Status Run(const Context& ctx);

  // One list (or streaming list) and the watches after it, until a watch
  // ends in a way that calls for a relist (OK) or something fails (the
  // error). Run calls it in a loop with a backoff in between.
  absl::Status ListAndWatch(const Context& ctx);

  // The resourceVersion of the last list or watch event applied; "" before
  // the first list. Thread-safe.
  std::string LastSyncResourceVersion() const;

  // Ends the watch (or, during a list, the watch after it) and lists
  // again at once; calls made before that list begins share it.
  // Thread-safe; does not wait.
  void Relist() ABSL_LOCKS_EXCLUDED(mu_);
  // True once a list that began after the last Relist() (or the first
  // list, without one) has reached the store. Thread-safe.
  bool Relisted() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Where HandleWatch sends ADDED / MODIFIED / DELETED objects.
  using EventSink = std::function<absl::Status(api::EventType, api::ObjectPtr)>;

  absl::Status List(const Context& ctx);
  absl::Status PagedList(const Context& ctx, client::ListOptions options,
                         int64_t page_size, std::vector<api::ObjectPtr>* items,
                         std::string* resource_version, bool* paginated);
  absl::StatusOr<std::unique_ptr<client::WatchStream>> WatchList(
      const Context& ctx);
  absl::Status Watch(const Context& ctx,
                     std::unique_ptr<client::WatchStream> stream);
  // Reads events until the stream ends (OK for a clean end), an ERROR
  // event or a failure (the error), `ctx` ends (ctx.Err()), or, with
  // `stop_at_initial_events_end`, the end-of-initial-events bookmark
  // (OK, *initial_events_end set).
  absl::Status HandleWatch(const Context& ctx, absl::Time start,
                           client::WatchStream* stream, const EventSink& sink,
                           const std::function<void(std::string)>& set_rv,
                           bool stop_at_initial_events_end,
                           bool* initial_events_end);
  absl::StatusOr<std::unique_ptr<client::WatchStream>> OpenWatch(
      const Context& ctx, const client::ListOptions& options);
  // Resyncs the store every resync_period until `ctx` ends; a Resync error
  // is stored in resync_error_ and ends the watch through `cancel_watch`.
  void ResyncLoop(const Context& ctx, const CancelFunc& cancel_watch);

  std::string RelistResourceVersion() const;
  // Sleeps until relist_batch_window passed without a Relist() (bounded).
  absl::Status WaitForRelistBatch(const Context& ctx) ABSL_LOCKS_EXCLUDED(mu_);
  std::string RewatchResourceVersion() const;
  void SetLastSyncResourceVersion(std::string rv);
  int64_t RandomWatchTimeoutSeconds();

  ListerWatcher* const lister_watcher_;
  Store* const store_;
  const ReflectorOptions options_;
  const Clock* const clock_;
  RandomFunc random_;
  BackoffManager backoff_;

  std::array<std::unique_ptr<CounterMetric>, 5> events_metric_;
  std::unique_ptr<CounterMetric> relists_metric_;
  std::unique_ptr<CounterMetric> watch_restarts_metric_;
  std::unique_ptr<GaugeMetric> last_rv_metric_;
  std::unique_ptr<CounterMetric> kind_mismatch_metric_;
  std::unique_ptr<CounterMetric> no_key_metric_;

  // State of the thread in Run / ListAndWatch (one at a time).
  bool last_sync_rv_unavailable_ = false;
  bool paginated_result_ = false;
  bool listed_ = false;
  bool watched_ = false;

  mutable Mutex mu_;
  std::string last_sync_rv_ ABSL_GUARDED_BY(mu_);
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status resync_error_ ABSL_GUARDED_BY(mu_);
  // Relist(): each call counts one up; a list records the count it began
  // at once it reached the store.
  int64_t relists_requested_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t relisted_at_ ABSL_GUARDED_BY(mu_) = -1;
  // When Relist() was last called.
  absl::Time relist_requested_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // Ends the current watch; null outside one.
  CancelFunc cancel_watch_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_REFLECTOR_H_
