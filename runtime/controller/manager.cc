#include "runtime/controller/manager.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"
#include "prometheus/registry.h"
#include "runtime/metrics/cache_metrics.h"
#include "runtime/metrics/controller_metrics.h"
#include "runtime/metrics/rest_client_metrics.h"
#include "runtime/metrics/workqueue_metrics.h"

namespace kcr::controller {
namespace {

std::shared_ptr<prometheus::Registry> RegistryOf(const ManagerOptions& o) {
  return o.metrics_registry != nullptr
             ? o.metrics_registry
             : std::make_shared<prometheus::Registry>();
}

// The factory's options with the Manager's clock and cache metrics filled
// in where the caller left them unset.
cache::SharedInformerFactoryOptions FactoryOptions(
    cache::SharedInformerFactoryOptions o, const Clock* clock,
    cache::MetricsProvider* metrics) {
  if (o.clock == nullptr) o.clock = clock;
  if (o.informer.metrics == nullptr) o.informer.metrics = metrics;
  return o;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Manager>> Manager::New(
    const client::Config& config, ManagerOptions options) {
  std::shared_ptr<prometheus::Registry> registry = RegistryOf(options);
  std::unique_ptr<client::MetricsProvider> client_metrics;
  client::ClientOptions client_options = options.client;
  if (client_options.metrics == nullptr) {
    client_metrics =
        std::make_unique<metrics::PrometheusRestClientMetrics>(*registry);
    client_options.metrics = client_metrics.get();
  }
  if (client_options.clock == nullptr) client_options.clock = options.clock;
  auto client = client::NewRestClient(config, client_options);
  if (!client.ok()) {
    return absl::Status(client.status().code(),
                        absl::StrCat("manager: creating the REST client: ",
                                     client.status().message()));
  }
  return std::unique_ptr<Manager>(
      new Manager(*std::move(client), std::move(options), std::move(registry),
                  std::move(client_metrics)));
}

absl::StatusOr<std::unique_ptr<Manager>> Manager::New(
    std::unique_ptr<client::RestClient> client, ManagerOptions options) {
  if (client == nullptr) {
    return absl::InvalidArgumentError("manager: no REST client");
  }
  std::shared_ptr<prometheus::Registry> registry = RegistryOf(options);
  return std::unique_ptr<Manager>(new Manager(
      std::move(client), std::move(options), std::move(registry), nullptr));
}

Manager::Manager(std::unique_ptr<client::RestClient> client,
                 ManagerOptions options,
                 std::shared_ptr<prometheus::Registry> registry,
                 std::unique_ptr<client::MetricsProvider> client_metrics)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      registry_(std::move(registry)),
      client_metrics_(std::move(client_metrics)),
      workqueue_metrics_(
          std::make_unique<metrics::PrometheusWorkqueueMetrics>(*registry_)),
      cache_metrics_(
          std::make_unique<metrics::PrometheusCacheMetrics>(*registry_)),
      controller_metrics_(
          std::make_unique<metrics::PrometheusControllerMetrics>(*registry_)),
      mapper_(api::RESTMapper::NewDefault()),
      client_(std::move(client)),
      factory_(std::make_unique<cache::SharedInformerFactory>(
          client_.get(),
          FactoryOptions(options_.cache, clock_, cache_metrics_.get()))) {
  // Ready once the caches hold the first lists (controller-runtime's
  // readiness follows its cache the same way).
  absl::Status s = readyz_.Add("informer-sync", [this]() -> absl::Status {
    MutexLock lock(&mu_);
    if (caches_synced_) return absl::OkStatus();
    return absl::UnavailableError("informers have not synced");
  });
  CHECK(s.ok()) << s;
}

Manager::~Manager() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    if (cancel_runnables_) cancel_runnables_();
  }
  // Runnables added but never started have no thread; started ones have
  // returned (Start returned) or are told to stop now.
  std::vector<std::thread*> threads;
  {
    MutexLock lock(&mu_);
    for (auto& e : entries_) threads.push_back(&e->thread);
  }
  for (std::thread* t : threads) {
    if (t->joinable()) t->join();
  }
  factory_->Shutdown();
}

absl::Status Manager::Add(std::unique_ptr<Runnable> runnable) {
  if (runnable == nullptr) {
    return absl::InvalidArgumentError("manager: Add of a null runnable");
  }
  MutexLock lock(&mu_);
  return AddLocked(std::move(runnable));
}

absl::Status Manager::AddController(std::unique_ptr<Controller> controller) {
  if (controller == nullptr) {
    return absl::InvalidArgumentError("manager: Add of a null controller");
  }
  MutexLock lock(&mu_);
  const std::string name = controller->name();
  if (std::find(controller_names_.begin(), controller_names_.end(), name) !=
      controller_names_.end()) {
    return absl::AlreadyExistsError(absl::StrCat(
        "manager: a controller named \"", name,
        "\" already exists; controller names must be unique (use Named)"));
  }
  absl::Status s = AddLocked(std::move(controller));
  if (s.ok()) controller_names_.push_back(name);
  return s;
}

bool Manager::HasController(const std::string& name) const {
  MutexLock lock(&mu_);
  return std::find(controller_names_.begin(), controller_names_.end(), name) !=
         controller_names_.end();
}

absl::Status Manager::AddLocked(std::unique_ptr<Runnable> runnable) {
  if (stopping_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "manager: cannot add ", runnable->name(), ": the manager is stopping"));
  }
  entries_.push_back(std::make_unique<Entry>());
  Entry& entry = *entries_.back();
  entry.runnable = std::move(runnable);
  if (running_) {
    // Informers the new Runnable asked for start now too.
    factory_->Start(cache_ctx_);
    if (!entry.runnable->NeedLeaderElection() || leading_) StartLocked(entry);
  }
  return absl::OkStatus();
}

absl::Status Manager::AddHealthzCheck(const std::string& name,
                                      metrics::HealthChecks::Check check) {
  return healthz_.Add(name, std::move(check));
}

absl::Status Manager::AddReadyzCheck(const std::string& name,
                                     metrics::HealthChecks::Check check) {
  return readyz_.Add(name, std::move(check));
}

void Manager::StartLocked(Entry& entry) {
  if (entry.started) return;
  entry.started = true;
  Runnable* runnable = entry.runnable.get();
  Entry* e = &entry;
  Context ctx = runnables_ctx_;
  entry.thread = std::thread([this, runnable, e, ctx] {
    absl::Status s = runnable->Start(ctx);
    MutexLock lock(&mu_);
    e->returned = true;
    if (!s.ok()) {
      LOG(ERROR) << "manager: runnable failed name=" << runnable->name()
                 << " error=" << s;
      if (failure_.ok()) {
        failure_ =
            absl::Status(s.code(), absl::StrCat("manager: ", runnable->name(),
                                                " failed: ", s.message()));
      }
    }
    cv_.SignalAll();
  });
}

void Manager::StartRunnablesLocked() {
  for (auto& e : entries_) {
    if (!e->runnable->NeedLeaderElection()) StartLocked(*e);
  }
}

void Manager::StartLeaderElectionRunnablesLocked() {
  leading_ = true;
  for (auto& e : entries_) {
    if (e->runnable->NeedLeaderElection()) StartLocked(*e);
  }
}

absl::Status Manager::Start(const Context& ctx) {
  {
    MutexLock lock(&mu_);
    if (started_) {
      return absl::FailedPreconditionError("manager: already started");
    }
    started_ = true;
    std::tie(runnables_ctx_, cancel_runnables_) = WithCancel(ctx);
    // The informers outlive the Runnables' context, so that controllers
    // drain against a live cache; Shutdown ends them.
    cache_ctx_ = Context::Background();
    factory_->Start(cache_ctx_);
  }
  LOG(INFO) << "manager: starting; waiting for caches to sync";
  {
    auto [sync_ctx, cancel_sync] =
        WithTimeout(ctx, options_.cache_sync_timeout, clock_);
    absl::Status synced = factory_->WaitForCacheSync(sync_ctx);
    cancel_sync();
    if (!synced.ok()) {
      absl::Status stopped = StopRunnables();
      if (ctx.done()) return stopped;
      return absl::DeadlineExceededError(
          absl::StrCat("manager: caches did not sync within ",
                       absl::FormatDuration(options_.cache_sync_timeout), ": ",
                       synced.message()));
    }
  }
  {
    MutexLock lock(&mu_);
    caches_synced_ = true;
    running_ = true;
    StartRunnablesLocked();
    StartLeaderElectionRunnablesLocked();
  }
  LOG(INFO) << "manager: caches synced, runnables started";
  absl::Status failure;
  {
    MutexLock lock(&mu_);
    // Ends with ctx (Await returns its error) or with a failure.
    cv_.Await(&mu_, ctx,
              absl::Condition(
                  +[](absl::Status* f) { return !f->ok(); }, &failure_))
        .IgnoreError();
    failure = failure_;
  }
  LOG(INFO) << "manager: stopping"
            << (failure.ok()
                    ? ""
                    : absl::StrCat(" after a failure: ", failure.message()));
  absl::Status stopped = StopRunnables();
  if (!failure.ok()) return failure;
  if (!stopped.ok()) return stopped;
  // A Runnable that failed while stopping (a controller whose reconciles
  // outlived its shutdown timeout) is reported too.
  MutexLock lock(&mu_);
  return failure_;
}

absl::Status Manager::StopRunnables() {
  std::vector<std::string> stuck;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    cancel_runnables_();
    const absl::Time deadline =
        clock_->Now() + options_.graceful_shutdown_timeout;
    auto all_returned = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (const auto& e : entries_) {
        if (e->started && !e->returned) return false;
      }
      return true;
    };
    auto [wait_ctx, cancel_wait] =
        WithDeadline(Context::Background(), deadline, clock_);
    while (!all_returned() && !wait_ctx.done()) cv_.Wait(&mu_, wait_ctx);
    cancel_wait();
    for (const auto& e : entries_) {
      if (e->started && !e->returned) stuck.push_back(e->runnable->name());
    }
  }
  absl::Status status;
  if (!stuck.empty()) {
    status = absl::DeadlineExceededError(absl::StrCat(
        "manager: ", stuck.size(), " runnable(s) did not stop within ",
        absl::FormatDuration(options_.graceful_shutdown_timeout), ": ",
        absl::StrJoin(stuck, ", ")));
    LOG(ERROR) << status.message() << "; waiting for them";
  }
  // Joined even past the deadline: a Runnable's thread uses the Manager.
  // Controllers cancel their reconciles at their own deadline.
  std::vector<std::thread*> threads;
  {
    MutexLock lock(&mu_);
    for (auto& e : entries_) threads.push_back(&e->thread);
  }
  for (std::thread* t : threads) {
    if (t->joinable()) t->join();
  }
  factory_->Shutdown();
  LOG(INFO) << "manager: stopped";
  return status;
}

}  // namespace kcr::controller
