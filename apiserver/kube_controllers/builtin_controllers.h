// BuiltinControllers: the controllers a cluster's kube-controller-manager
// (and kubelet, and kube-apiserver itself) would run, started beside the
// local API server: the garbage collector (garbage_collector.h), the
// namespace controller (namespace_controller.h), the deployment,
// replicaset and replicationcontroller controllers (deployment_controller.h,
// replicaset_controller.h), the job, ttl-after-finished and cronjob
// controllers (job_controller.h, ttl_after_finished_controller.h,
// cronjob_controller.h), the statefulset controller
// (statefulset_controller.h), the daemonset controller
// (daemonset_controller.h), the default ServiceAccount and kube-root-ca.crt
// of every namespace (serviceaccounts_controller.h), the default/kubernetes
// Service (kubernetes_service_controller.h), the Endpoints and
// EndpointSlices of Services (endpoints_controller.h) and the simulated node
// (node_simulator.h), each on its own ControllerRunner thread and each
// switchable off. With the deployment controller on, the simulated node
// leaves Deployment status to it (NodeSimulatorOptions::simulate_deployments
// is ignored).
//
// Thread safety: construct, Start and Stop from one thread; the controllers
// then run on their own threads until Stop (or destruction).
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_BUILTIN_CONTROLLERS_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_BUILTIN_CONTROLLERS_H_

#include <memory>
#include <vector>

#include "apiserver/kube_controllers/clusterrole_aggregation_controller.h"
#include "apiserver/kube_controllers/controller_runner.h"
#include "apiserver/kube_controllers/cronjob_controller.h"
#include "apiserver/kube_controllers/daemonset_controller.h"
#include "apiserver/kube_controllers/deployment_controller.h"
#include "apiserver/kube_controllers/endpoints_controller.h"
#include "apiserver/kube_controllers/garbage_collector.h"
#include "apiserver/kube_controllers/job_controller.h"
#include "apiserver/kube_controllers/kubernetes_service_controller.h"
#include "apiserver/kube_controllers/namespace_controller.h"
#include "apiserver/kube_controllers/node_simulator.h"
#include "apiserver/kube_controllers/replicaset_controller.h"
#include "apiserver/kube_controllers/serviceaccounts_controller.h"
#include "apiserver/kube_controllers/statefulset_controller.h"
#include "apiserver/kube_controllers/ttl_after_finished_controller.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

struct BuiltinControllersOptions {
  bool garbage_collector = true;
  bool namespace_controller = true;
  bool deployment_controller = true;
  bool replicaset_controller = true;
  bool replicationcontroller_controller = true;
  bool daemonset_controller = true;
  // Jobs (job_controller.h) and their deletion after
  // ttlSecondsAfterFinished (ttl_after_finished_controller.h).
  bool job_controller = true;
  bool ttl_after_finished_controller = true;
  // CronJobs (cronjob_controller.h).
  bool cronjob_controller = true;
  // StatefulSets' pods, claims and revisions (statefulset_controller.h).
  bool statefulset_controller = true;
  bool node_simulator = true;
  // The default ServiceAccount and the kube-root-ca.crt ConfigMap (with
  // `root_ca_pem`) in every namespace (serviceaccounts_controller.h).
  bool service_accounts = true;
  bool root_ca_cert_publisher = true;
  std::string root_ca_pem;
  // default/kubernetes and its endpoints (kubernetes_service_controller.h);
  // ApiServer fills in its address and port.
  bool kubernetes_service = true;
  KubernetesServiceOptions kubernetes_service_options;
  // Endpoints and EndpointSlices of Services (endpoints_controller.h).
  bool endpoints = true;
  // The rules of aggregated ClusterRoles
  // (clusterrole_aggregation_controller.h); ApiServer runs it with RBAC.
  bool clusterrole_aggregation = false;
  // The kubelets' node Leases and the control plane's Leases in
  // kube-system (control_plane_leases.h).
  bool control_plane_leases = true;
  // How long the namespace controller leaves a Terminating namespace's
  // contents alone (kube-controller-manager's 5 s).
  absl::Duration namespace_deletion_grace_period =
      NamespaceController::kDefaultDeletionGracePeriod;
  NodeSimulatorOptions node;
  ControllerRunnerOptions runner;
  // Time for simulated stages and condition timestamps; not owned.
  const Clock* clock = Clock::Real();
};

class BuiltinControllers {
 public:
  // `registry` (and its storage) must outlive this object.
  BuiltinControllers(Registry* registry, BuiltinControllersOptions options);
  ~BuiltinControllers();  // Stop()s
  BuiltinControllers(const BuiltinControllers&) = delete;
  BuiltinControllers& operator=(const BuiltinControllers&) = delete;

  // Logs the names of the controllers it starts (for operators, and for
  // tests of a server process to see which are switched off). The default
  // ServiceAccount, kube-root-ca.crt and default/kubernetes of the
  // namespaces that exist are written before it returns.
  void Start();
  // Stops every controller thread. Idempotent.
  void Stop();

 private:
  std::vector<std::unique_ptr<SyncedController>> controllers_;
  // Those of controllers_ whose first pass Start runs itself.
  std::vector<SyncedController*> furniture_;
  std::vector<std::unique_ptr<ControllerRunner>> runners_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_BUILTIN_CONTROLLERS_H_
