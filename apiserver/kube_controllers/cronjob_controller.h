// CronJobController: kube-controller-manager's cronjob controller
// (pkg/controller/cronjob, the v2 controller), in process, over the local
// API server's Registry. For every batch/v1 CronJob it:
//   schedules   reads spec.schedule (apiserver/internal/cron_schedule.h) in
//               spec.timeZone (or the TZ=/CRON_TZ= prefix, or UTC), and
//               when a scheduled time has passed creates the Job
//               `<cronjob>-<scheduled time in minutes since the epoch>`
//               from spec.jobTemplate: its labels and annotations, the
//               annotation batch.kubernetes.io/cronjob-scheduled-timestamp
//               (RFC 3339 in the zone), a controller ownerReference with
//               blockOwnerDeletion; only the most recent missed time runs,
//               and more than 100 missed ones record TooManyMissedTimes;
//               a time older than startingDeadlineSeconds is skipped
//               (MissSchedule);
//   concurrency Allow runs Jobs side by side, Forbid skips a time while a
//               Job is active (JobAlreadyActive), Replace deletes the active
//               Jobs (background propagation) first;
//   tracks      status.active (object references of its running Jobs),
//               lastScheduleTime and lastSuccessfulTime; a finished Job
//               leaves status.active (SawCompletedJob), one gone missing too
//               (MissingJob), an unfinished Job it owns but does not list is
//               reported (UnexpectedJob);
//   prunes      finished Jobs beyond successfulJobsHistoryLimit (3) and
//               failedJobsHistoryLimit (1), oldest start first
//               (SuccessfulDelete);
// with kube's Events (SuccessfulCreate "Created job x", FailedCreate,
// SuccessfulDelete "Deleted job x", SawCompletedJob, MissingJob,
// UnexpectedJob, JobAlreadyActive, MissSchedule, TooManyMissedTimes,
// UnparseableSchedule, UnknownTimeZone). spec.suspend stops scheduling, not
// the tracking. A schedule without a zone is read in UTC (the zone a
// kube-controller-manager usually runs in).
//
// A CronJob's Jobs are found through kControllerIndex (its uid). Each
// CronJob asks for a pass at its next scheduled time (EnqueueAt), so an
// idle CronJob costs nothing between its times; a write of the CronJob or
// of one of its Jobs queues it.
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_CRONJOB_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_CRONJOB_CONTROLLER_H_

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

inline constexpr char kCronJobScheduledTimestampAnnotation[] =
    "batch.kubernetes.io/cronjob-scheduled-timestamp";

class CronJobController : public IncrementalController {
 public:
  // `registry` and `clock` must outlive the controller. Adds the
  // controller indexes to the registry's storage.
  explicit CronJobController(Registry* registry,
                             const Clock* clock = Clock::Real(),
                             IncrementalControllerOptions options = {});

  std::string Name() const override { return "cronjob-controller"; }
  // Writes to cronjobs and jobs.
  bool Wants(const StoredEvent& event) const override;

 protected:
  void OnEvent(const StoredEvent& event) override;
  void EnqueueAll() override;
  // Returns the next scheduled time (plus kube's 100ms).
  absl::Time SyncKey(const std::string& key, absl::Time now) override;

 private:
  absl::Time SyncCronJob(const ResourceInfo& cronjobs, const ResourceInfo& jobs,
                         const api::ObjectPtr& cronjob,
                         const std::vector<api::ObjectPtr>& owned,
                         absl::Time now);
  // Deletes `job` in the background and records SuccessfulDelete.
  bool DeleteJob(const ResourceInfo& jobs, const api::Object& cronjob,
                 const api::Object& job, absl::Time now);

  EventRecorder events_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_CRONJOB_CONTROLLER_H_
