#include "runtime/controller/controller.h"

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/string_view.h"
#include "glog/logging.h"
#include "runtime/workqueue/default_rate_limiters.h"

namespace kcr::controller {
namespace {

// Adapts an informer's notifications into events for one watch: filters
// them through the watch's predicates and hands the rest to its handler.
class WatchHandler final : public cache::ResourceEventHandler {
 public:
  WatchHandler(std::shared_ptr<RequestQueue> queue,
               std::shared_ptr<EventHandler> handler,
               std::vector<Predicate> predicates)
      : queue_(std::move(queue)),
        handler_(std::move(handler)),
        predicates_(std::move(predicates)) {}

  void OnAdd(const api::ObjectPtr& object, bool is_in_initial_list) override {
    const CreateEvent e{object, is_in_initial_list};
    for (const Predicate& p : predicates_) {
      if (!p.Create(e)) return;
    }
    handler_->Create(e, *queue_);
  }
  void OnUpdate(const api::ObjectPtr& old_object,
                const api::ObjectPtr& new_object) override {
    const UpdateEvent e{old_object, new_object};
    for (const Predicate& p : predicates_) {
      if (!p.Update(e)) return;
    }
    handler_->Update(e, *queue_);
  }
  void OnDelete(const api::ObjectPtr& object,
                bool final_state_unknown) override {
    const DeleteEvent e{object, final_state_unknown};
    for (const Predicate& p : predicates_) {
      if (!p.Delete(e)) return;
    }
    handler_->Delete(e, *queue_);
  }

 private:
  const std::shared_ptr<RequestQueue> queue_;
  const std::shared_ptr<EventHandler> handler_;
  const std::vector<Predicate> predicates_;
};

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

}  // namespace

absl::Status ValidateControllerName(std::string_view name) {
  if (name.empty()) {
    return absl::InvalidArgumentError("controller name must not be empty");
  }
  if (name.size() > 253) {
    return absl::InvalidArgumentError(
        absl::StrCat("controller name \"", ToAbsl(name),
                     "\" is longer than 253 characters"));
  }
  for (char c : name) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') {
      return absl::InvalidArgumentError(absl::StrCat(
          "controller name \"", ToAbsl(name),
          "\" must consist of lower-case letters, digits, '-', '_' or '.'"));
    }
  }
  if (!IsAlnum(name.front()) || !IsAlnum(name.back())) {
    return absl::InvalidArgumentError(
        absl::StrCat("controller name \"", ToAbsl(name),
                     "\" must start and end with a letter or digit"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Controller>> Controller::New(
    ControllerOptions options, std::shared_ptr<Reconciler> reconciler) {
  if (absl::Status s = ValidateControllerName(options.name); !s.ok()) return s;
  if (options.max_concurrent_reconciles < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("controller ", options.name,
                     ": max_concurrent_reconciles must be at least 1, not ",
                     options.max_concurrent_reconciles));
  }
  if (reconciler == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("controller ", options.name, ": no reconciler"));
  }
  return std::unique_ptr<Controller>(
      new Controller(std::move(options), std::move(reconciler)));
}

Controller::Controller(ControllerOptions options,
                       std::shared_ptr<Reconciler> reconciler)
    : name_(options.name),
      workers_(options.max_concurrent_reconciles),
      slow_reconcile_threshold_(options.slow_reconcile_threshold),
      cache_sync_timeout_(options.cache_sync_timeout),
      shutdown_timeout_(options.shutdown_timeout),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      need_leader_election_(options.need_leader_election),
      reconciler_(std::move(reconciler)),
      metrics_(options.metrics != nullptr
                   ? options.metrics->NewControllerMetrics(options.name)
                   : nullptr),
      shard_filter_(std::move(options.shard_filter)),
      on_reconciled_(std::move(options.on_reconciled)) {
  std::unique_ptr<workqueue::RateLimiter<Request>> limiter =
      options.rate_limiter != nullptr
          ? std::move(options.rate_limiter)
          : workqueue::DefaultControllerRateLimiter<Request>(clock_);
  workqueue::QueueOptions queue_options{options.name, options.workqueue_metrics,
                                        clock_};
  if (options.use_priority_queue) {
    priority_queue_ = std::make_shared<workqueue::PriorityQueue<Request>>(
        std::move(limiter), std::move(queue_options));
    queue_ = priority_queue_;
  } else {
    auto fifo = std::make_shared<workqueue::RateLimitingQueue<Request>>(
        std::move(limiter), std::move(queue_options));
    fifo_queue_ = fifo.get();
    queue_ = std::move(fifo);
  }
  if (shard_filter_ != nullptr) shard_filter_->SetQueue(queue_);
  std::tie(reconcile_ctx_, cancel_reconciles_) =
      WithCancel(Context::Background());
  if (metrics_ != nullptr) {
    metrics_->SetMaxConcurrentReconciles(workers_);
    metrics_->AddActiveWorkers(0);
  }
}

Controller::~Controller() {
  stopping_.store(true);
  queue_->ShutDown();
  cancel_reconciles_();
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

absl::Status Controller::Watch(cache::SharedIndexInformer* informer,
                               std::shared_ptr<EventHandler> handler,
                               std::vector<Predicate> predicates) {
  if (informer == nullptr || handler == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "controller ", name_, ": Watch needs an informer and a handler"));
  }
  auto registration = informer->AddEventHandler(std::make_shared<WatchHandler>(
      queue_, std::move(handler), std::move(predicates)));
  if (!registration.ok()) {
    return absl::Status(
        registration.status().code(),
        absl::StrCat("controller ", name_, ": watch ", informer->name(), ": ",
                     registration.status().message()));
  }
  MutexLock lock(&mu_);
  registrations_.push_back(*std::move(registration));
  return absl::OkStatus();
}

absl::Status Controller::WaitForWatchesSynced(const Context& ctx) {
  std::vector<std::shared_ptr<cache::ResourceEventHandlerRegistration>> regs;
  {
    MutexLock lock(&mu_);
    regs = registrations_;
  }
  auto [sync_ctx, cancel] = WithTimeout(ctx, cache_sync_timeout_, clock_);
  // A registration has synced once its handler has been given the whole
  // initial list; it offers no wait, so look again every few milliseconds
  // (real time: this only bounds how soon the workers start).
  absl::Status status;
  for (const auto& reg : regs) {
    while (!reg->HasSynced() && !sync_ctx.done()) {
      absl::SleepFor(absl::Milliseconds(5));
    }
  }
  status = sync_ctx.Err();
  cancel();
  return status;
}

absl::Status Controller::Start(const Context& ctx) {
  {
    MutexLock lock(&mu_);
    if (started_) {
      return absl::FailedPreconditionError(
          absl::StrCat("controller ", name_, " was already started"));
    }
    started_ = true;
  }
  LOG(INFO) << "Starting controller controller=" << name_
            << " workers=" << workers_;
  if (absl::Status s = WaitForWatchesSynced(ctx); !s.ok()) {
    stopping_.store(true);
    queue_->ShutDown();
    if (ctx.done()) return absl::OkStatus();
    return absl::DeadlineExceededError(absl::StrCat(
        "controller ", name_, ": timed out waiting for caches to sync after ",
        absl::FormatDuration(cache_sync_timeout_)));
  }
  {
    MutexLock lock(&mu_);
    for (int i = 0; i < workers_; ++i) {
      threads_.emplace_back([this] { Work(); });
    }
  }
  WaitUntilDone(ctx);
  LOG(INFO) << "Stopping controller, waiting for workers controller=" << name_;
  return Drain();
}

absl::Status Controller::Drain() {
  stopping_.store(true);
  std::thread drainer([this] {
    queue_->ShutDownWithDrain();
    MutexLock lock(&drain_mu_);
    drained_ = true;
    drain_cv_.SignalAll();
  });
  absl::Status status;
  {
    const absl::Time deadline = clock_->Now() + shutdown_timeout_;
    MutexLock lock(&drain_mu_);
    while (!drained_ && clock_->Now() < deadline) {
      clock_->WaitUntil(&drain_mu_, &drain_cv_, deadline);
    }
    if (!drained_) {
      const int running = in_flight_.load();
      status = absl::DeadlineExceededError(absl::StrCat(
          "controller ", name_, ": ", running,
          " reconcile(s) still running after the shutdown timeout of ",
          absl::FormatDuration(shutdown_timeout_),
          "; cancelled their contexts and waited for them to return"));
      LOG(ERROR) << status.message();
    }
  }
  if (!status.ok()) {
    cancel_reconciles_();
    // Releases the drain; the workers leave once their reconciles return.
    queue_->ShutDown();
  }
  drainer.join();
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
  LOG(INFO) << "All workers finished controller=" << name_;
  return status;
}

size_t Controller::WaitingLen() const {
  return priority_queue_ != nullptr ? priority_queue_->WaitingLen()
                                    : fifo_queue_->WaitingLen();
}

void Controller::Work() {
  for (;;) {
    std::optional<Request> request;
    int priority = workqueue::kDefaultPriority;
    if (priority_queue_ != nullptr) {
      auto got = priority_queue_->GetWithPriority();
      if (!got.has_value()) return;
      request = std::move(got->item);
      priority = got->priority;
    } else {
      request = queue_->Get();
      if (!request.has_value()) return;
    }
    // After shutdown the queue still hands out what was waiting; a stopping
    // controller takes no new work.
    if (stopping_.load()) {
      // Taken after the stop: not reconciled.
    } else if (shard_filter_ != nullptr && !shard_filter_->Begin(*request)) {
      // Its shard is not held (any more): another replica reconciles it.
      queue_->Forget(*request);
    } else {
      ReconcileHandler(*request, priority);
      if (shard_filter_ != nullptr) shard_filter_->End(*request);
    }
    queue_->Done(*request);
  }
}

void Controller::Requeue(const Request& request, int priority,
                         absl::Duration after, bool rate_limited) {
  if (priority_queue_ != nullptr) {
    workqueue::AddOpts opts;
    opts.priority = priority;
    opts.after = after;
    opts.rate_limited = rate_limited;
    priority_queue_->AddWithOpts(opts, request);
  } else if (rate_limited) {
    queue_->AddRateLimited(request);
  } else {
    queue_->AddAfter(request, after);
  }
}

void Controller::ReconcileHandler(const Request& request, int priority) {
  ReconcileContext rctx(reconcile_ctx_, name_, request, NewReconcileId());
  in_flight_.fetch_add(1);
  if (metrics_ != nullptr) metrics_->AddActiveWorkers(1);
  const absl::Time start = clock_->Now();
  absl::StatusOr<Result> result;
  bool panicked = false;
  try {
    result = reconciler_->Reconcile(request, rctx);
  } catch (const std::exception& e) {
    panicked = true;
    result =
        absl::InternalError(absl::StrCat("panic: ", e.what(), " [recovered]"));
  } catch (...) {
    panicked = true;
    result = absl::InternalError("panic: unknown exception [recovered]");
  }
  const absl::Time end = clock_->Now();
  const absl::Duration took = end - start;
  if (on_reconciled_) on_reconciled_(request, start, end);
  in_flight_.fetch_sub(1);
  if (metrics_ != nullptr) {
    metrics_->AddActiveWorkers(-1);
    metrics_->ObserveReconcileTime(absl::ToDoubleSeconds(took));
  }
  if (took > slow_reconcile_threshold_) {
    LOG(WARNING) << rctx.log_prefix()
                 << " slow reconcile took=" << absl::FormatDuration(took)
                 << " threshold="
                 << absl::FormatDuration(slow_reconcile_threshold_);
  }

  ReconcileOutcome outcome;
  if (!result.ok()) {
    Requeue(request, priority, absl::ZeroDuration(), /*rate_limited=*/true);
    outcome = ReconcileOutcome::kError;
    if (metrics_ != nullptr) {
      if (panicked) metrics_->CountPanic();
      metrics_->CountError();
    }
    LOG(ERROR) << rctx.log_prefix() << " Reconciler error: " << result.status();
  } else if (result->requeue_after > absl::ZeroDuration()) {
    queue_->Forget(request);
    Requeue(request, priority, result->requeue_after, /*rate_limited=*/false);
    outcome = ReconcileOutcome::kRequeueAfter;
  } else if (result->requeue) {
    Requeue(request, priority, absl::ZeroDuration(), /*rate_limited=*/true);
    outcome = ReconcileOutcome::kRequeue;
  } else {
    queue_->Forget(request);
    outcome = ReconcileOutcome::kSuccess;
  }
  if (metrics_ != nullptr) metrics_->CountReconcile(outcome);
  VLOG(4) << rctx.log_prefix()
          << " reconciled result=" << ReconcileOutcomeName(outcome);
}

}  // namespace kcr::controller
