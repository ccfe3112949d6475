// Manager: what a controller process runs (controller-runtime's
// pkg/manager). It owns the REST client, the shared informers every
// controller watches through, the Prometheus registry every metrics
// provider records into, the health and readiness checks, and the
// controllers and other Runnables.
//
//   auto mgr = Manager::New(config);
//   KCR_RETURN_IF_ERROR(ControllerBuilder(**mgr)
//                           .For(configmaps)
//                           .Owns(secrets)
//                           .Complete(std::make_shared<MyReconciler>()));
//   return (*mgr)->Start(ctx);  // blocks until ctx ends or something fails
//
// Start's order: informers start; the Manager waits for their caches to
// sync; Runnables that need no leader election start; then those that do
// (controllers) start — the point where a leader elector gates them. Start
// returns when `ctx` ends (OK after a clean stop) or when a Runnable fails
// (its error, after everything stopped). Stopping: Runnables' context ends
// and they get `graceful_shutdown_timeout` to return (controllers drain
// their in-flight reconciles), then the informers shut down.
//
// The health ("/healthz") and readiness ("/readyz") checks are registries
// for the HTTP endpoint to serve; the readiness check "informer-sync"
// passes once the caches synced.
//
// Thread-safe.
#ifndef KCR_RUNTIME_CONTROLLER_MANAGER_H_
#define KCR_RUNTIME_CONTROLLER_MANAGER_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/meta/rest_mapper.h"
#include "runtime/base/clock.h"
#include "runtime/base/context.h"
#include "runtime/base/mutex.h"
#include "runtime/cache/shared_informer_factory.h"
#include "runtime/client/rest_client.h"
#include "runtime/client/rest_config.h"
#include "runtime/controller/controller.h"
#include "runtime/controller/metrics.h"
#include "runtime/controller/runnable.h"
#include "runtime/metrics/healthz.h"
#include "runtime/workqueue/metrics.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace kcr::controller {

struct ManagerOptions {
  // The informers: namespace, default resync, transform and knobs. Their
  // clock, when unset, is the Manager's; their metrics, when unset, go to
  // the Manager's registry.
  cache::SharedInformerFactoryOptions cache;
  // The REST client's knobs when the Manager makes it from a Config. Its
  // metrics, when unset, go to the Manager's registry.
  client::ClientOptions client;
  // Not owned. Null: the real clock.
  const Clock* clock = nullptr;
  // How long Start waits for the informers' caches to sync.
  absl::Duration cache_sync_timeout = absl::Minutes(2);
  // How long Runnables get to return once stopping (controller-runtime's
  // GracefulShutdownTimeout); also each built controller's shutdown
  // timeout.
  absl::Duration graceful_shutdown_timeout = absl::Seconds(30);
  // Where every provider registers. Null: a registry of the Manager's own.
  std::shared_ptr<prometheus::Registry> metrics_registry;
};

class Manager {
 public:
  // A Manager with a REST client for `config` (see client::NewRestClient).
  static absl::StatusOr<std::unique_ptr<Manager>> New(
      const client::Config& config, ManagerOptions options = {});
  // A Manager using `client` (its metrics are the caller's business).
  static absl::StatusOr<std::unique_ptr<Manager>> New(
      std::unique_ptr<client::RestClient> client, ManagerOptions options = {});

  // Start must have returned (or never been called).
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  client::RestClient* GetClient() const { return client_.get(); }
  cache::SharedInformerFactory* GetInformerFactory() const {
    return factory_.get();
  }
  prometheus::Registry& GetMetricsRegistry() const { return *registry_; }
  // Kinds and resources, for the builder's owner references. Preloaded with
  // the built-in kinds; add custom resources' mappings before building
  // controllers for them.
  api::RESTMapper* GetRESTMapper() const { return mapper_.get(); }
  const Clock* clock() const { return clock_; }
  const ManagerOptions& options() const { return options_; }
  // The providers controllers record into (the Manager's registry).
  MetricsProvider* controller_metrics() const {
    return controller_metrics_.get();
  }
  workqueue::MetricsProvider* workqueue_metrics() const {
    return workqueue_metrics_.get();
  }

  // Adds a Runnable. Before Start it starts with the others; after Start it
  // starts at once (its informers too). FailedPrecondition once stopping.
  absl::Status Add(std::unique_ptr<Runnable> runnable);
  // Adds a controller: as Add, and AlreadyExists when a controller of the
  // same name was added before.
  absl::Status AddController(std::unique_ptr<Controller> controller);
  // Whether a controller named `name` was added.
  bool HasController(const std::string& name) const;

  // Adds (or replaces) a health or readiness check; see
  // runtime/metrics/healthz.h for names. The HTTP endpoint serves them.
  absl::Status AddHealthzCheck(const std::string& name,
                               metrics::HealthChecks::Check check);
  absl::Status AddReadyzCheck(const std::string& name,
                              metrics::HealthChecks::Check check);
  metrics::HealthChecks& healthz_checks() { return healthz_; }
  metrics::HealthChecks& readyz_checks() { return readyz_; }

  // Runs everything until `ctx` ends or a Runnable fails; see the file
  // comment. Returns OK after a clean stop; the error of the first
  // Runnable that failed, while running or while stopping (its code, the
  // message naming it); DeadlineExceeded when the caches did not sync in
  // time or Runnables did not stop within the graceful shutdown timeout;
  // FailedPrecondition on a second call.
  absl::Status Start(const Context& ctx);

 private:
  struct Entry {
    std::unique_ptr<Runnable> runnable;
    std::thread thread;
    bool started = false;
    bool returned = false;
  };

  Manager(std::unique_ptr<client::RestClient> client, ManagerOptions options,
          std::shared_ptr<prometheus::Registry> registry,
          std::unique_ptr<client::MetricsProvider> client_metrics);

  absl::Status AddLocked(std::unique_ptr<Runnable> runnable)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Starts the Runnables that need no leader election.
  void StartRunnablesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Starts the Runnables that run only while leader. This is where a
  // leader elector gates them: today every process leads.
  void StartLeaderElectionRunnablesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartLocked(Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends the Runnables' context and waits for them; see Start.
  absl::Status StopRunnables() ABSL_LOCKS_EXCLUDED(mu_);

  const ManagerOptions options_;
  const Clock* const clock_;
  const std::shared_ptr<prometheus::Registry> registry_;
  // Providers before what records into them, so they outlive it.
  const std::unique_ptr<client::MetricsProvider> client_metrics_;
  const std::unique_ptr<workqueue::MetricsProvider> workqueue_metrics_;
  const std::unique_ptr<cache::MetricsProvider> cache_metrics_;
  const std::unique_ptr<MetricsProvider> controller_metrics_;
  const std::unique_ptr<api::RESTMapper> mapper_;
  const std::unique_ptr<client::RestClient> client_;
  const std::unique_ptr<cache::SharedInformerFactory> factory_;
  metrics::HealthChecks healthz_;
  metrics::HealthChecks readyz_;

  mutable Mutex mu_;
  ContextCondVar cv_;
  // Runnables (destroyed before the factory and the client they use).
  std::vector<std::unique_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> controller_names_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  // Runnables start (at once, when added) from here on.
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool leading_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool caches_synced_ ABSL_GUARDED_BY(mu_) = false;
  // The first Runnable failure.
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  // What Runnables and informers run with while the Manager runs.
  Context runnables_ctx_ ABSL_GUARDED_BY(mu_);
  CancelFunc cancel_runnables_ ABSL_GUARDED_BY(mu_);
  Context cache_ctx_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::controller

#endif  // KCR_RUNTIME_CONTROLLER_MANAGER_H_
