// Controller: a queue of Requests, the watches that fill it, and workers
// that drain it through a Reconciler (controller-runtime's
// internal/controller).
//
//   auto c = Controller::New({.name = "configmaps"}, reconciler);
//   (*c)->Watch(informer, EnqueueRequestForObject());
//   (*c)->Start(ctx);  // blocks until ctx ends and the workers drained
//
// What a worker does with a reconcile's outcome:
//   error, or an exception    AddRateLimited (per-key exponential backoff)
//   Result::Requeue()         AddRateLimited
//   Result::RequeueAfter(d)   Forget, then AddAfter(d)
//   Result::Done()            Forget
// The queue is a priority queue (workqueue/priority_queue.h) unless
// ControllerOptions::use_priority_queue is off: its handlers enqueue an
// informer's initial list and resyncs at kLowPriority (handler.h), and a
// retry keeps the priority its Request was taken at.
// An exception escaping the reconciler (std::exception or anything else) is
// caught, logged, counted in the panics metric and treated as an error; the
// worker carries on. The queue never hands one key to two workers at once.
//
// Usually built by ControllerBuilder and run by the Manager. Thread-safe.
#ifndef KCR_RUNTIME_CONTROLLER_CONTROLLER_H_
#define KCR_RUNTIME_CONTROLLER_CONTROLLER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/context.h"
#include "base/mutex.h"
#include "runtime/cache/shared_informer.h"
#include "runtime/controller/handler.h"
#include "runtime/controller/metrics.h"
#include "runtime/controller/predicate.h"
#include "runtime/controller/reconciler.h"
#include "runtime/controller/runnable.h"
#include "runtime/controller/shard_filter.h"
#include "runtime/workqueue/metrics.h"
#include "runtime/workqueue/priority_queue.h"
#include "runtime/workqueue/rate_limiter.h"
#include "runtime/workqueue/rate_limiting_queue.h"

namespace kcr::controller {

struct ControllerOptions {
  // Names the controller in logs, metrics (the `controller` label, and the
  // work queue's `name`) and errors. Required: lower-case letters, digits,
  // '-', '_' and '.', starting and ending with a letter or digit, at most
  // 253 characters.
  std::string name;
  // Workers, each reconciling one Request at a time.
  int max_concurrent_reconciles = 1;
  // Paces retries. Null: workqueue::DefaultControllerRateLimiter on `clock`
  // (per key 5 ms doubling up to 1000 s, overall 10 qps burst 100).
  std::unique_ptr<workqueue::RateLimiter<Request>> rate_limiter;
  // A reconcile that takes longer is logged as a warning.
  absl::Duration slow_reconcile_threshold = absl::Seconds(10);
  // How long Start waits for its watches' informers to sync before failing
  // (controller-runtime's CacheSyncTimeout).
  absl::Duration cache_sync_timeout = absl::Minutes(2);
  // After Start's context ends: how long in-flight reconciles may take to
  // finish before their contexts are cancelled and Start reports it.
  absl::Duration shutdown_timeout = absl::Seconds(30);
  // Not owned. Null: the real clock.
  const Clock* clock = nullptr;
  // Not owned; must outlive the controller. Null: no controller metrics.
  MetricsProvider* metrics = nullptr;
  // For the queue's metrics (named after the controller). Not owned. Null:
  // the work queue's global provider, if set.
  workqueue::MetricsProvider* workqueue_metrics = nullptr;
  // Whether the Manager runs it only while leader.
  bool need_leader_election = true;
  // The queue: a priority queue (controller-runtime v0.23's default), where
  // fresh changes go ahead of an initial list's or a resync's backlog; off,
  // the FIFO workqueue::RateLimitingQueue. Same metrics either way.
  bool use_priority_queue = true;
  // A sharded controller's filter (shard_filter.h): a Request is reconciled
  // only when the filter's Begin lets it (else it is Forgotten and
  // dropped), and the filter enqueues into this controller's queue when a
  // shard is acquired. Null: unsharded. The builder's Sharded sets it.
  std::shared_ptr<ShardFilter> shard_filter;
  // Told of every reconcile once it returned: its Request and when it
  // started and ended (on `clock`), on the worker's thread; e.g. an audit
  // that no two replicas reconcile one object at once. Keep it quick.
  std::function<void(const Request&, absl::Time start, absl::Time end)>
      on_reconciled;
};

// InvalidArgument naming what is wrong with a controller name, or OK.
absl::Status ValidateControllerName(std::string_view name);

class Controller final : public Runnable {
 public:
  // InvalidArgument for a bad name, a non-positive worker count or a null
  // reconciler.
  static absl::StatusOr<std::unique_ptr<Controller>> New(
      ControllerOptions options, std::shared_ptr<Reconciler> reconciler);

  // Start must have returned (or never been called). Handlers registered
  // on informers stay registered but add nothing more: the queue they hold
  // is shut down.
  ~Controller() override;

  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Delivers `informer`'s events that pass every predicate to `handler`,
  // which adds Requests to this controller's queue. Before or after Start;
  // Start waits for the informers of watches added before it to sync.
  absl::Status Watch(cache::SharedIndexInformer* informer,
                     std::shared_ptr<EventHandler> handler,
                     std::vector<Predicate> predicates = {});

  // Waits for the watches' caches to sync, runs the workers until `ctx`
  // ends, then shuts the queue down: workers take no new Request, and the
  // reconciles in flight get `shutdown_timeout` to finish. Returns OK after
  // a clean stop (also when `ctx` ends before the caches synced);
  // DeadlineExceeded when the caches did not sync in time or reconciles
  // were still running at the shutdown deadline (their contexts are then
  // cancelled and Start returns once they have returned);
  // FailedPrecondition on a second call.
  absl::Status Start(const Context& ctx) override;

  bool NeedLeaderElection() const override { return need_leader_election_; }
  std::string name() const override { return name_; }

  // The controller's queue, e.g. to enqueue a Request from elsewhere (a
  // GenericEvent source) or, in tests, to see what waits in it. A
  // PriorityRequestQueue unless use_priority_queue was off.
  RequestQueue& queue() { return *queue_; }
  // The queue as a priority queue, or null when use_priority_queue was off.
  PriorityRequestQueue* priority_queue() { return priority_queue_.get(); }
  // The sharded controller's filter; null when unsharded.
  ShardFilter* shard_filter() const { return shard_filter_.get(); }
  // Requests waiting in the queue for their delay (backoff or
  // requeue_after) to pass.
  size_t WaitingLen() const;

 private:
  Controller(ControllerOptions options, std::shared_ptr<Reconciler> reconciler);

  void Work();
  // `priority`: the one `request` was taken at (0 on a FIFO queue).
  void ReconcileHandler(const Request& request, int priority);
  // Adds `request` again after `after`, or the rate limiter's delay, at
  // `priority` on a priority queue.
  void Requeue(const Request& request, int priority, absl::Duration after,
               bool rate_limited);
  absl::Status WaitForWatchesSynced(const Context& ctx);
  // Shuts the queue down and waits for the workers; see Start.
  absl::Status Drain() ABSL_LOCKS_EXCLUDED(drain_mu_);

  const std::string name_;
  const int workers_;
  const absl::Duration slow_reconcile_threshold_;
  const absl::Duration cache_sync_timeout_;
  const absl::Duration shutdown_timeout_;
  const Clock* const clock_;
  const bool need_leader_election_;
  const std::shared_ptr<Reconciler> reconciler_;
  const std::unique_ptr<ControllerMetrics> metrics_;  // may be null
  const std::shared_ptr<ShardFilter> shard_filter_;   // may be null
  const std::function<void(const Request&, absl::Time, absl::Time)>
      on_reconciled_;
  // Shared with the handlers registered on informers, which may outlive
  // the controller. Set once, in the constructor.
  std::shared_ptr<RequestQueue> queue_;
  // queue_ by its type: one of the two is null.
  std::shared_ptr<workqueue::PriorityQueue<Request>> priority_queue_;
  workqueue::RateLimitingQueue<Request>* fifo_queue_ = nullptr;

  // Every reconcile runs with this; cancelled when the shutdown deadline
  // passes.
  Context reconcile_ctx_;
  CancelFunc cancel_reconciles_;

  // Set before the queue shuts down: Requests taken afterwards are dropped.
  std::atomic<bool> stopping_{false};
  // Workers inside a reconcile.
  std::atomic<int> in_flight_{0};

  Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::shared_ptr<cache::ResourceEventHandlerRegistration>>
      registrations_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);

  Mutex drain_mu_;
  CondVar drain_cv_;
  bool drained_ ABSL_GUARDED_BY(drain_mu_) = false;
};

}  // namespace kcr::controller

#endif  // KCR_RUNTIME_CONTROLLER_CONTROLLER_H_
