// JobController: kube-controller-manager's job controller
// (pkg/controller/job), in process, over the local API server's Registry.
// For every batch/v1 Job it:
//   creates pods  from spec.template, named `<job>-<5 random characters>`
//                 (Indexed: `<job>-<index>-<5 random>`, with the annotation
//                 and label batch.kubernetes.io/job-completion-index, the
//                 hostname `<job>-<index>` and the env JOB_COMPLETION_INDEX
//                 in every container), carrying the template's labels
//                 (the strategy adds batch.kubernetes.io/controller-uid,
//                 batch.kubernetes.io/job-name, controller-uid and
//                 job-name), a controller ownerReference with
//                 blockOwnerDeletion and the batch.kubernetes.io/job-tracking
//                 finalizer; up to spec.parallelism at once, no more than
//                 the completions left (completions unset: until one pod
//                 succeeds, work-queue semantics); surplus pods are deleted;
//   counts pods   a finished pod (Succeeded, Failed, or deleted before it
//                 succeeded) goes to status.uncountedTerminatedPods, loses
//                 its finalizer, then moves to status.succeeded or failed
//                 (and, Indexed, its index to completedIndexes), as kube
//                 tracks pods with finalizers;
//   backs off     a failed pod is replaced after kube's pod failure back-off
//                 (10s, doubling per failure since the last success, at most
//                 6m) on the injected clock;
//   finishes      when failures exceed spec.backoffLimit (FailureTarget,
//                 then Failed, reason BackoffLimitExceeded), when the Job
//                 ran longer than spec.activeDeadlineSeconds since startTime
//                 (DeadlineExceeded), with backoffLimitPerIndex when an
//                 index failed more often than that (the index goes to
//                 status.failedIndexes, its pods carry
//                 batch.kubernetes.io/job-index-failure-count) and more
//                 than maxFailedIndexes did (MaxFailedIndexesExceeded) or
//                 every index is done (FailedIndexes), or when the
//                 completions are reached
//                 (SuccessCriteriaMet, then Complete, reason
//                 CompletionsReached, and completionTime): the interim
//                 condition first, active pods deleted, the terminal one
//                 once no pod is left running or uncounted, as 1.33 does;
//   suspends      spec.suspend deletes the active pods and sets the
//                 Suspended condition (JobSuspended); resuming sets it False
//                 (JobResumed) and restarts startTime;
//   reports       status.startTime, active, ready, terminating, succeeded,
//                 failed, completedIndexes, uncountedTerminatedPods and the
//                 conditions, with kube's Events (SuccessfulCreate,
//                 SuccessfulDelete, FailedCreate, Completed,
//                 BackoffLimitExceeded, DeadlineExceeded, Suspended,
//                 Resumed).
// Not simulated: podFailurePolicy and successPolicy (stored, ignored), a
// back-off per index (the back-off is the Job's), podReplacementPolicy
// Failed (replacements never wait for terminating
// pods), and container restarts of OnFailure pods counted as failures. A
// pod deleted while it runs counts as failed (kube's isPodFailed),
// including those a suspension deletes. Orphan pods the Job's selector
// matches are adopted, owned pods it no longer matches released, as kube's
// ClaimPods does.
//
// A Job's pods are found through kControllerIndex (its uid and its
// namespace's orphans), never by a scan. Incremental
// (incremental_controller.h): a Job's write queues it, a pod's write
// queues its controlling Job, an orphan's the Jobs that select it
// (kSelectorIndex); a deadline or back-off asks for a pass when it is due. A
// pod left with the tracking finalizer after its Job is gone is freed on its
// own key ("pod:<ns>/<name>").
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_JOB_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_JOB_CONTROLLER_H_

#include <cstdint>
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

inline constexpr char kJobTrackingFinalizer[] =
    "batch.kubernetes.io/job-tracking";
inline constexpr char kJobCompletionIndexAnnotation[] =
    "batch.kubernetes.io/job-completion-index";

class JobController : public IncrementalController {
 public:
  // kube's DefaultJobPodFailureBackOff and its cap.
  static constexpr absl::Duration kPodFailureBackOff = absl::Seconds(10);
  static constexpr absl::Duration kMaxPodFailureBackOff = absl::Minutes(6);

  // `registry` and `clock` must outlive the controller. Adds the
  // controller indexes to the registry's storage.
  explicit JobController(Registry* registry, const Clock* clock = Clock::Real(),
                         IncrementalControllerOptions options = {});

  std::string Name() const override { return "job-controller"; }
  // Writes to jobs and pods.
  bool Wants(const StoredEvent& event) const override;

 protected:
  void OnEvent(const StoredEvent& event) override;
  void EnqueueAll() override;
  // Returns when a deadline or a back-off is next due.
  absl::Time SyncKey(const std::string& key, absl::Time now) override;

 private:
  // Failures since the last success, and when the last one happened
  // (kube's backoffRecord), per Job key.
  struct BackoffRecord {
    int64_t failures = 0;
    absl::Time last_failure = absl::InfinitePast();
  };

  absl::Time SyncJob(const ResourceInfo& jobs, const ResourceInfo& pods,
                     const api::ObjectPtr& job,
                     std::vector<api::ObjectPtr> owned, absl::Time now);
  // The Job's pods (kube's ClaimPods): those filed under its uid that its
  // selector still matches, plus the orphans of its namespace it matches,
  // adopted (controller ownerReference and the tracking finalizer); owned
  // pods it no longer matches are released.
  std::vector<api::ObjectPtr> ClaimPods(const ResourceInfo& pods,
                                        const api::Object& job);
  // Queues the Jobs whose selector matches `pod`, an orphan.
  void EnqueueSelecting(const api::Object& pod);
  // Drops the tracking finalizer of a pod whose Job is gone.
  void FreeOrphan(const ResourceInfo& pods, const std::string& key);
  // Deletes `pod` and records SuccessfulDelete; true when it went.
  bool DeletePod(const ResourceInfo& pods, const api::Object& job,
                 const api::Object& pod, absl::Time now);

  absl::flat_hash_map<std::string, BackoffRecord> backoff_;
  EventRecorder events_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_JOB_CONTROLLER_H_
