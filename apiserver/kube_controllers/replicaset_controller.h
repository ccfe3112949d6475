// ReplicaSetController: kube-controller-manager's replicaset controller
// (pkg/controller/replicaset), in process, over the local API server's
// Registry; ReplicationManager below is the same controller for v1
// ReplicationControllers, as kube's pkg/controller/replication is. For
// every apps/v1 ReplicaSet (v1 ReplicationController) it:
//   claims pods  the pods of its namespace that its selector (a
//                ReplicationController's map of labels) matches and no
//                other controller owns are adopted (a controller
//                ownerReference is added); owned pods the selector no longer
//                matches are released;
//   manages      creates pods from spec.template (named `<rs>-<5 random
//                characters>`, the template's labels and annotations, a
//                controller ownerReference with blockOwnerDeletion, of
//                apps/v1 ReplicaSet or v1 ReplicationController) until
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
// through kSelectorIndex. Events (SuccessfulCreate "Created pod: x",
// SuccessfulDelete "Deleted pod: x", FailedCreate) come from
// replicaset-controller or replication-controller, as kube records them. A
// sync reads the pods filed under the ReplicaSet's
// uid and the orphans of its namespace (kControllerIndex), never every pod. The
// store is current when a key is synced, so kube's "expectations" (which
// stop a controller from acting on a stale informer cache) are not needed.
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_REPLICASET_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_REPLICASET_CONTROLLER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "api/selector/label_selector.h"
#include "apiserver/kube_controllers/event_recorder.h"
#include "apiserver/kube_controllers/incremental_controller.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

// The kind a ReplicaSetController manages.
struct ReplicatedKind {
  std::string group;     // "apps" or ""
  std::string resource;  // "replicasets" or "replicationcontrollers"
  std::string api_version;
  std::string kind;
  // The controller's name in kube-controller-manager, and the component
  // its Events come from.
  std::string controller_name;
  std::string event_component;
  // spec.selector is a map of labels (ReplicationController), not a
  // LabelSelector.
  bool map_selector = false;

  static ReplicatedKind ReplicaSets();
  static ReplicatedKind ReplicationControllers();
};

class ReplicaSetController : public IncrementalController {
 public:
  // `registry` and `clock` must outlive the controller. Adds the
  // controller indexes to the registry's storage.
  explicit ReplicaSetController(
      Registry* registry, const Clock* clock = Clock::Real(),
      IncrementalControllerOptions options = {},
      ReplicatedKind kind = ReplicatedKind::ReplicaSets());

  std::string Name() const override { return kind_.controller_name; }
  // Writes to the managed kind and to pods.
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
  // The owner's spec.selector as a LabelSelector.
  absl::StatusOr<api::LabelSelector> SelectorOf(const api::Object& owner) const;
  // A controller ownerReference to `owner`.
  api::OwnerReferenceView ControllerRef(const api::Object& owner) const;

  const ReplicatedKind kind_;
  // The storage collection of the managed kind ("apps/replicasets").
  const std::string collection_;
  // SuccessfulCreate, SuccessfulDelete and FailedCreate on the owner.
  EventRecorder events_;
};

// kube's replication manager: the controller above for v1
// ReplicationControllers.
class ReplicationManager : public ReplicaSetController {
 public:
  explicit ReplicationManager(Registry* registry,
                              const Clock* clock = Clock::Real(),
                              IncrementalControllerOptions options = {})
      : ReplicaSetController(registry, clock, options,
                             ReplicatedKind::ReplicationControllers()) {}
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_REPLICASET_CONTROLLER_H_
