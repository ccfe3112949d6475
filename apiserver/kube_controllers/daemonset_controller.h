// DaemonSetController: kube-controller-manager's daemonset controller
// (pkg/controller/daemon), in process, over the local API server's
// Registry. For every apps/v1 DaemonSet it:
//   places       one pod on each eligible Node (the Node objects in the
//                store: the simulated ones and any a user adds). A node is
//                eligible (kube's NodeShouldRunDaemonPod) when the
//                template's nodeName is empty or names it, its labels match
//                the template's nodeSelector and required node affinity,
//                and the template (with the tolerations below) tolerates
//                its NoSchedule and NoExecute taints; a pod already there
//                may stay while its NoExecute taints are tolerated. The
//                filters are the scheduler's (scheduler.h);
//   creates      pods named `<ds>-<5 random characters>` from the template,
//                labelled controller-revision-hash and
//                pod-template-generation (the DaemonSet's
//                deprecated.daemonset.template.generation), with a
//                controller ownerReference (blockOwnerDeletion), the
//                tolerations kube adds (node.kubernetes.io/not-ready and
//                unreachable NoExecute; disk-pressure, memory-pressure,
//                pid-pressure and unschedulable NoSchedule; and
//                network-unavailable NoSchedule for hostNetwork pods), and
//                a required node affinity on metadata.name In [node]
//                (kube's ReplaceDaemonSetPodNodeNameNodeAffinity), so that
//                the scheduler binds the pod to its node;
//   deletes      pods on nodes no longer eligible, all but the oldest of
//                several on one node, Succeeded pods, and Failed pods
//                (FailedDaemonPod warning, then a new pod; a node whose
//                pods keep failing waits kube's back-off, 1 s doubling to
//                15 min);
//   claims       orphan pods its selector matches (a controller
//                ownerReference is added) and releases owned pods it no
//                longer matches, as the replicaset controller does;
//   records      its templates as ControllerRevisions (controller_history.h:
//                `<ds>-<hash>`, revision 1, 2, ...; a rollback reuses the
//                old one with the next number), the hash being the pods'
//                controller-revision-hash, and deletes those beyond
//                spec.revisionHistoryLimit that no pod runs (kube's
//                constructHistory and cleanupHistory);
//   updates      on a template change, per spec.updateStrategy:
//                RollingUpdate deletes old pods while at most
//                maxUnavailable (default 1, a number or a percentage of
//                desiredNumberScheduled, rounded up) nodes are unavailable,
//                or with maxSurge starts the new pod beside the old one and
//                deletes the old one when the new is available; OnDelete
//                replaces a pod only when someone deletes it;
//   reports      status.desiredNumberScheduled, currentNumberScheduled,
//                numberMisscheduled, numberReady, numberAvailable (Ready
//                for spec.minReadySeconds), updatedNumberScheduled,
//                numberUnavailable, observedGeneration and collisionCount
//                (raised by a revision name collision);
//   records      SuccessfulCreate "Created pod: x", SuccessfulDelete
//                "Deleted pod: x", FailedCreate, and FailedDaemonPod "Found
//                failed daemon pod ns/x on node n, will try to kill it",
//                from daemonset-controller.
// A DaemonSet being deleted is left alone; its pods go through the garbage
// collector.
//
// Simplified: the pods of a node that is deleted are deleted at once (kube's
// pod garbage collector does it for pods bound to nodes that no longer exist);
// pods are created in one pass rather than in kube's slow-start batches.
//
// Incremental (incremental_controller.h): a write of a DaemonSet queues it;
// a pod's or ControllerRevision's write queues its controller, or, for an
// orphan, the DaemonSets whose selector matches it (kSelectorIndex); a
// Node's creation queues the
// DaemonSets that should run there, its deletion those that may have a pod
// there, and an update of its labels or taints those whose placement on it
// changes (kube's updateNode) — never every pod. A sync reads the pods filed
// under the DaemonSet's uid and the orphans of its namespace
// (kControllerIndex), and the Nodes.
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_DAEMONSET_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_DAEMONSET_CONTROLLER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "apiserver/kube_controllers/event_recorder.h"
#include "apiserver/kube_controllers/incremental_controller.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

// kube's DefaultDaemonSetUniqueLabelKey: the revision hash on each pod.
inline constexpr char kDaemonSetUniqueLabel[] = "controller-revision-hash";
inline constexpr char kPodTemplateGenerationLabel[] = "pod-template-generation";
inline constexpr char kDaemonSetTemplateGenerationAnnotation[] =
    "deprecated.daemonset.template.generation";

// kube's NodeShouldRunDaemonPod: whether a daemon pod of `ds` should be
// started on `node`, and whether one already there may keep running.
struct DaemonPlacement {
  bool should_run = false;
  bool should_continue_running = false;
};
DaemonPlacement NodeShouldRunDaemonPod(const api::Object& node,
                                       const api::Object& ds);

class DaemonSetController : public IncrementalController {
 public:
  // `registry` and `clock` must outlive the controller. Adds the
  // controller indexes to the registry's storage.
  explicit DaemonSetController(Registry* registry,
                               const Clock* clock = Clock::Real(),
                               IncrementalControllerOptions options = {});

  std::string Name() const override { return "daemonset-controller"; }
  // Writes to daemonsets, pods, nodes and controllerrevisions.
  bool Wants(const StoredEvent& event) const override;

 protected:
  void OnEvent(const StoredEvent& event) override;
  void EnqueueAll() override;
  // Returns when a ready pod next becomes available (minReadySeconds), or
  // when a node's failed-pod back-off ends.
  absl::Time SyncKey(const std::string& key, absl::Time now) override;

 private:
  struct SyncState;
  // The pods of `ds` after claiming, by the node each targets.
  std::map<std::string, std::vector<api::ObjectPtr>> ClaimPods(
      const ResourceInfo& pods, const api::Object& ds,
      const std::vector<api::ObjectPtr>& candidates);
  // kube's manage: the nodes that need a pod and the pods to delete.
  void Manage(SyncState* st, absl::Time now);
  // kube's rollingUpdate.
  void RollingUpdate(SyncState* st, absl::Time now);
  // Creates a pod on each of `nodes` and deletes `victims`; true when it
  // wrote anything.
  bool SyncNodes(SyncState* st, const std::vector<std::string>& nodes,
                 const std::vector<api::ObjectPtr>& victims, absl::Time now);
  // Writes the status when it changed; returns when a pod next becomes
  // available.
  absl::Time UpdateStatus(SyncState* st, absl::Time now);
  void EnqueueForPod(const api::Object& pod);
  void OnNodeEvent(const StoredEvent& event);

  EventRecorder events_;
  // Pod writes so far (creates and deletes), to tell whether a step wrote.
  uint64_t writes_ = 0;
  // kube's failedPodsBackoff, by "<ds uid>/<node>".
  struct Backoff {
    absl::Duration delay;
    absl::Time updated;
  };
  absl::flat_hash_map<std::string, Backoff> failed_backoff_;
  // When failed_backoff_ was last rid of expired entries (kube's
  // failedPodsBackoff.GC, every minute).
  absl::Time backoff_gc_ = absl::InfinitePast();
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_DAEMONSET_CONTROLLER_H_
