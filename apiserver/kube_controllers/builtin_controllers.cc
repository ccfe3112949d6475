#include "apiserver/kube_controllers/builtin_controllers.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "apiserver/internal/write_context.h"
#include "apiserver/kube_controllers/control_plane_leases.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {

BuiltinControllers::BuiltinControllers(Registry* registry,
                                       BuiltinControllersOptions options) {
  if (options.garbage_collector) {
    controllers_.push_back(
        std::make_unique<GarbageCollector>(registry, options.clock));
  }
  if (options.namespace_controller) {
    controllers_.push_back(std::make_unique<NamespaceController>(
        registry, options.clock, options.namespace_deletion_grace_period));
  }
  if (options.deployment_controller) {
    controllers_.push_back(
        std::make_unique<DeploymentController>(registry, options.clock));
    // Deployment status is the controller's.
    options.node.simulate_deployments = false;
  }
  if (options.replicaset_controller) {
    controllers_.push_back(
        std::make_unique<ReplicaSetController>(registry, options.clock));
  }
  if (options.replicationcontroller_controller) {
    controllers_.push_back(
        std::make_unique<ReplicationManager>(registry, options.clock));
  }
  if (options.daemonset_controller) {
    controllers_.push_back(
        std::make_unique<DaemonSetController>(registry, options.clock));
  }
  if (options.job_controller) {
    controllers_.push_back(
        std::make_unique<JobController>(registry, options.clock));
  }
  if (options.ttl_after_finished_controller) {
    controllers_.push_back(
        std::make_unique<TtlAfterFinishedController>(registry, options.clock));
  }
  if (options.cronjob_controller) {
    controllers_.push_back(
        std::make_unique<CronJobController>(registry, options.clock));
  }
  if (options.statefulset_controller) {
    controllers_.push_back(
        std::make_unique<StatefulSetController>(registry, options.clock));
  }
  if (options.service_accounts) {
    controllers_.push_back(
        std::make_unique<ServiceAccountsController>(registry));
    furniture_.push_back(controllers_.back().get());
  }
  if (options.root_ca_cert_publisher) {
    controllers_.push_back(
        std::make_unique<RootCaCertPublisher>(registry, options.root_ca_pem));
    furniture_.push_back(controllers_.back().get());
  }
  if (options.kubernetes_service) {
    controllers_.push_back(std::make_unique<KubernetesServiceController>(
        registry, options.kubernetes_service_options));
    furniture_.push_back(controllers_.back().get());
  }
  if (options.endpoints) {
    controllers_.push_back(std::make_unique<EndpointsController>(registry));
  }
  if (options.clusterrole_aggregation) {
    controllers_.push_back(std::make_unique<ClusterRoleAggregationController>(
        registry, options.clock));
  }
  if (options.control_plane_leases) {
    controllers_.push_back(std::make_unique<ControlPlaneLeases>(
        registry, options.clock,
        ControlPlaneLeasesOptions{.host = options.node.node_name}));
  }
  if (options.node_simulator) {
    controllers_.push_back(std::make_unique<NodeSimulator>(
        registry, options.clock, std::move(options.node)));
  }
  for (const auto& c : controllers_) {
    runners_.push_back(std::make_unique<ControllerRunner>(
        registry->storage(), options.clock, c.get(), options.runner));
  }
}

BuiltinControllers::~BuiltinControllers() { Stop(); }

void BuiltinControllers::Start() {
  std::vector<std::string> names;
  for (const auto& c : controllers_) names.push_back(c->Name());
  LOG(INFO) << "built-in controllers starting names="
            << absl::StrJoin(names, ",");
  // The furniture of the namespaces that exist at start is there before
  // the first client comes, as on a cluster that reports ready.
  for (SyncedController* c : furniture_) {
    const std::string identity = BuiltinIdentity(c->Name());
    ScopedWriteContext context({.user_agent = identity});
    c->Sync();
  }
  for (const auto& r : runners_) r->Start();
}

void BuiltinControllers::Stop() {
  // Every pass in progress is told first, so that they end together rather
  // than one after the other.
  for (const auto& c : controllers_) c->RequestStop();
  for (const auto& r : runners_) r->Stop();
}

}  // namespace apiserver
}  // namespace kcr
