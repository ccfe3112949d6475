// DeploymentController: kube-controller-manager's deployment controller
// (pkg/controller/deployment), in process, over the local API server's
// Registry. For every apps/v1 Deployment it:
//   - claims the ReplicaSets of its namespace that its selector matches
//     (adopting orphans, releasing those the selector no longer matches);
//   - finds the new ReplicaSet (the oldest whose template equals the
//     Deployment's, ignoring the pod-template-hash label) or creates it as
//     `<deployment>-<pod-template-hash>`, the hash label added to its
//     labels, selector and template, with a controller ownerReference and
//     the annotations deployment.kubernetes.io/revision (one more than the
//     old ReplicaSets' highest; also written on the Deployment),
//     desired-replicas and max-replicas, plus the Deployment's own
//     annotations (kubectl's change-cause among them);
//   - rolls out: RollingUpdate scales the new ReplicaSet up within
//     spec.replicas + maxSurge and the old ones down while keeping
//     spec.replicas - maxUnavailable available (25% / 25% by default;
//     surge rounds up, unavailability down); Recreate scales the old ones
//     to zero, waits for their pods to go, then scales the new one up;
//   - scales: a change of spec.replicas (or any change while paused) resizes
//     the one active ReplicaSet, or every active one in proportion;
//   - pauses: a paused Deployment does not roll out a changed template; its
//     Progressing condition says DeploymentPaused (DeploymentResumed after);
//   - cleans up: once a rollout completes (or while paused), old
//     ReplicaSets scaled to zero beyond spec.revisionHistoryLimit (default
//     10) are deleted, lowest revision first;
//   - reports status: observedGeneration, replicas, updatedReplicas,
//     readyReplicas, availableReplicas, unavailableReplicas, collisionCount
//     and the Available (MinimumReplicasAvailable /
//     MinimumReplicasUnavailable) and Progressing (NewReplicaSetCreated,
//     FoundNewReplicaSet, ReplicaSetUpdated, NewReplicaSetAvailable,
//     ProgressDeadlineExceeded) conditions — what `kubectl rollout status`
//     waits for.
// Pods are the ReplicaSet controller's (replicaset_controller.h); their
// readiness the simulated node's.
//
// Incremental (incremental_controller.h), keyed by the Deployment's
// "ns/name": a write of a Deployment queues it; a ReplicaSet's write (its
// state before and after) queues the Deployment its controller reference
// names, or, for a ReplicaSet without one, the Deployments of its namespace
// whose selector matches it (kube's getDeploymentsForReplicaSet), looked up
// through kSelectorIndex (SelectorCandidates); a pod's
// deletion queues the Recreate Deployment that controls the pod's
// ReplicaSet (a Recreate rollout waits for the old pods to go). A sync
// reads the ReplicaSets filed under the Deployment's uid and the orphans of
// its namespace (kControllerIndex), and, in a Recreate rollout, the pods
// filed under each old ReplicaSet's uid: never a whole collection. A
// progress deadline or a failed write brings the key back at its due time
// without any write.
//
// Deviation: the pod-template-hash is FNV-32a of the template's canonical
// JSON (object keys sorted), plus collisionCount, encoded as kube encodes
// it; kube hashes the Go struct's printed form, so the values differ from a
// cluster's but are as stable.
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_DEPLOYMENT_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_DEPLOYMENT_CONTROLLER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "api/object.h"
#include "apiserver/kube_controllers/event_recorder.h"
#include "apiserver/kube_controllers/incremental_controller.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

inline constexpr char kPodTemplateHashLabel[] = "pod-template-hash";
inline constexpr char kRevisionAnnotation[] =
    "deployment.kubernetes.io/revision";
inline constexpr char kRevisionHistoryAnnotation[] =
    "deployment.kubernetes.io/revision-history";
inline constexpr char kDesiredReplicasAnnotation[] =
    "deployment.kubernetes.io/desired-replicas";
inline constexpr char kMaxReplicasAnnotation[] =
    "deployment.kubernetes.io/max-replicas";

// The pod-template-hash of a pod template (a PodTemplateSpec JSON object,
// without its own pod-template-hash label) and an optional
// status.collisionCount.
std::string PodTemplateHash(const rapidjson::Value& pod_template,
                            std::optional<int64_t> collision_count);

// Whether two pod templates (null: {}) are equal but for their
// pod-template-hash labels (a labels map with nothing else counts as
// absent): kube's EqualIgnoreHash, how a Deployment finds its new
// ReplicaSet.
bool PodTemplatesEqualIgnoringHash(const rapidjson::Value* a,
                                   const rapidjson::Value* b);

class DeploymentController : public IncrementalController {
 public:
  // `registry` and `clock` must outlive the controller. Adds the
  // controller indexes to the registry's storage.
  explicit DeploymentController(Registry* registry,
                                const Clock* clock = Clock::Real(),
                                IncrementalControllerOptions options = {});

  std::string Name() const override { return "deployment-controller"; }
  // Writes to deployments and replicasets, and pod deletions (a Recreate
  // rollout waits for them).
  bool Wants(const StoredEvent& event) const override;

 protected:
  void OnEvent(const StoredEvent& event) override;
  void EnqueueAll() override;
  // Returns when the Deployment's progress deadline next expires, sooner
  // after a failed write, or InfiniteFuture.
  absl::Time SyncKey(const std::string& key, absl::Time now) override;

 private:
  // Queues the Deployment a ReplicaSet's controller reference names, or
  // those of its namespace that select an orphan.
  void EnqueueForReplicaSet(const api::Object& rs);
  // Queues the Recreate Deployment of a deleted pod's ReplicaSet.
  void EnqueueForDeletedPod(const api::Object& pod);

  // ScalingReplicaSet on the Deployment.
  EventRecorder events_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_DEPLOYMENT_CONTROLLER_H_
