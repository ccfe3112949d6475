// The status of a Deployment (kube's progress.go and calculateStatus):
// replica counts, the Available and Progressing conditions, the paused and
// resumed conditions, the progress deadline, and the status write.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "api/json/json_util.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/kube_controllers/deployment_internal.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/status_macros.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace deployment_internal {
namespace {

namespace field = ::kcr::api::field;
using Value = rapidjson::Value;

}  // namespace

Status ParseStatus(const api::Object& d) {
  const Value* s = field::Object(&d.json(), "status");
  Status out;
  out.observed_generation = field::Int64(s, "observedGeneration").value_or(0);
  out.replicas = field::Int64(s, "replicas").value_or(0);
  out.updated = field::Int64(s, "updatedReplicas").value_or(0);
  out.ready = field::Int64(s, "readyReplicas").value_or(0);
  out.available = field::Int64(s, "availableReplicas").value_or(0);
  out.unavailable = field::Int64(s, "unavailableReplicas").value_or(0);
  out.collision_count = field::Int64(s, "collisionCount");
  if (const Value* list = field::Array(s, "conditions"); list != nullptr) {
    for (const Value& c : list->GetArray()) {
      out.conditions.push_back(
          {std::string(field::String(&c, "type")),
           std::string(field::String(&c, "status")),
           std::string(field::String(&c, "lastUpdateTime")),
           std::string(field::String(&c, "lastTransitionTime")),
           std::string(field::String(&c, "reason")),
           std::string(field::String(&c, "message"))});
    }
  }
  return out;
}

Value StatusJson(const Status& s, Allocator& a) {
  Value out(rapidjson::kObjectType);
  // Go omits zero counts.
  const auto count = [&](const char* key, int64_t v) {
    if (v != 0) out.AddMember(Value(key, a), Value(v), a);
  };
  count("observedGeneration", s.observed_generation);
  count("replicas", s.replicas);
  count("updatedReplicas", s.updated);
  count("readyReplicas", s.ready);
  count("availableReplicas", s.available);
  count("unavailableReplicas", s.unavailable);
  if (!s.conditions.empty()) {
    Value list(rapidjson::kArrayType);
    for (const Condition& c : s.conditions) {
      Value v(rapidjson::kObjectType);
      v.AddMember("type", field::Str(c.type, a), a);
      v.AddMember("status", field::Str(c.status, a), a);
      v.AddMember("lastUpdateTime", field::Str(c.last_update, a), a);
      v.AddMember("lastTransitionTime", field::Str(c.last_transition, a), a);
      if (!c.reason.empty()) v.AddMember("reason", field::Str(c.reason, a), a);
      if (!c.message.empty()) {
        v.AddMember("message", field::Str(c.message, a), a);
      }
      list.PushBack(v, a);
    }
    out.AddMember("conditions", list, a);
  }
  if (s.collision_count.has_value()) {
    out.AddMember("collisionCount", Value(*s.collision_count), a);
  }
  return out;
}

Condition DeploymentSync::NewCondition(const char* type, const char* status,
                                       const char* reason,
                                       std::string message) const {
  return {type, status, now_text_, now_text_, reason, std::move(message)};
}

absl::Status DeploymentSync::WriteStatus(const Status& st,
                                         std::optional<std::string> revision) {
  const bool new_revision =
      revision.has_value() && d_->Annotation(kRevisionAnnotation) !=
                                  std::optional<std::string_view>(*revision);
  // Most passes find the status as it is: the Deployment is copied only
  // for a write.
  Allocator scratch(1024);
  Value json = StatusJson(st, scratch);
  const Value* old = field::Object(&d_->json(), "status");
  if (!new_revision && old != nullptr && json::JsonDeepEqual(json, *old)) {
    return absl::OkStatus();
  }
  // What the status subresource reads: the status and, for a Deployment,
  // the annotations (the revision goes with the status).
  api::ObjectBuilder b = StatusWriteOf(*d_, /*with_annotations=*/true);
  if (new_revision) b.SetAnnotation(kRevisionAnnotation, *revision);
  KCR_RETURN_IF_ERROR(b.Set("/status", json));
  WriteOptions w;
  w.subresource = "status";
  KCR_ASSIGN_OR_RETURN(WriteResult r,
                       registry_->Update(deployments_, d_->namespace_(),
                                         d_->name(), std::move(b), w));
  d_ = r.object;
  return absl::OkStatus();
}

Status DeploymentSync::Calculate(const api::ObjectPtr& new_rs) const {
  Status st = ParseStatus(*d_);
  const int64_t available = SumStatus(rss_, "availableReplicas");
  st.observed_generation = d_->generation();
  st.replicas = SumStatus(rss_, "replicas");
  st.updated = new_rs == nullptr ? 0 : StatusCount(*new_rs, "replicas");
  st.ready = SumStatus(rss_, "readyReplicas");
  st.available = available;
  st.unavailable = std::max<int64_t>(0, SumSpec(rss_) - available);
  if (available >= replicas_ - max_unavailable_) {
    st.Set(NewCondition(kAvailable, "True", "MinimumReplicasAvailable",
                        "Deployment has minimum availability."));
  } else {
    st.Set(NewCondition(kAvailable, "False", "MinimumReplicasUnavailable",
                        "Deployment does not have minimum availability."));
  }
  return st;
}

bool DeploymentSync::Complete(const Status& st) const {
  return st.updated == replicas_ && st.replicas == replicas_ &&
         st.available == replicas_ &&
         st.observed_generation >= d_->generation();
}

absl::Status DeploymentSync::SyncStatusOnly() {
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr new_rs, GetNew(false));
  return WriteStatus(Calculate(new_rs));
}

absl::Status DeploymentSync::SyncRolloutStatus(const api::ObjectPtr& new_rs) {
  const Status old = ParseStatus(*d_);
  Status st = Calculate(new_rs);
  const bool has_deadline =
      progress_deadline_.has_value() && *progress_deadline_ != INT32_MAX;
  const Condition* cur = st.Get(kProgressing);
  const bool complete_already = st.replicas == st.updated && cur != nullptr &&
                                cur->reason == kNewRSAvailableReason;
  if (has_deadline && !complete_already && new_rs != nullptr) {
    const std::string rs_name(new_rs->name());
    const int64_t old_old = old.replicas - old.updated;
    const int64_t new_old = st.replicas - st.updated;
    const bool progressing = st.updated > old.updated || new_old < old_old ||
                             st.ready > old.ready ||
                             st.available > old.available;
    if (Complete(st)) {
      st.Set(NewCondition(
          kProgressing, "True", kNewRSAvailableReason,
          Cat("ReplicaSet \"", rs_name, "\" has successfully progressed.")));
    } else if (progressing) {
      Condition c =
          NewCondition(kProgressing, "True", "ReplicaSetUpdated",
                       Cat("ReplicaSet \"", rs_name, "\" is progressing."));
      if (cur != nullptr && cur->status == "True") {
        c.last_transition = cur->last_transition;
      }
      st.Remove(kProgressing);
      st.conditions.push_back(std::move(c));
    } else if (TimedOut(st)) {
      st.Set(NewCondition(
          kProgressing, "False", kTimedOutReason,
          Cat("ReplicaSet \"", rs_name, "\" has timed out progressing.")));
    }
  }
  KCR_RETURN_IF_ERROR(WriteStatus(st));
  // Come back when the deadline would pass.
  const Status now_status = ParseStatus(*d_);
  const Condition* c = now_status.Get(kProgressing);
  if (has_deadline && !Complete(now_status) && c != nullptr &&
      c->reason != kNewRSAvailableReason && c->reason != kTimedOutReason) {
    absl::StatusOr<absl::Time> from = api::ParseTime(c->last_update);
    if (from.ok()) {
      next_ = std::min(
          next_, *from + absl::Seconds(*progress_deadline_) + absl::Seconds(1));
    }
  }
  return absl::OkStatus();
}

bool DeploymentSync::TimedOut(const Status& st) const {
  const Condition* c = st.Get(kProgressing);
  if (c == nullptr || c->reason == kNewRSAvailableReason) return false;
  if (c->reason == kTimedOutReason) return true;
  absl::StatusOr<absl::Time> from = api::ParseTime(c->last_update);
  return from.ok() && *from + absl::Seconds(*progress_deadline_) < now_;
}

absl::Status DeploymentSync::CheckPausedConditions() {
  if (!progress_deadline_.has_value() || *progress_deadline_ == INT32_MAX) {
    return absl::OkStatus();
  }
  Status st = ParseStatus(*d_);
  const Condition* c = st.Get(kProgressing);
  if (c != nullptr && c->reason == kTimedOutReason) return absl::OkStatus();
  const bool paused_condition = c != nullptr && c->reason == kPausedReason;
  if (paused_ && !paused_condition) {
    st.Set(NewCondition(kProgressing, "Unknown", kPausedReason,
                        "Deployment is paused"));
  } else if (!paused_ && paused_condition) {
    st.Set(NewCondition(kProgressing, "Unknown", kResumedReason,
                        "Deployment is resumed"));
  } else {
    return absl::OkStatus();
  }
  return WriteStatus(st);
}

}  // namespace deployment_internal
}  // namespace apiserver
}  // namespace kcr
