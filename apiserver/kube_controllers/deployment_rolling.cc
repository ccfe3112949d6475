// The RollingUpdate strategy (kube's rolling.go): the new ReplicaSet grows
// within spec.replicas + maxSurge, the old ones shrink while
// spec.replicas - maxUnavailable stay available, unhealthy replicas first.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "apiserver/kube_controllers/deployment_internal.h"
#include "base/status_macros.h"

namespace kcr {
namespace apiserver {
namespace deployment_internal {

absl::Status DeploymentSync::RolloutRolling() {
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr new_rs, GetNew(true));
  // reconcileNewReplicaSet.
  bool scaled = false;
  const int64_t current = SpecReplicas(*new_rs);
  if (current > replicas_) {
    KCR_ASSIGN_OR_RETURN(scaled, ScaleReplicaSet(new_rs, replicas_));
  } else if (current < replicas_) {
    const int64_t all = SumSpec(rss_);
    const int64_t max_total = replicas_ + max_surge_;
    int64_t want = current;
    if (all < max_total) {
      want = current + std::min(max_total - all, replicas_ - current);
    }
    KCR_ASSIGN_OR_RETURN(scaled, ScaleReplicaSet(new_rs, want));
  }
  new_rs = Current(new_rs);
  if (scaled) return SyncRolloutStatus(new_rs);
  KCR_ASSIGN_OR_RETURN(bool scaled_down, ReconcileOld(new_rs));
  new_rs = Current(new_rs);
  if (scaled_down) return SyncRolloutStatus(new_rs);
  if (Complete(Calculate(new_rs))) KCR_RETURN_IF_ERROR(Cleanup(new_rs));
  return SyncRolloutStatus(new_rs);
}

absl::StatusOr<bool> DeploymentSync::ReconcileOld(
    const api::ObjectPtr& new_rs) {
  std::vector<api::ObjectPtr> old = OldOf(new_rs);
  if (SumSpec(old) == 0) return false;
  const int64_t min_available = replicas_ - max_unavailable_;
  const int64_t new_unavailable =
      SpecReplicas(*new_rs) - StatusCount(*new_rs, "availableReplicas");
  const int64_t max_scaled_down =
      SumSpec(rss_) - min_available - new_unavailable;
  if (max_scaled_down <= 0) return false;
  // cleanupUnhealthyReplicas (oldest first).
  int64_t cleaned = 0;
  for (const api::ObjectPtr& rs : Active(old)) {
    if (cleaned >= max_scaled_down) break;
    const int64_t unhealthy =
        SpecReplicas(*rs) - StatusCount(*rs, "availableReplicas");
    if (unhealthy <= 0) continue;
    const int64_t down = std::min(max_scaled_down - cleaned, unhealthy);
    KCR_RETURN_IF_ERROR(ScaleReplicaSet(rs, SpecReplicas(*rs) - down).status());
    cleaned += down;
  }
  // scaleDownOldReplicaSetsForRollingUpdate.
  const int64_t available = SumStatus(rss_, "availableReplicas");
  int64_t scaled = 0;
  if (available > min_available) {
    const int64_t total = available - min_available;
    for (const api::ObjectPtr& rs : OldOf(new_rs)) {
      if (scaled >= total) break;
      if (SpecReplicas(*rs) == 0) continue;
      const int64_t down = std::min(SpecReplicas(*rs), total - scaled);
      KCR_RETURN_IF_ERROR(
          ScaleReplicaSet(rs, SpecReplicas(*rs) - down).status());
      scaled += down;
    }
  }
  return cleaned + scaled > 0;
}

}  // namespace deployment_internal
}  // namespace apiserver
}  // namespace kcr
