// What the pieces of the deployment controller share (deployment_*.cc):
// DeploymentSync, one pass over one Deployment, whose steps live in one
// file per concept as kube's pkg/controller/deployment splits them; the
// Deployment status it computes; and the helpers over ReplicaSets
// (deployment_util.cc).
//
// Internal to DeploymentController (deployment_controller.h).
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_DEPLOYMENT_INTERNAL_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_DEPLOYMENT_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "apiserver/kube_controllers/deployment_controller.h"
#include "apiserver/kube_controllers/event_recorder.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace deployment_internal {

using Allocator = rapidjson::MemoryPoolAllocator<>;

// After a failed write the deployment is looked at again this soon (the
// runner also comes back on the next change or resync).
inline constexpr absl::Duration kRetryAfter = absl::Seconds(1);

// Condition types and reasons (pkg/controller/deployment/util).
inline constexpr char kAvailable[] = "Available";
inline constexpr char kProgressing[] = "Progressing";
inline constexpr char kNewRSAvailableReason[] = "NewReplicaSetAvailable";
inline constexpr char kTimedOutReason[] = "ProgressDeadlineExceeded";
inline constexpr char kPausedReason[] = "DeploymentPaused";
inline constexpr char kResumedReason[] = "DeploymentResumed";

// --- Helpers over Deployments and ReplicaSets (deployment_util.cc) ---

// A decimal integer.
bool ParseInt(std::string_view s, int64_t* v);

// intstr.GetScaledValueFromIntOrPercent.
absl::StatusOr<int64_t> ScaledValue(const rapidjson::Value* v, int64_t total,
                                    bool round_up);

// spec.replicas (1 when unset).
int64_t SpecReplicas(const api::Object& o);

// status.<key> (0 when unset).
int64_t StatusCount(const api::Object& o, std::string_view key);

// spec.template, or null.
const rapidjson::Value* TemplateOf(const api::Object& o);

// Creation order: the older first, by name among equals.
bool CreatedBefore(const api::ObjectPtr& a, const api::ObjectPtr& b);

// The sum of the ReplicaSets' spec.replicas.
int64_t SumSpec(const std::vector<api::ObjectPtr>& rss);

// The sum of the ReplicaSets' status.<key>.
int64_t SumStatus(const std::vector<api::ObjectPtr>& rss, std::string_view key);

// The ReplicaSets with spec.replicas above zero.
std::vector<api::ObjectPtr> Active(const std::vector<api::ObjectPtr>& rss);

// --- Deployment status (deployment_progress.cc) ---

// A Deployment condition as stored.
struct Condition {
  std::string type, status, last_update, last_transition, reason, message;
};

// A Deployment's status as stored and computed.
struct Status {
  int64_t observed_generation = 0;
  int64_t replicas = 0;
  int64_t updated = 0;
  int64_t ready = 0;
  int64_t available = 0;
  int64_t unavailable = 0;
  std::optional<int64_t> collision_count;
  std::vector<Condition> conditions;

  const Condition* Get(std::string_view type) const {
    for (const Condition& c : conditions) {
      if (c.type == type) return &c;
    }
    return nullptr;
  }
  void Remove(std::string_view type) {
    conditions.erase(
        std::remove_if(conditions.begin(), conditions.end(),
                       [&](const Condition& c) { return c.type == type; }),
        conditions.end());
  }
  // util.SetDeploymentCondition: nothing changes when status and reason
  // are the same; lastTransitionTime stays while the status does.
  void Set(Condition c) {
    const Condition* cur = Get(c.type);
    if (cur != nullptr && cur->status == c.status && cur->reason == c.reason) {
      return;
    }
    if (cur != nullptr && cur->status == c.status) {
      c.last_transition = cur->last_transition;
    }
    Remove(c.type);
    conditions.push_back(std::move(c));
  }
};

// The stored status of `d`.
Status ParseStatus(const api::Object& d);

// `s` as the status JSON Go writes (zero counts left out).
rapidjson::Value StatusJson(const Status& s, Allocator& a);

// One pass over one Deployment: kube's syncDeployment and what it calls.
class DeploymentSync {
 public:
  // `events` records ScalingReplicaSet on the Deployment.
  DeploymentSync(Registry* registry, EventRecorder* events,
                 const ResourceInfo& deployments,
                 const ResourceInfo& replicasets, const ResourceInfo& pods,
                 api::ObjectPtr d, absl::Time now);

  // Returns when the deployment next needs a pass. `candidates`: the
  // ReplicaSets the Deployment controls and the orphans of its namespace
  // (any others are left alone).
  absl::Time Run(const std::vector<api::ObjectPtr>& candidates);

 private:
  // --- The pass and the ReplicaSets it claims (deployment_controller.cc) ---

  // syncDeployment: the steps of Run; an error makes Run come back after
  // kRetryAfter.
  absl::Status RunImpl(const std::vector<api::ObjectPtr>& candidates);

  // Reads the spec into the fields below, with maxSurge and
  // maxUnavailable resolved (util.ResolveFenceposts).
  absl::Status ReadSpec();

  // ClaimReplicaSets: adopt orphans the selector matches, release owned
  // ones it does not.
  absl::Status Claim(const api::LabelSelector& selector,
                     const std::vector<api::ObjectPtr>& candidates);

  // The controller ownerReference to the Deployment.
  api::OwnerReferenceView OwnerRef() const;

  // --- The new ReplicaSet and the revisions (deployment_history.cc) ---

  // The oldest ReplicaSet whose template is the Deployment's, or null.
  api::ObjectPtr FindNew() const;

  // Copies the Deployment's annotations onto `b`; true when one changed.
  bool CopyDeploymentAnnotations(api::ObjectBuilder* b) const;

  // util.SetReplicasAnnotations; true when one changed.
  bool SetReplicasAnnotations(api::ObjectBuilder* b) const;

  // util.SetNewReplicaSetAnnotations; true when one changed.
  bool SetNewReplicaSetAnnotations(api::ObjectBuilder* b, int64_t new_revision,
                                   bool exists) const;

  // getNewReplicaSet: the new ReplicaSet with its revision brought up to
  // date, created when `create` and missing; null otherwise.
  absl::StatusOr<api::ObjectPtr> GetNew(bool create);

  // cleanupDeployment: old ReplicaSets beyond revisionHistoryLimit.
  absl::Status Cleanup(const api::ObjectPtr& new_rs);

  // --- Scaling (deployment_sync.cc) ---

  // The ReplicaSets but `new_rs`.
  std::vector<api::ObjectPtr> OldOf(const api::ObjectPtr& new_rs) const;

  // Puts `rs` in place of its earlier state (appended when new).
  void Replace(const api::ObjectPtr& rs);

  // `rs` as last written.
  api::ObjectPtr Current(const api::ObjectPtr& rs) const;

  // scaleReplicaSet: size and replica annotations; true when resized.
  absl::StatusOr<bool> ScaleReplicaSet(const api::ObjectPtr& rs, int64_t size);

  // isScalingEvent: an active ReplicaSet's desired-replicas annotation is
  // not spec.replicas.
  absl::StatusOr<bool> IsScalingEvent();

  // sync: scale, clean up while paused, report.
  absl::Status ScaleSync();

  // scale: resize the one active (or latest) ReplicaSet, or every active
  // one in proportion to its max-replicas annotation.
  absl::Status Scale(const api::ObjectPtr& new_rs);

  // util.GetProportion.
  int64_t Proportion(const api::Object& rs, int64_t to_add,
                     int64_t added) const;

  // --- Status and conditions (deployment_progress.cc) ---

  // A condition updated and transitioned now.
  Condition NewCondition(const char* type, const char* status,
                         const char* reason, std::string message) const;

  // Writes `st` (and the revision annotation, when given) through the
  // status subresource, unless nothing changes.
  absl::Status WriteStatus(const Status& st,
                           std::optional<std::string> revision = {});

  // calculateStatus, on top of the stored status's conditions.
  Status Calculate(const api::ObjectPtr& new_rs) const;

  // DeploymentComplete: every replica updated and available, the
  // generation observed.
  bool Complete(const Status& st) const;

  // syncDeploymentStatus.
  absl::Status SyncStatusOnly();

  // syncRolloutStatus: the Progressing condition and the deadline.
  absl::Status SyncRolloutStatus(const api::ObjectPtr& new_rs);

  // DeploymentTimedOut: Progressing last updated longer ago than
  // progressDeadlineSeconds.
  bool TimedOut(const Status& st) const;

  // checkPausedConditions.
  absl::Status CheckPausedConditions();

  // --- RollingUpdate (deployment_rolling.cc) ---

  // rolloutRolling: the new ReplicaSet up, the old ones down, then the
  // cleanup once complete, and the status.
  absl::Status RolloutRolling();

  // reconcileOldReplicaSets: scale old ReplicaSets down as far as
  // maxUnavailable allows, unhealthy replicas first.
  absl::StatusOr<bool> ReconcileOld(const api::ObjectPtr& new_rs);

  // --- Recreate (deployment_recreate.cc) ---

  // rolloutRecreate: the old ReplicaSets to zero, their pods gone, then
  // the new ReplicaSet up, the cleanup once complete, and the status.
  absl::Status RolloutRecreate();

  // oldPodsRunning: an old ReplicaSet still reports pods, or one of its
  // pods has not finished.
  bool OldPodsRunning(const api::ObjectPtr& new_rs) const;

  // --- State ---

  Registry* const registry_;
  EventRecorder* const events_;
  const ResourceInfo& deployments_;
  const ResourceInfo& replicasets_;
  const ResourceInfo& pods_;
  api::ObjectPtr d_;
  const absl::Time now_;
  const std::string now_text_;
  absl::Time next_ = absl::InfiniteFuture();

  int64_t replicas_ = 1;
  bool paused_ = false;
  bool recreate_ = false;
  std::optional<int64_t> revision_history_limit_;
  std::optional<int64_t> progress_deadline_;
  int64_t min_ready_seconds_ = 0;
  int64_t max_surge_ = 0;
  int64_t max_unavailable_ = 0;
  // The Deployment's ReplicaSets, oldest first, as last written.
  std::vector<api::ObjectPtr> rss_;
};

}  // namespace deployment_internal
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_DEPLOYMENT_INTERNAL_H_
