// TtlAfterFinishedController: kube-controller-manager's
// ttl-after-finished controller (pkg/controller/ttlafterfinished): a
// batch/v1 Job with spec.ttlSecondsAfterFinished is deleted that long after
// it finished (the lastTransitionTime of its Complete or Failed condition),
// on the injected clock, with foreground propagation so that its pods go
// first, and the Job's uid as precondition.
//
// Incremental (incremental_controller.h): a Job's write queues it; a
// finished Job not yet due asks for a pass when it is.
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_TTL_AFTER_FINISHED_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_TTL_AFTER_FINISHED_CONTROLLER_H_

#include <string>

#include "absl/time/time.h"
#include "apiserver/kube_controllers/incremental_controller.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

class TtlAfterFinishedController : public IncrementalController {
 public:
  // `registry` and `clock` must outlive the controller.
  explicit TtlAfterFinishedController(
      Registry* registry, const Clock* clock = Clock::Real(),
      IncrementalControllerOptions options = {});

  std::string Name() const override { return "ttl-after-finished-controller"; }
  // Writes to jobs.
  bool Wants(const StoredEvent& event) const override;

 protected:
  void OnEvent(const StoredEvent& event) override;
  void EnqueueAll() override;
  // Returns when the Job is due for deletion.
  absl::Time SyncKey(const std::string& key, absl::Time now) override;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_TTL_AFTER_FINISHED_CONTROLLER_H_
