// The Recreate strategy (kube's recreate.go): the old ReplicaSets go to
// zero, their pods finish, then the new ReplicaSet scales up.
#include <string_view>
#include <vector>

#include "api/types/field.h"
#include "apiserver/kube_controllers/controller_indexes.h"
#include "apiserver/kube_controllers/deployment_internal.h"
#include "base/status_macros.h"

namespace kcr {
namespace apiserver {
namespace deployment_internal {
namespace {

namespace field = ::kcr::api::field;

}  // namespace

absl::Status DeploymentSync::RolloutRecreate() {
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr new_rs, GetNew(false));
  bool scaled_down = false;
  for (const api::ObjectPtr& rs : Active(OldOf(new_rs))) {
    KCR_ASSIGN_OR_RETURN(bool s, ScaleReplicaSet(rs, 0));
    scaled_down = scaled_down || s;
  }
  if (scaled_down) {
    return SyncRolloutStatus(new_rs == nullptr ? nullptr : Current(new_rs));
  }
  if (OldPodsRunning(new_rs)) {
    return SyncRolloutStatus(new_rs == nullptr ? nullptr : Current(new_rs));
  }
  if (new_rs == nullptr) {
    KCR_ASSIGN_OR_RETURN(new_rs, GetNew(true));
  }
  KCR_RETURN_IF_ERROR(ScaleReplicaSet(Current(new_rs), replicas_).status());
  new_rs = Current(new_rs);
  if (Complete(Calculate(new_rs))) KCR_RETURN_IF_ERROR(Cleanup(new_rs));
  return SyncRolloutStatus(new_rs);
}

bool DeploymentSync::OldPodsRunning(const api::ObjectPtr& new_rs) const {
  std::vector<api::ObjectPtr> old = OldOf(new_rs);
  if (SumStatus(old, "replicas") > 0) return true;
  // The pods each old ReplicaSet controls (kube's getPodMapForDeployment).
  for (const api::ObjectPtr& rs : old) {
    for (const api::ObjectPtr& pod : registry_->storage()->ByIndex(
             pods_.StorageKey(), kControllerIndex, rs->uid())) {
      const std::string_view phase =
          field::String(field::Object(&pod->json(), "status"), "phase");
      if (phase != "Succeeded" && phase != "Failed") return true;
    }
  }
  return false;
}

}  // namespace deployment_internal
}  // namespace apiserver
}  // namespace kcr
