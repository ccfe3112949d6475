#include "runtime/cache/shared_informer.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "base/string_view.h"
#include "glog/logging.h"
#include "runtime/cache/real_fifo.h"

namespace kcr::cache {
namespace {

// How often waiters re-check when no batch wakes them.
constexpr absl::Duration kWaitPoll = absl::Milliseconds(10);

// The resourceVersion as a number, or -1 when it is not one.
int64_t NumericVersion(std::string_view rv) {
  int64_t v = 0;
  return absl::SimpleAtoi(ToAbsl(rv), &v) ? v : -1;
}

}  // namespace

bool ResourceEventHandlerRegistration::HasSynced() const {
  return informer_->HasSynced() && listener_->InitialListDelivered();
}

SharedIndexInformer::SharedIndexInformer(
    std::unique_ptr<ListerWatcher> list_watch, SharedInformerOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      metrics_(options_.metrics != nullptr ? options_.metrics
                                           : GlobalMetricsProvider()),
      list_watch_(std::move(list_watch)),
      store_(std::make_unique<ThreadSafeStore>(
          Indexers{{std::string(kNamespaceIndex), MetaNamespaceIndexFunc()}})),
      transform_(api::StripManagedFields()),
      resync_check_period_(options_.resync_period) {
  if (!options_.indexers.empty()) {
    absl::Status s = store_->AddIndexers(options_.indexers);
    if (!s.ok()) LOG(ERROR) << "informer=" << options_.name << " " << s;
  }
}

SharedIndexInformer::~SharedIndexInformer() { StopHandlers(); }

void SharedIndexInformer::StopHandlers() {
  std::vector<std::shared_ptr<ProcessorListener>> listeners;
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    listeners.swap(listeners_);
    for (auto& l : retired_) listeners.push_back(std::move(l));
    retired_.clear();
  }
  for (auto& l : listeners) l->Stop();
  // Destroying the listeners joins their threads, outside mu_.
}

absl::StatusOr<std::shared_ptr<ResourceEventHandlerRegistration>>
SharedIndexInformer::AddEventHandler(
    std::shared_ptr<ResourceEventHandler> handler,
    absl::Duration resync_period) {
  if (handler == nullptr) {
    return absl::InvalidArgumentError("event handler is null");
  }
  MutexLock lock(&mu_);
  if (stopped_) {
    return absl::FailedPreconditionError("informer " + options_.name +
                                         " has stopped; handler not added");
  }
  if (resync_period <= absl::ZeroDuration()) {
    resync_period = options_.resync_period;
  }
  if (resync_period > absl::ZeroDuration()) {
    resync_period = std::max(resync_period, kMinimumResyncPeriod);
    if (started_) {
      if (resync_period < resync_check_period_) {
        LOG(WARNING) << "informer=" << options_.name << " resync period "
                     << resync_period << " is shorter than the running "
                     << "informer's check period; using "
                     << resync_check_period_;
        resync_period = resync_check_period_;
      }
    } else if (resync_check_period_ <= absl::ZeroDuration() ||
               resync_period < resync_check_period_) {
      resync_check_period_ = resync_period;
    }
  }
  ProcessorListenerOptions listener_options;
  listener_options.name =
      options_.name + "/handler-" + std::to_string(++handlers_added_);
  listener_options.max_in_order = options_.handler_max_in_order;
  if (metrics_ != nullptr) {
    std::shared_ptr<GaugeMetric> depth = metrics_->NewHandlerQueueDepthMetric(
        options_.name, listener_options.name);
    listener_options.on_depth = [depth](size_t n) {
      depth->Set(static_cast<double>(n));
    };
  }
  auto listener =
      std::make_shared<ProcessorListener>(std::move(handler), listener_options);
  listener->set_resync_period(resync_period);
  listener->SetNextResync(clock_->Now());
  if (started_) {
    // Under mu_ no change is being handed out, so the handler gets every
    // object once: here, or later as a change.
    for (api::ObjectPtr& object : store_->List()) {
      listener->Add(HandlerEvent::Add(std::move(object), true));
    }
    listener->Start();
  }
  listeners_.push_back(listener);
  return std::shared_ptr<ResourceEventHandlerRegistration>(
      new ResourceEventHandlerRegistration(this, std::move(listener)));
}

absl::Status SharedIndexInformer::RemoveEventHandler(
    const std::shared_ptr<ResourceEventHandlerRegistration>& registration) {
  if (registration == nullptr || registration->informer_ != this) {
    return absl::InvalidArgumentError(
        "registration is not a handler of informer " + options_.name);
  }
  MutexLock lock(&mu_);
  auto it =
      std::find(listeners_.begin(), listeners_.end(), registration->listener_);
  if (it == listeners_.end()) return absl::OkStatus();  // already removed
  (*it)->Stop();
  retired_.push_back(std::move(*it));
  listeners_.erase(it);
  syncing_.clear();
  return absl::OkStatus();
}

absl::Status SharedIndexInformer::SetTransform(api::TransformFunc transform) {
  MutexLock lock(&mu_);
  if (started_) {
    return absl::FailedPreconditionError(
        "informer " + options_.name +
        " has already started; set its transform before Run");
  }
  transform_ = std::move(transform);
  return absl::OkStatus();
}

absl::Status SharedIndexInformer::AddIndexers(Indexers indexers) {
  return store_->AddIndexers(std::move(indexers));
}

void SharedIndexInformer::Run(const Context& ctx) {
  auto [run_ctx, cancel] = WithCancel(ctx);
  Queue* fifo = nullptr;
  Reflector* reflector = nullptr;
  {
    MutexLock lock(&mu_);
    if (started_ || stopped_) return;
    started_ = true;
    RealFifoOptions fifo_options;
    fifo_options.known_objects = store_.get();
    fifo_options.transform = transform_;
    fifo_options.name = options_.name;
    fifo_options.metrics = metrics_;
    fifo_ = std::make_unique<RealFifo>(std::move(fifo_options));
    ReflectorOptions reflector_options = options_.reflector;
    reflector_options.name = options_.name;
    reflector_options.clock = clock_;
    reflector_options.metrics = metrics_;
    reflector_options.resync_period = resync_check_period_;
    // Its only relists are shard selector changes, which come in bursts.
    if (reflector_options.relist_batch_window == absl::ZeroDuration()) {
      reflector_options.relist_batch_window = kShardSelectorBatchWindow;
    }
    reflector_options.should_resync = [this] { return ShouldResync(); };
    reflector_ = std::make_unique<Reflector>(list_watch_.get(), fifo_.get(),
                                             std::move(reflector_options));
    for (auto& listener : listeners_) listener->Start();
    fifo = fifo_.get();
    reflector = reflector_.get();
    running_fifo_.store(fifo, std::memory_order_release);
  }
  VLOG(2) << "informer starting name=" << options_.name;
  std::thread reflector_thread([&, ctx = run_ctx] {
    absl::Status s = reflector->Run(ctx);
    if (!s.ok() && !ctx.done()) {
      LOG(ERROR) << "reflector stopped name=" << options_.name << " " << s;
    }
  });
  const auto process = [this](absl::Span<const Delta> batch, bool initial) {
    return HandleDeltas(batch, initial);
  };
  while (true) {
    absl::Status s = fifo->Pop(run_ctx, options_.batch_size, process);
    wait_cv_.SignalAll();
    if (!s.ok()) {
      if (run_ctx.done() || absl::IsCancelled(s)) break;
      LOG(ERROR) << "informer name=" << options_.name << " " << s;
    }
  }
  cancel();
  fifo->Close();
  reflector_thread.join();
  StopHandlers();
  {
    MutexLock lock(&wait_mu_);
    done_ = true;
  }
  wait_cv_.SignalAll();
  VLOG(2) << "informer stopped name=" << options_.name;
}

absl::Status SharedIndexInformer::HandleDeltas(absl::Span<const Delta> batch,
                                               bool initial) {
  int64_t max_rv = 0;
  {
    MutexLock lock(&mu_);
    // The notifications for every handler, handed over a run at a time:
    // each handler's thread wakes once per batch, not once per delta.
    std::vector<HandlerEvent> run;
    run.reserve(batch.size());
    for (const Delta& delta : batch) {
      max_rv =
          std::max(max_rv, NumericVersion(delta.object->resource_version()));
      if (delta.type == DeltaType::kDeleted) {
        store_->Remove(delta.object->Key());
        run.push_back(
            HandlerEvent::Delete(delta.object, delta.final_state_unknown));
        continue;
      }
      api::ObjectPtr old = store_->Upsert(delta.object);
      if (old == nullptr) {
        run.push_back(HandlerEvent::Add(delta.object, initial));
        continue;
      }
      // A resync, or a relist that found the object unchanged, goes only
      // to the handlers due for a resync (client-go's processDeltas).
      const bool sync =
          delta.type == DeltaType::kSync ||
          (delta.type == DeltaType::kReplaced &&
           old->resource_version() == delta.object->resource_version());
      HandlerEvent update = HandlerEvent::Update(std::move(old), delta.object);
      if (!sync) {
        run.push_back(std::move(update));
        continue;
      }
      // Everything before it first, to keep each handler's order.
      DistributeLocked(run);
      run.clear();
      for (ProcessorListener* listener : syncing_) listener->Add(update);
    }
    DistributeLocked(run);
  }
  {
    MutexLock lock(&wait_mu_);
    applied_rv_ = std::max(applied_rv_, max_rv);
  }
  wait_cv_.SignalAll();
  return absl::OkStatus();
}

void SharedIndexInformer::DistributeLocked(
    absl::Span<const HandlerEvent> events) {
  if (events.empty()) return;
  for (const auto& listener : listeners_) listener->Add(events);
}

bool SharedIndexInformer::ShouldResync() {
  MutexLock lock(&mu_);
  syncing_.clear();
  const absl::Time now = clock_->Now();
  for (const auto& listener : listeners_) {
    if (listener->ShouldResync(now)) syncing_.push_back(listener.get());
  }
  return !syncing_.empty();
}

bool SharedIndexInformer::HasSynced() const {
  const Queue* fifo = running_fifo_.load(std::memory_order_acquire);
  return fifo != nullptr && fifo->HasSynced();
}

absl::Status SharedIndexInformer::WaitForSync(const Context& ctx) const {
  MutexLock lock(&wait_mu_);
  while (!HasSynced()) {
    if (done_) {
      return absl::CancelledError("informer " + options_.name +
                                  " stopped before it synced");
    }
    if (ctx.done()) return ctx.Err();
    wait_cv_.WaitWithTimeout(&wait_mu_, kWaitPoll);
  }
  return absl::OkStatus();
}

absl::Status SharedIndexInformer::SetShardSelector(std::string selector) {
  absl::StatusOr<bool> changed = list_watch_->SetShardSelector(selector);
  if (!changed.ok()) {
    return absl::Status(changed.status().code(),
                        "informer " + options_.name + ": " +
                            std::string(changed.status().message()));
  }
  if (!*changed) return absl::OkStatus();
  VLOG(2) << "informer shard selector changed name=" << options_.name
          << " selector=" << selector;
  MutexLock lock(&mu_);
  if (reflector_ != nullptr) reflector_->Relist();
  return absl::OkStatus();
}

bool SharedIndexInformer::ShardSelectorListed() const {
  MutexLock lock(&mu_);
  return reflector_ != nullptr && reflector_->Relisted();
}

bool SharedIndexInformer::IsStopped() const {
  MutexLock lock(&mu_);
  return stopped_;
}

std::string SharedIndexInformer::LastSyncResourceVersion() const {
  MutexLock lock(&mu_);
  return reflector_ == nullptr ? "" : reflector_->LastSyncResourceVersion();
}

bool SharedIndexInformer::SatisfiesLocked(std::string_view key,
                                          std::string_view rv,
                                          int64_t wanted) const {
  if (api::ObjectPtr object = store_->GetByKey(key)) {
    if (wanted < 0) {
      if (object->resource_version() == rv) return true;
    } else if (NumericVersion(object->resource_version()) >= wanted) {
      return true;
    }
  }
  // Everything up to `wanted` has been applied: the object has been seen
  // at that version or later, or deleted since.
  return wanted >= 0 && applied_rv_ >= wanted;
}

absl::Status SharedIndexInformer::WaitForResourceVersion(
    const Context& ctx, std::string_view key,
    std::string_view resource_version) const {
  const int64_t wanted = NumericVersion(resource_version);
  MutexLock lock(&wait_mu_);
  while (!SatisfiesLocked(key, resource_version, wanted)) {
    if (done_) {
      return absl::CancelledError("informer " + options_.name + " stopped");
    }
    if (ctx.done()) return ctx.Err();
    wait_cv_.WaitWithTimeout(&wait_mu_, kWaitPoll);
  }
  return absl::OkStatus();
}

absl::Status WaitForCacheSync(
    const Context& ctx,
    absl::Span<const SharedIndexInformer* const> informers) {
  for (const SharedIndexInformer* informer : informers) {
    absl::Status s = informer->WaitForSync(ctx);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace kcr::cache
