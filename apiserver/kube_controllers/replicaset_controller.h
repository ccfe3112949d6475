// ReplicaSetController: kube-controller-manager's replicaset controller
// (pkg/controller/replicaset), in process, over the local API server's
// Registry. For every apps/v1 ReplicaSet it:
//   claims pods  the pods of its namespace that its selector matches and no
//                other controller owns are adopted (a controller
//                ownerReference is added); owned pods the selector no longer
//                matches are released;
//   manages      creates pods from spec.template (named `<rs>-<5 random
//                characters>`, the template's labels and annotations, a
//                controller ownerReference with blockOwnerDeletion) until
//                spec.replicas active pods exist (at most 500 per pass), or
//                deletes the surplus: unscheduled before scheduled, Pending
//                before Running, not ready before ready, ready for less
//                time first, newer first;
//   reports      status.replicas (active pods: not being deleted, not
//                Succeeded or Failed), fullyLabeledReplicas (pods carrying
//                every template label), readyReplicas, availableReplicas
//                (Ready for at least spec.minReadySeconds) and
//                observedGeneration.
// A ReplicaSet being deleted creates and deletes nothing; its pods go
// through the garbage collector.
//
// Incremental (incremental_controller.h): a write of a ReplicaSet queues
// it; a pod's write queues its controller, or, for a pod without one, the
// ReplicaSets whose selector matches it (kube's getPodReplicaSets), found
// through kSelectorIndex. A sync reads the pods filed under the ReplicaSet's
// uid and the orphans of its namespace (kControllerIndex), never every pod. The
// store is current when a key is synced, so kube's "expectations" (which
// stop a controller from acting on a stale informer cache) are not needed.
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_REPLICASET_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_REPLICASET_CONTROLLER_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/object.h"
#include "apiserver/kube_controllers/event_recorder.h"
#include "apiserver/kube_controllers/incremental_controller.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

class ReplicaSetController : public IncrementalController {
 public:
  // `registry` and `clock` must outlive the controller. Adds the
  // controller indexes to the registry's storage.
  explicit ReplicaSetController(Registry* registry,
                                const Clock* clock = Clock::Real(),
                                IncrementalControllerOptions options = {});

  std::string Name() const override { return "replicaset-controller"; }
  // Writes to replicasets and pods.
  bool Wants(const StoredEvent& event) const override;

 protected:
  void OnEvent(const StoredEvent& event) override;
  void EnqueueAll() override;
  // Returns when a ready pod next becomes available (minReadySeconds).
  absl::Time SyncKey(const std::string& key, absl::Time now) override;

 private:
  absl::Time SyncReplicaSet(const ResourceInfo& replicasets,
                            const ResourceInfo& pods, const api::ObjectPtr& rs,
                            const std::vector<api::ObjectPtr>& candidates,
                            absl::Time now);
  // Queues the ReplicaSet a pod's controller reference names, or those of
  // its namespace that select an orphan.
  void EnqueueForPod(const api::Object& pod);

  // SuccessfulCreate, SuccessfulDelete and FailedCreate on the ReplicaSet.
  EventRecorder events_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_REPLICASET_CONTROLLER_H_
