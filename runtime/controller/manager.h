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
// The health ("/healthz") and readiness ("/readyz") checks are served,
// with "/metrics" (every family of the Manager's registry and the process_*
// families), on the addresses in ManagerOptions; the readiness check
// "informer-sync" passes once the caches synced, whether or not this
// replica leads (a standby is ready: its caches are warm).
//
// Leader election (ManagerOptions::leader_election): after the caches
// synced, the Manager campaigns for a coordination.k8s.io/v1 Lease; the
// Runnables that need leader election (controllers) start only once it
// leads, under a context that ends when leadership ends, and the Manager
// waits for them to return before the Lease is released (on a clean stop,
// at once, so a standby takes over without waiting out the lease). A
// leader that loses the Lease (it could not renew within renew_deadline)
// stops: Start returns "leader election lost" and the process should exit,
// as controller-runtime's does.
//
// Thread-safe.
#ifndef KCR_RUNTIME_CONTROLLER_MANAGER_H_
#define KCR_RUNTIME_CONTROLLER_MANAGER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/meta/rest_mapper.h"
#include "base/clock.h"
#include "base/context.h"
#include "base/mutex.h"
#include "runtime/cache/list_watch.h"
#include "runtime/cache/lister.h"
#include "runtime/cache/shared_informer_factory.h"
#include "runtime/cache/typed_lister.h"
#include "runtime/client/rest_client.h"
#include "runtime/client/rest_config.h"
#include "runtime/client/typed_client.h"
#include "runtime/controller/controller.h"
#include "runtime/controller/metrics.h"
#include "runtime/controller/runnable.h"
#include "runtime/events/event_broadcaster.h"
#include "runtime/events/event_recorder.h"
#include "runtime/leaderelection/metrics.h"
#include "runtime/metrics/healthz.h"
#include "runtime/metrics/http_endpoint.h"
#include "runtime/metrics/metrics_auth.h"
#include "runtime/metrics/process_collector.h"
#include "runtime/sharding/metrics.h"
#include "runtime/sharding/shard_ownership.h"
#include "runtime/workqueue/metrics.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace kcr::leaderelection {
class LeaderElector;
}  // namespace kcr::leaderelection

namespace kcr::controller {

// Sharded controllers through Leases (runtime/sharding/shard_coordinator.h).
struct ShardingOptions {
  // Virtual shards per controller; 0: controllers are not sharded (and run
  // under leader election, when it is on).
  int shards = 0;
  sharding::ShardBy shard_by = sharding::ShardBy::kUid;
  // Where the shard and membership Leases live; "" for
  // leader_election_namespace, else the pod's own namespace.
  std::string lease_namespace;
  // The coordinators' timing (LeaseShardCoordinator's defaults).
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  // How long a shard given back waits for its reconciles in flight.
  absl::Duration drain_timeout = absl::Seconds(5);
};

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

  // "host:port" (":8080" for every interface, port 0 for any free one) to
  // serve /metrics on; "" or "0" serves none. The same address as
  // health_probe_bind_address (not port 0) serves all three paths on one
  // port.
  std::string metrics_bind_address = "0";
  // "host:port" to serve /healthz and /readyz on; "" or "0" serves none.
  std::string health_probe_bind_address = "0";
  // Serve /metrics over HTTPS, to callers whose bearer token passes a
  // TokenReview and whose user may `get` the non-resource URL /metrics by
  // a SubjectAccessReview, both asked of the API server
  // (metrics/metrics_auth.h), as controller-runtime's secure metrics. The
  // probes stay plain HTTP, on their own address.
  bool metrics_secure = false;
  // Where the secure metrics' certificate and key are: <dir>/<cert_name>
  // and <dir>/<key_name>. Empty: a self-signed certificate made at start.
  std::string metrics_cert_dir;
  std::string metrics_cert_name = "tls.crt";
  std::string metrics_key_name = "tls.key";
  // Who reviews the scrapers' tokens; by default the API server through
  // the manager's client. For tests.
  std::shared_ptr<metrics::AccessReviewer> metrics_reviewer;

  // Leader election on the Lease leader_election_namespace /
  // leader_election_id (both required when on; the namespace defaults to
  // the pod's own when running in a cluster).
  bool leader_election = false;
  std::string leader_election_id;
  std::string leader_election_namespace;
  // This replica's identity; "" for <hostname>_<uuid>.
  std::string leader_election_identity;
  // client-go's defaults (controller-runtime's too).
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  // Give the Lease up on a clean stop, so a standby takes over at once.
  // (controller-runtime's LeaderElectionReleaseOnCancel, which defaults to
  // false there; the Manager waits for its controllers to return before it
  // releases, which is what makes releasing safe.)
  bool leader_election_release_on_cancel = true;

  // With sharding.shards > 0, every controller the builder builds (unless
  // told Unsharded, or given an ownership of its own) is sharded: the
  // Manager makes it a LeaseShardCoordinator, run as a Runnable beside it
  // under this replica's identity (leader_election_identity, or a new
  // one). Sharded controllers need no leader; the others keep it.
  ShardingOptions sharding;
  // Given to every controller the builder builds as its on_reconciled
  // (ControllerOptions), with the controller's name. Null: none.
  std::function<void(const std::string& controller, const Request&,
                     absl::Time start, absl::Time end)>
      on_reconciled;
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

  // The way a reconciler reads T's objects: a lister of the shared
  // informer's cache for T (made on first use and started with the
  // Manager; the builder's For<T>, Owns<T> and Watches<T> use the same
  // one). T says where it lives — kGroup, kVersion, kPlural, kNamespaced —
  // as the typed views of api/types and the custom resources' types do;
  // that declaration beside the type is the one place a resource is named.
  // For a typed view (T::Create) the lister is a cache::TypedLister<T> and
  // returns views; for another type (a custom resource, which parses with
  // T::FromObject) a cache::Lister that returns the objects. `options`
  // picks the informer, as the builder's WithListWatchOptions does.
  //
  //   auto deployments = mgr.ListerFor<api::DeploymentView>();
  //   absl::StatusOr<api::DeploymentView> d = deployments.Get(ns, name);
  template <typename T>
  auto ListerFor(const cache::ListWatchOptions& options = {}) const {
    const cache::Indexer* indexer =
        factory_->InformerFor(client::ResourceFor<T>(), options)->GetIndexer();
    if constexpr (client::internal::IsView<T>::value) {
      return cache::TypedLister<T>(indexer);
    } else {
      return cache::Lister(indexer, api::GroupResource{T::kGroup, T::kPlural});
    }
  }
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

  // How controllers are sharded: `factory(name)` gives the ShardOwnership
  // of the controller named `name` (not owned; it must outlive the
  // Manager), or null to leave it unsharded. ControllerBuilder asks
  // through ShardOwnershipFor unless told Sharded or Unsharded. Unset: a
  // LeaseShardCoordinator per controller when options().sharding.shards >
  // 0, else none. Before the controllers are built.
  using ShardOwnershipFactory =
      std::function<absl::StatusOr<sharding::ShardOwnership*>(
          const std::string& controller)>;
  void SetShardOwnershipFactory(ShardOwnershipFactory factory)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<sharding::ShardOwnership*> ShardOwnershipFor(
      const std::string& controller) ABSL_LOCKS_EXCLUDED(mu_);

  // Adds (or replaces) a health or readiness check; see
  // runtime/metrics/healthz.h for names. The HTTP endpoint serves them.
  absl::Status AddHealthzCheck(const std::string& name,
                               metrics::HealthChecks::Check check);
  absl::Status AddReadyzCheck(const std::string& name,
                              metrics::HealthChecks::Check check);
  metrics::HealthChecks& healthz_checks() { return healthz_; }
  metrics::HealthChecks& readyz_checks() { return readyz_; }

  // The addresses the endpoints listen on ("" when not served), with the
  // port chosen when the options asked for port 0.
  std::string metrics_address() const;
  std::string health_probe_address() const;
  // A recorder of core/v1 Events from `component` (source.host is this
  // machine's name), as controller-runtime's GetEventRecorderFor. All
  // recorders share one broadcaster (one queue, one writing thread), which
  // the Manager flushes when it stops. Recording never blocks. Recorders
  // may outlive the Manager (they then drop what they are given).
  std::unique_ptr<events::EventRecorder> GetEventRecorderFor(
      const std::string& component);

  // Whether this replica leads (always true without leader election, once
  // started). Thread-safe.
  bool IsLeader() const;

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
  void StartLocked(Entry& entry, const Context& ctx)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Binds the endpoints the options ask for.
  absl::Status CreateEndpoints();
  // A LeaseShardCoordinator for `controller`, run as a Runnable of this
  // Manager (which owns it).
  absl::StatusOr<sharding::ShardOwnership*> NewShardCoordinator(
      const std::string& controller) ABSL_LOCKS_EXCLUDED(mu_);
  // Adds the Runnable that campaigns and, while leading, runs the
  // Runnables that need it.
  absl::Status AddLeaderElection();
  // on_started_leading: starts the leader's Runnables under `ctx` and
  // waits for them to return once it ends.
  void Lead(const Context& ctx) ABSL_LOCKS_EXCLUDED(mu_);
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
  std::unique_ptr<leaderelection::MetricsProvider> leader_metrics_;
  // The shard coordinators' kcr_shards_held, acquisitions, releases and
  // handover time.
  std::unique_ptr<sharding::MetricsProvider> sharding_metrics_;
  std::unique_ptr<metrics::ProcessCollector> process_collector_;
  // /metrics, and /healthz + /readyz (the same one when the addresses are).
  // Before the endpoint that calls them, so they outlive its threads.
  std::shared_ptr<metrics::AccessReviewer> metrics_reviewer_;
  std::unique_ptr<metrics::MetricsAuth> metrics_auth_;
  std::unique_ptr<metrics::HttpEndpoint> metrics_endpoint_;
  std::unique_ptr<metrics::HttpEndpoint> probe_endpoint_;

  mutable Mutex mu_;
  ContextCondVar cv_;
  // Runnables (destroyed before the factory and the client they use).
  std::vector<std::unique_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> controller_names_ ABSL_GUARDED_BY(mu_);
  ShardOwnershipFactory shard_ownership_factory_ ABSL_GUARDED_BY(mu_);
  // The identity of this replica's shard coordinators, made once.
  std::string shard_identity_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  // Runnables start (at once, when added) from here on.
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool leading_ ABSL_GUARDED_BY(mu_) = false;
  // Made by the first GetEventRecorderFor.
  std::unique_ptr<events::EventBroadcaster> broadcaster_ ABSL_GUARDED_BY(mu_);
  // The leader elector (owned by its Runnable), null without one.
  leaderelection::LeaderElector* elector_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool caches_synced_ ABSL_GUARDED_BY(mu_) = false;
  // The first Runnable failure.
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  // What Runnables and informers run with while the Manager runs.
  Context runnables_ctx_ ABSL_GUARDED_BY(mu_);
  // What the leader's Runnables run with: runnables_ctx_ without leader
  // election, else the context of the current term.
  Context leader_ctx_ ABSL_GUARDED_BY(mu_);
  CancelFunc cancel_runnables_ ABSL_GUARDED_BY(mu_);
  Context cache_ctx_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::controller

#endif  // KCR_RUNTIME_CONTROLLER_MANAGER_H_
