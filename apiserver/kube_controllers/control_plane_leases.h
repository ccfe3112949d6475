// ControlPlaneLeases: the Leases a cluster's control plane and kubelets
// keep renewed, which `kubectl get leases -A` shows on a cluster:
//
//  * kube-node-lease/<node> for every Node: the kubelet's heartbeat
//    (holderIdentity the node, leaseDurationSeconds 40, renewed every
//    10 s), owned by its Node so that it goes with it.
//  * kube-system/kube-controller-manager and kube-system/kube-scheduler:
//    their leader election (holderIdentity "<host>_<uuid>", 15 s, renewed
//    every 2 s).
//  * kube-system/apiserver-<id>: the API server's identity (labelled
//    apiserver.kubernetes.io/identity=kube-apiserver and
//    kubernetes.io/hostname, 3600 s, renewed every 10 s).
//
// A Lease that is deleted or changed by someone else is put back at its
// next renewal (or at once, on the write's event).
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_CONTROL_PLANE_LEASES_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_CONTROL_PLANE_LEASES_H_

#include <map>
#include <string>

#include "absl/time/time.h"
#include "apiserver/kube_controllers/controller_runner.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

struct ControlPlaneLeasesOptions {
  // The control plane's host name, in holder identities and labels.
  std::string host = "kcr-node";
};

class ControlPlaneLeases : public SyncedController {
 public:
  // `registry` and `clock` must outlive it.
  ControlPlaneLeases(Registry* registry, const Clock* clock,
                     ControlPlaneLeasesOptions options = {});

  absl::Time Sync() override;
  std::string Name() const override { return "control-plane-leases"; }
  // Writes to Nodes and to the Leases of kube-system and kube-node-lease.
  bool Wants(const StoredEvent& event) const override;

  static constexpr absl::Duration kNodeRenewInterval = absl::Seconds(10);
  static constexpr absl::Duration kLeaderRenewInterval = absl::Seconds(2);

 private:
  // Creates or renews `ns`/`name` when it is due, missing or not as it
  // should be; returns when it is next due.
  absl::Time Keep(const ResourceInfo& leases, const std::string& ns,
                  const std::string& name, const std::string& holder,
                  int duration_seconds, absl::Duration interval,
                  const std::string& labels_json, const std::string& owner_json,
                  bool leader, absl::Time now);

  Registry* const registry_;
  const Clock* const clock_;
  const ControlPlaneLeasesOptions options_;
  const std::string leader_holder_;
  const std::string identity_name_;
  const std::string identity_holder_;
  // When each Lease ("ns/name") was last renewed here.
  std::map<std::string, absl::Time> renewed_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_CONTROL_PLANE_LEASES_H_
