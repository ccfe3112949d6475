#include "runtime/controller/manager.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/tls_certs.h"
#include "glog/logging.h"
#include "prometheus/registry.h"
#include "runtime/leaderelection/identity.h"
#include "runtime/leaderelection/leader_elector.h"
#include "runtime/leaderelection/lease_lock.h"
#include "runtime/metrics/cache_metrics.h"
#include "runtime/metrics/controller_metrics.h"
#include "runtime/metrics/leader_election_metrics.h"
#include "runtime/metrics/metrics_handler.h"
#include "runtime/metrics/rest_client_metrics.h"
#include "runtime/metrics/sharding_metrics.h"
#include "runtime/metrics/workqueue_metrics.h"
#include "runtime/sharding/lease_client.h"
#include "runtime/sharding/shard_coordinator.h"

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

bool Serves(const std::string& address) {
  return !address.empty() && address != "0";
}

// The namespace of the pod this process runs in, or "" outside a cluster.
std::string PodNamespace() {
  std::ifstream in("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  std::stringstream text;
  text << in.rdbuf();
  std::string ns = text.str();
  while (!ns.empty() && (ns.back() == '\n' || ns.back() == ' ')) ns.pop_back();
  return ns;
}

// Campaigns for the Lease while the Manager runs; see Manager::Lead.
class LeaderElectionRunnable final : public Runnable {
 public:
  explicit LeaderElectionRunnable(
      std::unique_ptr<leaderelection::LeaderElector> elector)
      : elector_(std::move(elector)) {}

  absl::Status Start(const Context& ctx) override {
    elector_->Run(ctx);
    if (ctx.done()) return absl::OkStatus();
    return absl::AbortedError(
        "leader election lost: the Lease could not be renewed in time");
  }
  bool NeedLeaderElection() const override { return false; }
  std::string name() const override { return "leader election"; }
  leaderelection::LeaderElector* elector() const { return elector_.get(); }

 private:
  const std::unique_ptr<leaderelection::LeaderElector> elector_;
};

// Runs a sharded controller's LeaseShardCoordinator: rounds until the
// Manager stops, then every shard given back (after its reconciles
// drained) and the membership Lease released.
class ShardCoordinatorRunnable final : public Runnable {
 public:
  explicit ShardCoordinatorRunnable(
      std::unique_ptr<sharding::LeaseShardCoordinator> coordinator,
      std::string controller)
      : coordinator_(std::move(coordinator)),
        controller_(std::move(controller)) {}

  absl::Status Start(const Context& ctx) override {
    coordinator_->Run(ctx);
    return absl::OkStatus();
  }
  bool NeedLeaderElection() const override { return false; }
  std::string name() const override {
    return "shard coordinator " + controller_;
  }
  sharding::LeaseShardCoordinator* coordinator() const {
    return coordinator_.get();
  }

 private:
  const std::unique_ptr<sharding::LeaseShardCoordinator> coordinator_;
  const std::string controller_;
};

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
  std::unique_ptr<Manager> manager(
      new Manager(*std::move(client), std::move(options), std::move(registry),
                  std::move(client_metrics)));
  KCR_RETURN_IF_ERROR(manager->CreateEndpoints());
  KCR_RETURN_IF_ERROR(manager->AddLeaderElection());
  return manager;
}

absl::StatusOr<std::unique_ptr<Manager>> Manager::New(
    std::unique_ptr<client::RestClient> client, ManagerOptions options) {
  if (client == nullptr) {
    return absl::InvalidArgumentError("manager: no REST client");
  }
  std::shared_ptr<prometheus::Registry> registry = RegistryOf(options);
  std::unique_ptr<Manager> manager(new Manager(
      std::move(client), std::move(options), std::move(registry), nullptr));
  KCR_RETURN_IF_ERROR(manager->CreateEndpoints());
  KCR_RETURN_IF_ERROR(manager->AddLeaderElection());
  return manager;
}

namespace {

// The secure metrics' certificate: read from the configured files, or made
// (self-signed, for localhost and the host's name) when none are given.
absl::StatusOr<metrics::HttpTls> MetricsTls(const ManagerOptions& options) {
  if (!options.metrics_cert_dir.empty()) {
    metrics::HttpTls tls;
    const std::pair<const std::string*, std::string*> files[] = {
        {&options.metrics_cert_name, &tls.cert_pem},
        {&options.metrics_key_name, &tls.key_pem}};
    for (const auto& [name, into] : files) {
      const std::string path =
          absl::StrCat(options.metrics_cert_dir, "/", *name);
      std::ifstream in(path, std::ios::binary);
      if (!in) {
        return absl::NotFoundError(absl::StrCat(
            "manager: cannot read the metrics certificate file ", path));
      }
      std::stringstream text;
      text << in.rdbuf();
      *into = text.str();
    }
    return tls;
  }
  TlsOptions o;
  o.ca_common_name = "kcr-metrics-ca";
  o.server_common_name = "kcr-metrics";
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') {
    o.extra_names.emplace_back(host);
  }
  absl::StatusOr<TlsMaterial> made = GenerateTlsMaterial(o);
  if (!made.ok() && !o.extra_names.empty()) {
    // A host name that is not a DNS name: loopback only.
    o.extra_names.clear();
    made = GenerateTlsMaterial(o);
  }
  if (!made.ok()) return made.status();
  return metrics::HttpTls{made->server_cert_pem + made->ca_cert_pem,
                          made->server_key_pem};
}

}  // namespace

absl::Status Manager::CreateEndpoints() {
  const std::string& metrics = options_.metrics_bind_address;
  const std::string& probes = options_.health_probe_bind_address;
  auto create = [](const std::string& address,
                   std::optional<metrics::HttpTls> tls)
      -> absl::StatusOr<std::unique_ptr<metrics::HttpEndpoint>> {
    metrics::HttpEndpointOptions o;
    o.bind_address = address;
    o.tls = std::move(tls);
    auto endpoint = metrics::HttpEndpoint::Create(o);
    if (!endpoint.ok()) {
      return absl::Status(
          endpoint.status().code(),
          absl::StrCat("manager: ", endpoint.status().message()));
    }
    return endpoint;
  };
  const bool secure = options_.metrics_secure && Serves(metrics);
  if (secure && Serves(probes) && probes == metrics &&
      !absl::EndsWith(probes, ":0")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "manager: secure metrics and the health probes cannot share ", metrics,
        ": the probes stay plain HTTP on an address of their own"));
  }
  if (Serves(metrics)) {
    std::optional<metrics::HttpTls> tls;
    metrics::HttpEndpoint::Handler handler =
        metrics::MetricsHandler({registry_.get(), process_collector_.get()});
    if (secure) {
      KCR_ASSIGN_OR_RETURN(tls, MetricsTls(options_));
      metrics_reviewer_ = options_.metrics_reviewer;
      if (metrics_reviewer_ == nullptr) {
        metrics_reviewer_ = metrics::NewApiServerReviewer(client_.get());
      }
      metrics_auth_ = std::make_unique<metrics::MetricsAuth>(
          metrics_reviewer_.get(), clock_);
      handler = metrics_auth_->Protect(std::move(handler));
    }
    KCR_ASSIGN_OR_RETURN(metrics_endpoint_, create(metrics, std::move(tls)));
    metrics_endpoint_->Handle("/metrics", std::move(handler));
  }
  if (Serves(probes)) {
    metrics::HttpEndpoint* endpoint = metrics_endpoint_.get();
    // One port for both when the addresses name the same one (port 0 asks
    // for a port of its own each time).
    if (probes != metrics || absl::EndsWith(probes, ":0") ||
        endpoint == nullptr) {
      KCR_ASSIGN_OR_RETURN(probe_endpoint_, create(probes, std::nullopt));
      endpoint = probe_endpoint_.get();
    }
    healthz_.ServeOn(*endpoint, "/healthz");
    readyz_.ServeOn(*endpoint, "/readyz");
  }
  return absl::OkStatus();
}

absl::Status Manager::AddLeaderElection() {
  if (!options_.leader_election) return absl::OkStatus();
  std::string ns = options_.leader_election_namespace;
  if (ns.empty()) ns = PodNamespace();
  if (ns.empty()) {
    return absl::InvalidArgumentError(
        "manager: leader election needs a namespace for its Lease "
        "(leader_election_namespace): not running in a cluster");
  }
  if (options_.leader_election_id.empty()) {
    return absl::InvalidArgumentError(
        "manager: leader election needs the Lease's name "
        "(leader_election_id)");
  }
  std::string identity = options_.leader_election_identity;
  if (identity.empty()) {
    KCR_ASSIGN_OR_RETURN(identity, leaderelection::NewIdentity());
  }
  leaderelection::LeaderElectionConfig config;
  config.lock = std::make_shared<leaderelection::LeaseLock>(
      client_.get(), ns, options_.leader_election_id, identity);
  config.lease_duration = options_.lease_duration;
  config.renew_deadline = options_.renew_deadline;
  config.retry_period = options_.retry_period;
  config.release_on_cancel = options_.leader_election_release_on_cancel;
  config.name = options_.leader_election_id;
  config.clock = clock_;
  config.metrics = leader_metrics_.get();
  config.callbacks.on_started_leading = [this](const Context& ctx) {
    Lead(ctx);
  };
  config.callbacks.on_stopped_leading = [identity] {
    LOG(INFO) << "manager: not leading identity=" << identity;
  };
  config.callbacks.on_new_leader = [identity](const std::string& holder) {
    LOG(INFO) << "manager: leader is now "
              << (holder.empty() ? "nobody" : holder)
              << (holder == identity ? " (this replica)" : "");
  };
  auto elector = leaderelection::LeaderElector::Create(std::move(config));
  if (!elector.ok()) {
    return absl::Status(
        elector.status().code(),
        absl::StrCat("manager: leader election: ", elector.status().message()));
  }
  auto runnable = std::make_unique<LeaderElectionRunnable>(*std::move(elector));
  leaderelection::LeaderElector* raw = runnable->elector();
  // Healthy while it leads and renews, or does not lead (client-go's
  // HealthzAdaptor, with its 20 s of tolerance).
  KCR_RETURN_IF_ERROR(healthz_.Add(
      "leaderElection", [raw]() { return raw->Check(absl::Seconds(20)); }));
  MutexLock lock(&mu_);
  elector_ = raw;
  return AddLocked(std::move(runnable));
}

void Manager::Lead(const Context& ctx) {
  MutexLock lock(&mu_);
  if (stopping_) return;
  leader_ctx_ = ctx;
  LOG(INFO) << "manager: leading; starting the leader's runnables";
  StartLeaderElectionRunnablesLocked();
  while (!ctx.done()) cv_.Wait(&mu_, ctx);
  leading_ = false;
  // The leader's Runnables stop with the term; the Lease is kept (and
  // renewed no more) until they returned, so the next leader never runs
  // beside them. They have the graceful shutdown timeout, as on a stop.
  auto leader_runnables_returned = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const auto& e : entries_) {
      if (e->runnable->NeedLeaderElection() && e->started && !e->returned) {
        return false;
      }
    }
    return true;
  };
  auto [wait_ctx, cancel_wait] = WithTimeout(
      Context::Background(), options_.graceful_shutdown_timeout, clock_);
  while (!leader_runnables_returned() && !wait_ctx.done()) {
    cv_.Wait(&mu_, wait_ctx);
  }
  cancel_wait();
  if (!leader_runnables_returned()) {
    LOG(ERROR) << "manager: the leader's runnables did not stop within "
               << options_.graceful_shutdown_timeout
               << " of the end of the term";
  }
}

std::string Manager::metrics_address() const {
  return metrics_endpoint_ == nullptr ? "" : metrics_endpoint_->address();
}

std::string Manager::health_probe_address() const {
  if (probe_endpoint_ != nullptr) return probe_endpoint_->address();
  if (Serves(options_.health_probe_bind_address) &&
      metrics_endpoint_ != nullptr) {
    return metrics_endpoint_->address();
  }
  return "";
}

std::unique_ptr<events::EventRecorder> Manager::GetEventRecorderFor(
    const std::string& component) {
  MutexLock lock(&mu_);
  if (broadcaster_ == nullptr) {
    events::BroadcasterOptions o;
    o.clock = clock_;
    broadcaster_ = events::NewBroadcaster(client_.get(), o);
  }
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return broadcaster_->NewRecorder({component, host});
}

bool Manager::IsLeader() const {
  MutexLock lock(&mu_);
  if (elector_ != nullptr) return elector_->IsLeader() && leading_;
  return leading_;
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
          FactoryOptions(options_.cache, clock_, cache_metrics_.get()))),
      leader_metrics_(
          std::make_unique<metrics::PrometheusLeaderElectionMetrics>(
              *registry_)),
      sharding_metrics_(
          std::make_unique<metrics::PrometheusShardingMetrics>(*registry_)),
      process_collector_(std::make_unique<metrics::ProcessCollector>()) {
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
    if (!entry.runnable->NeedLeaderElection()) {
      StartLocked(entry, runnables_ctx_);
    } else if (leading_) {
      StartLocked(entry, leader_ctx_);
    }
  }
  return absl::OkStatus();
}

void Manager::SetShardOwnershipFactory(ShardOwnershipFactory factory) {
  MutexLock lock(&mu_);
  shard_ownership_factory_ = std::move(factory);
}

absl::StatusOr<sharding::ShardOwnership*> Manager::ShardOwnershipFor(
    const std::string& controller) {
  ShardOwnershipFactory factory;
  {
    MutexLock lock(&mu_);
    factory = shard_ownership_factory_;
  }
  if (factory) return factory(controller);
  if (options_.sharding.shards <= 0) return nullptr;
  return NewShardCoordinator(controller);
}

absl::StatusOr<sharding::ShardOwnership*> Manager::NewShardCoordinator(
    const std::string& controller) {
  const ShardingOptions& o = options_.sharding;
  std::string ns = o.lease_namespace;
  if (ns.empty()) ns = options_.leader_election_namespace;
  if (ns.empty()) ns = PodNamespace();
  if (ns.empty()) {
    return absl::InvalidArgumentError(
        "manager: sharded controllers need a namespace for their Leases "
        "(sharding.lease_namespace): not running in a cluster");
  }
  std::string identity = options_.leader_election_identity;
  if (identity.empty()) {
    MutexLock lock(&mu_);
    if (shard_identity_.empty()) {
      KCR_ASSIGN_OR_RETURN(shard_identity_, leaderelection::NewIdentity());
    }
    identity = shard_identity_;
  }
  sharding::ShardCoordinatorOptions co;
  co.controller = controller;
  co.lease_namespace = ns;
  co.identity = identity;
  co.shards = o.shards;
  co.shard_by = o.shard_by;
  co.lease_duration = o.lease_duration;
  co.renew_deadline = o.renew_deadline;
  co.retry_period = o.retry_period;
  co.drain_timeout = o.drain_timeout;
  co.clock = clock_;
  co.metrics = sharding_metrics_.get();
  auto coordinator = sharding::LeaseShardCoordinator::Create(
      std::move(co),
      sharding::NewRestLeaseClient(client_.get(), ns, controller));
  if (!coordinator.ok()) {
    return absl::Status(coordinator.status().code(),
                        absl::StrCat("manager: sharding of ", controller, ": ",
                                     coordinator.status().message()));
  }
  auto runnable = std::make_unique<ShardCoordinatorRunnable>(
      *std::move(coordinator), controller);
  sharding::ShardOwnership* ownership = runnable->coordinator();
  LOG(INFO) << "manager: sharding controller=" << controller
            << " shards=" << o.shards << " identity=" << identity
            << " namespace=" << ns;
  KCR_RETURN_IF_ERROR(Add(std::move(runnable)));
  return ownership;
}

absl::Status Manager::AddHealthzCheck(const std::string& name,
                                      metrics::HealthChecks::Check check) {
  return healthz_.Add(name, std::move(check));
}

absl::Status Manager::AddReadyzCheck(const std::string& name,
                                     metrics::HealthChecks::Check check) {
  return readyz_.Add(name, std::move(check));
}

void Manager::StartLocked(Entry& entry, const Context& ctx) {
  if (entry.started) return;
  entry.started = true;
  Runnable* runnable = entry.runnable.get();
  Entry* e = &entry;
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
    if (!e->runnable->NeedLeaderElection()) StartLocked(*e, runnables_ctx_);
  }
}

void Manager::StartLeaderElectionRunnablesLocked() {
  leading_ = true;
  for (auto& e : entries_) {
    if (e->runnable->NeedLeaderElection()) StartLocked(*e, leader_ctx_);
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
    // Probes answer from the start (not ready until the caches synced).
    if (metrics_endpoint_ != nullptr) metrics_endpoint_->Start();
    if (probe_endpoint_ != nullptr) probe_endpoint_->Start();
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
    StartRunnablesLocked();  // the leader elector among them
    if (elector_ == nullptr) {
      leader_ctx_ = runnables_ctx_;
      StartLeaderElectionRunnablesLocked();
    }
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
  {
    // What the controllers recorded reaches the server, within a bound.
    MutexLock lock(&mu_);
    if (broadcaster_ != nullptr) broadcaster_->Shutdown(absl::Seconds(5));
  }
  factory_->Shutdown();
  if (metrics_endpoint_ != nullptr) metrics_endpoint_->Stop();
  if (probe_endpoint_ != nullptr) probe_endpoint_->Stop();
  LOG(INFO) << "manager: stopped";
  return status;
}

}  // namespace kcr::controller
