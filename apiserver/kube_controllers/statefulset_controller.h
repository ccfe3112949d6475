// StatefulSetController: kube-controller-manager's statefulset controller
// (pkg/controller/statefulset), in process, over the local API server's
// Registry. For every apps/v1 StatefulSet it:
//   claims pods   the pods of its namespace that its selector matches, that
//                 no other controller owns and whose name is
//                 `<set>-<ordinal>` are adopted (a controller ownerReference
//                 is added); owned pods the selector no longer matches are
//                 released;
//   creates       pod `<set>-<ordinal>` for each ordinal from
//                 spec.ordinals.start to start + replicas - 1: the template
//                 (of the current revision below the partition, of the
//                 update revision from it on) with the labels
//                 controller-revision-hash (the revision's name),
//                 statefulset.kubernetes.io/pod-name and
//                 apps.kubernetes.io/pod-index, spec.hostname the pod's name,
//                 spec.subdomain spec.serviceName, a volume per
//                 volumeClaimTemplate pointing at claim
//                 `<template>-<set>-<ordinal>` (created first, labelled with
//                 the selector's matchLabels), and a controller
//                 ownerReference with blockOwnerDeletion;
//   orders        with podManagementPolicy OrderedReady, one ordinal at a
//                 time: a pod is created only when every lower one is
//                 Running and Ready (and available for minReadySeconds),
//                 and the ordinals past the end are deleted from the
//                 highest, one at a time; with Parallel, all at once (at
//                 most 500 created per pass, the rest on the next);
//   recreates     a pod that is Failed or Succeeded (deleted, then created
//                 again on the next pass);
//   updates       with updateStrategy RollingUpdate, deletes the pod of the
//                 highest ordinal at or above the partition whose revision
//                 is not the update revision, one at a time, once every pod
//                 is available (its replacement is created at the update
//                 revision); with OnDelete, pods take the update revision
//                 only when deleted;
//   retains       claims stay when pods go (persistentVolumeClaimRetention-
//                 Policy Retain), or carry ownerReferences the garbage
//                 collector acts on: whenDeleted Delete makes the set the
//                 claims' controller, whenScaled Delete makes a condemned
//                 ordinal's pod their controller instead;
//   reports       status.observedGeneration, replicas, readyReplicas,
//                 availableReplicas, currentReplicas, updatedReplicas,
//                 currentRevision, updateRevision and collisionCount;
//                 currentRevision becomes updateRevision once every pod is
//                 updated and ready.
// Revisions are ControllerRevisions `<set>-<hash>` owned by the set, holding
// its pod template; the oldest of those no pod uses are deleted past
// spec.revisionHistoryLimit. Events, as kube records them: SuccessfulCreate
// ("create Pod web-0 in StatefulSet web successful", "create Claim
// www-web-0 Pod web-0 in StatefulSet web success"), SuccessfulDelete
// ("delete Pod web-2 in StatefulSet web successful"), SuccessfulUpdate
// (a pod's identity labels or its claims' ownerReferences set right),
// FailedCreate, FailedDelete and FailedUpdate (Warning, "... failed error:
// <the server's message>"). As in kube 1.31 and later, a failed pod's
// replacement records no RecreatingFailedPod Event, only its delete and
// create.
//
// Simplified next to kube: a pod whose identity labels are missing gets
// them, but its hostname, subdomain and volumes (immutable on a pod) are not
// rewritten; the MaxUnavailableStatefulSet feature (alpha) is not
// implemented; claims are never bound (no PersistentVolumes are simulated).
// A set being deleted creates and deletes nothing; its pods go through the
// garbage collector.
//
// Incremental (incremental_controller.h): a write of a StatefulSet queues
// it; a pod's write queues its controller, or, for a pod without one, the
// set its name `<set>-<ordinal>` names (a set adopts only such pods). A
// sync reads the pods filed under the set's uid and the orphans of its
// namespace (kControllerIndex), its claims and revisions by name, never a
// whole collection. The store is current when a key is synced, so kube's
// expectations are not needed.
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_STATEFULSET_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_STATEFULSET_CONTROLLER_H_

#include <string>

#include "absl/time/time.h"
#include "api/object.h"
#include "apiserver/kube_controllers/event_recorder.h"
#include "apiserver/kube_controllers/incremental_controller.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

inline constexpr char kControllerRevisionHashLabel[] =
    "controller-revision-hash";
inline constexpr char kStatefulSetPodNameLabel[] =
    "statefulset.kubernetes.io/pod-name";
inline constexpr char kPodIndexLabel[] = "apps.kubernetes.io/pod-index";

class StatefulSetController : public IncrementalController {
 public:
  // `registry` and `clock` must outlive the controller. Adds the
  // controller indexes to the registry's storage.
  explicit StatefulSetController(Registry* registry,
                                 const Clock* clock = Clock::Real(),
                                 IncrementalControllerOptions options = {});

  std::string Name() const override { return "statefulset-controller"; }
  // Writes to statefulsets and pods.
  bool Wants(const StoredEvent& event) const override;

 protected:
  void OnEvent(const StoredEvent& event) override;
  void EnqueueAll() override;
  // Returns when a ready pod next becomes available (minReadySeconds), or
  // a second on after a failed write.
  absl::Time SyncKey(const std::string& key, absl::Time now) override;

 private:
  // Queues the set a pod's controller reference names, or, for an orphan,
  // the set its name names.
  void EnqueueForPod(const api::Object& pod);

  EventRecorder events_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_STATEFULSET_CONTROLLER_H_
