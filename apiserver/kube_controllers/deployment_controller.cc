// DeploymentController (deployment_controller.h): which writes queue which
// Deployment, the objects one Deployment's sync reads, and the start of each
// Deployment's pass (DeploymentSync): its spec, the ReplicaSets it claims, and
// the choice between scaling and a rollout by its strategy.
#include "apiserver/kube_controllers/deployment_controller.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/kube_controllers/controller_indexes.h"
#include "apiserver/kube_controllers/deployment_internal.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/status_macros.h"
#include "base/str_cat.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {
namespace deployment_internal {
namespace {

namespace field = ::kcr::api::field;
using Value = rapidjson::Value;

}  // namespace

DeploymentSync::DeploymentSync(Registry* registry, EventRecorder* events,
                               const ResourceInfo& deployments,
                               const ResourceInfo& replicasets,
                               const ResourceInfo& pods, api::ObjectPtr d,
                               absl::Time now)
    : registry_(registry),
      events_(events),
      deployments_(deployments),
      replicasets_(replicasets),
      pods_(pods),
      d_(std::move(d)),
      now_(now),
      now_text_(api::FormatRfc3339(now)) {}

absl::Time DeploymentSync::Run(const std::vector<api::ObjectPtr>& candidates) {
  absl::Status s = RunImpl(candidates);
  if (!s.ok()) {
    if (!IsRaceError(s)) {
      LOG_EVERY_N(WARNING, 20)
          << "deployment controller: deployment=" << d_->Key() << ": " << s;
    }
    return now_ + kRetryAfter;
  }
  return next_;
}

absl::Status DeploymentSync::RunImpl(
    const std::vector<api::ObjectPtr>& candidates) {
  KCR_RETURN_IF_ERROR(ReadSpec());
  const Value* selector_json =
      field::Member(field::Object(&d_->json(), "spec"), "selector");
  absl::StatusOr<api::LabelSelector> selector =
      selector_json == nullptr
          ? absl::InvalidArgumentError("spec.selector is missing")
          : api::LabelSelector::FromLabelSelector(*selector_json);
  if (!selector.ok()) return selector.status();
  if (selector->Empty()) {
    // kube refuses to select every pod; only the generation is observed.
    Status st = ParseStatus(*d_);
    st.observed_generation = d_->generation();
    return WriteStatus(st);
  }
  KCR_RETURN_IF_ERROR(Claim(*selector, candidates));
  if (d_->being_deleted()) return SyncStatusOnly();
  KCR_RETURN_IF_ERROR(CheckPausedConditions());
  if (paused_) return ScaleSync();
  KCR_ASSIGN_OR_RETURN(bool scaling, IsScalingEvent());
  if (scaling) return ScaleSync();
  if (recreate_) return RolloutRecreate();
  return RolloutRolling();
}

absl::Status DeploymentSync::ReadSpec() {
  const Value* spec = field::Object(&d_->json(), "spec");
  replicas_ = SpecReplicas(*d_);
  paused_ = field::Bool(spec, "paused");
  const Value* strategy = field::Object(spec, "strategy");
  recreate_ = field::String(strategy, "type") == "Recreate";
  revision_history_limit_ = field::Int64(spec, "revisionHistoryLimit");
  progress_deadline_ = field::Int64(spec, "progressDeadlineSeconds");
  min_ready_seconds_ = field::Int64(spec, "minReadySeconds").value_or(0);
  max_surge_ = 0;
  max_unavailable_ = 0;
  if (!recreate_) {
    // util.ResolveFenceposts.
    const Value* rolling = field::Object(strategy, "rollingUpdate");
    Value default_percent("25%");
    const Value* surge = field::Member(rolling, "maxSurge");
    const Value* unavailable = field::Member(rolling, "maxUnavailable");
    KCR_ASSIGN_OR_RETURN(
        max_surge_, ScaledValue(surge != nullptr ? surge : &default_percent,
                                replicas_, true));
    KCR_ASSIGN_OR_RETURN(
        int64_t u,
        ScaledValue(unavailable != nullptr ? unavailable : &default_percent,
                    replicas_, false));
    if (max_surge_ == 0 && u == 0) u = 1;
    max_unavailable_ = replicas_ == 0 ? 0 : std::min(u, replicas_);
  }
  return absl::OkStatus();
}

absl::Status DeploymentSync::Claim(
    const api::LabelSelector& selector,
    const std::vector<api::ObjectPtr>& candidates) {
  for (const api::ObjectPtr& rs : candidates) {
    const std::optional<api::OwnerReferenceView> ref =
        rs->controller_reference();
    const bool matches = selector.Matches(
        field::Object(field::Object(&rs->json(), "metadata"), "labels"));
    if (ref.has_value() && ref->uid == d_->uid()) {
      if (matches || d_->being_deleted()) {
        rss_.push_back(rs);
        continue;
      }
      api::ObjectBuilder b = rs->ToBuilder();
      b.RemoveOwnerReference(d_->uid());
      KCR_RETURN_IF_ERROR(
          registry_
              ->Update(replicasets_, rs->namespace_(), rs->name(), std::move(b))
              .status());
      continue;
    }
    if (ref.has_value() || !matches || d_->being_deleted() ||
        rs->being_deleted()) {
      continue;
    }
    api::ObjectBuilder b = rs->ToBuilder();
    b.AddOwnerReference(OwnerRef());
    KCR_ASSIGN_OR_RETURN(WriteResult w,
                         registry_->Update(replicasets_, rs->namespace_(),
                                           rs->name(), std::move(b)));
    rss_.push_back(w.object);
  }
  std::sort(rss_.begin(), rss_.end(), CreatedBefore);
  return absl::OkStatus();
}

api::OwnerReferenceView DeploymentSync::OwnerRef() const {
  api::OwnerReferenceView ref;
  ref.api_version = "apps/v1";
  ref.kind = "Deployment";
  ref.name = d_->name();
  ref.uid = d_->uid();
  ref.controller = true;
  ref.block_owner_deletion = true;
  return ref;
}

}  // namespace deployment_internal

namespace {

namespace field = ::kcr::api::field;
using Value = rapidjson::Value;

constexpr char kDeploymentsKey[] = "apps/deployments";
constexpr char kReplicaSetsKey[] = "apps/replicasets";
constexpr char kPodsKey[] = "/pods";

// The name of the `kind` (apps/v1) that controls `o`, or nullopt.
std::optional<std::string_view> AppsController(const api::Object& o,
                                               std::string_view kind) {
  const std::optional<api::OwnerReferenceView> ref = o.controller_reference();
  if (!ref.has_value() || ref->kind != kind || ref->api_version != "apps/v1") {
    return std::nullopt;
  }
  return ref->name;
}

}  // namespace

DeploymentController::DeploymentController(Registry* registry,
                                           const Clock* clock,
                                           IncrementalControllerOptions options)
    : IncrementalController(registry, clock, options),
      events_(registry, "deployment-controller") {
  AddControllerIndexes(registry->storage());
}

bool DeploymentController::Wants(const StoredEvent& event) const {
  return event.collection == kDeploymentsKey ||
         event.collection == kReplicaSetsKey ||
         (event.collection == kPodsKey && event.type == EventType::kDeleted);
}

void DeploymentController::EnqueueForReplicaSet(const api::Object& rs) {
  if (rs.controller_reference().has_value()) {
    if (std::optional<std::string_view> d = AppsController(rs, "Deployment")) {
      Enqueue(Storage::Key(rs.namespace_(), *d));
    }
    return;
  }
  if (rs.being_deleted()) return;
  // An orphan: the Deployments that may adopt it.
  const Value* labels =
      field::Object(field::Object(&rs.json(), "metadata"), "labels");
  for (const api::ObjectPtr& d :
       SelectorCandidates(*storage(), kDeploymentsKey, rs)) {
    const Value* selector_json =
        field::Member(field::Object(&d->json(), "spec"), "selector");
    if (selector_json == nullptr) continue;
    absl::StatusOr<api::LabelSelector> selector =
        api::LabelSelector::FromLabelSelector(*selector_json);
    // kube never lets an empty selector adopt.
    if (selector.ok() && !selector->Empty() && selector->Matches(labels)) {
      Enqueue(Storage::Key(d->namespace_(), d->name()));
    }
  }
}

void DeploymentController::EnqueueForDeletedPod(const api::Object& pod) {
  const std::optional<api::OwnerReferenceView> ref = pod.controller_reference();
  if (!ref.has_value() || ref->kind != "ReplicaSet" ||
      ref->api_version != "apps/v1") {
    return;
  }
  api::ObjectPtr rs =
      storage()->Get(kReplicaSetsKey, pod.namespace_(), ref->name);
  if (rs == nullptr || rs->uid() != ref->uid) return;
  std::optional<std::string_view> name = AppsController(*rs, "Deployment");
  if (!name.has_value()) return;
  // Only a Recreate rollout waits for pods; the others hear of a pod's
  // going through its ReplicaSet's status.
  api::ObjectPtr d = storage()->Get(kDeploymentsKey, pod.namespace_(), *name);
  if (d == nullptr ||
      field::String(
          field::Object(field::Object(&d->json(), "spec"), "strategy"),
          "type") != "Recreate") {
    return;
  }
  Enqueue(Storage::Key(d->namespace_(), d->name()));
}

void DeploymentController::OnEvent(const StoredEvent& event) {
  if (event.collection == kDeploymentsKey) {
    Enqueue(Storage::Key(event.object->namespace_(), event.object->name()));
  } else if (event.collection == kReplicaSetsKey) {
    EnqueueForReplicaSet(*event.object);
    if (event.previous != nullptr) EnqueueForReplicaSet(*event.previous);
  } else if (event.collection == kPodsKey &&
             event.type == EventType::kDeleted) {
    EnqueueForDeletedPod(*event.object);
  }
}

void DeploymentController::EnqueueAll() {
  for (const api::ObjectPtr& d : storage()->Snapshot(kDeploymentsKey)) {
    Enqueue(Storage::Key(d->namespace_(), d->name()));
  }
}

absl::Time DeploymentController::SyncKey(const std::string& key,
                                         absl::Time now) {
  ResourceRegistry* resources = registry()->resources();
  ResourceInfoPtr deployments = resources->Lookup("apps", "v1", "deployments");
  ResourceInfoPtr replicasets = resources->Lookup("apps", "v1", "replicasets");
  ResourceInfoPtr pods = resources->Lookup("", "v1", "pods");
  if (deployments == nullptr || replicasets == nullptr || pods == nullptr) {
    return absl::InfiniteFuture();
  }
  api::ObjectPtr d = storage()->GetByKey(deployments->StorageKey(), key);
  // Gone: its ReplicaSets are the garbage collector's.
  if (d == nullptr) return absl::InfiniteFuture();
  // Its own ReplicaSets and those it may adopt: the others are another
  // controller's, which the claim leaves alone.
  std::vector<api::ObjectPtr> candidates =
      storage()->ByIndex(replicasets->StorageKey(), kControllerIndex, d->uid());
  for (api::ObjectPtr& orphan :
       storage()->ByIndex(replicasets->StorageKey(), kControllerIndex,
                          OrphanKey(d->namespace_()))) {
    candidates.push_back(std::move(orphan));
  }
  deployment_internal::DeploymentSync sync(registry(), &events_, *deployments,
                                           *replicasets, *pods, d, now);
  return sync.Run(candidates);
}

}  // namespace apiserver
}  // namespace kcr
