// ClusterRoleAggregationController: kube-controller-manager's
// clusterrole-aggregation controller. A ClusterRole with an aggregationRule
// (admin, edit, view, or a user's) gets as its rules the rules of every
// other ClusterRole whose labels one of its clusterRoleSelectors matches,
// in name order, each rule once. Incremental: a write to a ClusterRole
// queues only the aggregated ClusterRoles, and a pass writes only those
// whose rules changed.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_CLUSTERROLE_AGGREGATION_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_CLUSTERROLE_AGGREGATION_CONTROLLER_H_

#include <set>
#include <string>

#include "apiserver/kube_controllers/incremental_controller.h"

namespace kcr {
namespace apiserver {

class ClusterRoleAggregationController : public IncrementalController {
 public:
  // `registry` and `clock` must outlive the controller.
  explicit ClusterRoleAggregationController(
      Registry* registry, const Clock* clock = Clock::Real(),
      IncrementalControllerOptions options = {});

  std::string Name() const override { return "clusterrole-aggregation"; }
  // Writes to clusterroles.
  bool Wants(const StoredEvent& event) const override;

 protected:
  void OnEvent(const StoredEvent& event) override;
  void EnqueueAll() override;
  absl::Time SyncKey(const std::string& key, absl::Time now) override;

 private:
  const std::string collection_;
  // The ClusterRoles with an aggregationRule (runner thread only).
  std::set<std::string> aggregated_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_CLUSTERROLE_AGGREGATION_CONTROLLER_H_
