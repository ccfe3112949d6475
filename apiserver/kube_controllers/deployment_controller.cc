// DeploymentController (deployment_controller.h): the pass over every
// Deployment, and the start of each Deployment's pass (DeploymentSync): its
// spec, the ReplicaSets it claims, and the choice between scaling and a
// rollout by its strategy.
#include "apiserver/kube_controllers/deployment_controller.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/kube_controllers/deployment_internal.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/status_macros.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {
namespace deployment_internal {
namespace {

namespace field = ::kcr::api::field;
using Value = rapidjson::Value;

}  // namespace

DeploymentSync::DeploymentSync(Registry* registry,
                               const ResourceInfo& deployments,
                               const ResourceInfo& replicasets,
                               const ResourceInfo& pods, api::ObjectPtr d,
                               absl::Time now)
    : registry_(registry),
      deployments_(deployments),
      replicasets_(replicasets),
      pods_(pods),
      d_(std::move(d)),
      now_(now),
      now_text_(api::FormatRfc3339(now)) {}

absl::Time DeploymentSync::Run(
    const std::vector<api::ObjectPtr>& ns_replicasets) {
  absl::Status s = RunImpl(ns_replicasets);
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
    const std::vector<api::ObjectPtr>& ns_replicasets) {
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
  KCR_RETURN_IF_ERROR(Claim(*selector, ns_replicasets));
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

DeploymentController::DeploymentController(Registry* registry,
                                           const Clock* clock)
    : registry_(registry), clock_(clock) {}

bool DeploymentController::Wants(const StoredEvent& event) const {
  return event.collection == "apps/deployments" ||
         event.collection == "apps/replicasets" ||
         (event.collection == "/pods" && event.type == EventType::kDeleted);
}

absl::Time DeploymentController::Sync() {
  const absl::Time now = clock_->Now();
  ResourceRegistry* resources = registry_->resources();
  ResourceInfoPtr deployments = resources->Lookup("apps", "v1", "deployments");
  ResourceInfoPtr replicasets = resources->Lookup("apps", "v1", "replicasets");
  ResourceInfoPtr pods = resources->Lookup("", "v1", "pods");
  absl::Time next = absl::InfiniteFuture();
  if (deployments == nullptr || replicasets == nullptr || pods == nullptr) {
    return next;
  }
  std::map<std::string, std::vector<api::ObjectPtr>, std::less<>> by_ns;
  for (api::ObjectPtr& rs :
       registry_->storage()->Snapshot(replicasets->StorageKey())) {
    by_ns[std::string(rs->namespace_())].push_back(std::move(rs));
  }
  static const std::vector<api::ObjectPtr> kNone;
  for (const api::ObjectPtr& d :
       registry_->storage()->Snapshot(deployments->StorageKey())) {
    auto it = by_ns.find(d->namespace_());
    deployment_internal::DeploymentSync sync(registry_, *deployments,
                                             *replicasets, *pods, d, now);
    next = std::min(next, sync.Run(it == by_ns.end() ? kNone : it->second));
  }
  return next;
}

}  // namespace apiserver
}  // namespace kcr
