#include "apiserver/kube_controllers/deployment_controller.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "api/json/json_util.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/internal/api_error.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "apiserver/internal/str_util.h"
#include "glog/logging.h"
#include "rapidjson/document.h"
#include "base/status_macros.h"

namespace kcr {
namespace apiserver {
namespace {

namespace field = ::kcr::api::field;
using Value = rapidjson::Value;
using Allocator = rapidjson::MemoryPoolAllocator<>;

// After a failed write the deployment is looked at again this soon (the
// runner also comes back on the next change or resync).
constexpr absl::Duration kRetryAfter = absl::Seconds(1);

// Condition types and reasons (pkg/controller/deployment/util).
constexpr char kAvailable[] = "Available";
constexpr char kProgressing[] = "Progressing";
constexpr char kNewRSAvailableReason[] = "NewReplicaSetAvailable";
constexpr char kTimedOutReason[] = "ProgressDeadlineExceeded";
constexpr char kPausedReason[] = "DeploymentPaused";
constexpr char kResumedReason[] = "DeploymentResumed";

bool ParseInt(std::string_view s, int64_t* v) {
  return absl::SimpleAtoi(absl::string_view(s.data(), s.size()), v);
}

// Annotations a ReplicaSet does not copy from its Deployment.
bool SkipCopyAnnotation(std::string_view key) {
  return key == "kubectl.kubernetes.io/last-applied-configuration" ||
         key == kRevisionAnnotation || key == kRevisionHistoryAnnotation ||
         key == kDesiredReplicasAnnotation || key == kMaxReplicasAnnotation ||
         key == "deprecated.deployment.rollback.to";
}

// --- JSON helpers ---

void CanonicalJson(const Value& v, std::string* out) {
  if (v.IsObject()) {
    std::vector<const Value::Member*> members;
    for (const auto& m : v.GetObject()) members.push_back(&m);
    std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
      return field::View(a->name) < field::View(b->name);
    });
    out->push_back('{');
    for (size_t i = 0; i < members.size(); ++i) {
      if (i > 0) out->push_back(',');
      CanonicalJson(members[i]->name, out);
      out->push_back(':');
      CanonicalJson(members[i]->value, out);
    }
    out->push_back('}');
  } else if (v.IsArray()) {
    out->push_back('[');
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      if (i > 0) out->push_back(',');
      CanonicalJson(v[i], out);
    }
    out->push_back(']');
  } else {
    absl::StatusOr<std::string> s = json::JsonToString(v);
    if (s.ok()) out->append(*s);
  }
}

// A copy of a pod template without the pod-template-hash label (and
// without an emptied labels map).
rapidjson::Document WithoutHash(const Value* pod_template) {
  rapidjson::Document d;
  if (pod_template == nullptr) {
    d.SetObject();
    return d;
  }
  d.CopyFrom(*pod_template, d.GetAllocator());
  if (!d.IsObject()) return d;
  auto meta = d.FindMember("metadata");
  if (meta == d.MemberEnd() || !meta->value.IsObject()) return d;
  auto labels = meta->value.FindMember("labels");
  if (labels == meta->value.MemberEnd() || !labels->value.IsObject()) return d;
  labels->value.RemoveMember(kPodTemplateHashLabel);
  if (labels->value.ObjectEmpty()) meta->value.RemoveMember("labels");
  return d;
}

bool EqualIgnoreHash(const Value* a, const Value* b) {
  return json::JsonDeepEqual(WithoutHash(a), WithoutHash(b));
}

// intstr.GetScaledValueFromIntOrPercent.
absl::StatusOr<int64_t> ScaledValue(const Value* v, int64_t total,
                                    bool round_up) {
  if (v == nullptr) return 0;
  if (v->IsInt64()) return v->GetInt64();
  if (v->IsString()) {
    std::string_view s = field::View(*v);
    int64_t percent;
    if (!s.empty() && s.back() == '%' &&
        ParseInt(s.substr(0, s.size() - 1), &percent)) {
      const double scaled =
          static_cast<double>(percent) * static_cast<double>(total) / 100.0;
      return static_cast<int64_t>(round_up ? std::ceil(scaled)
                                           : std::floor(scaled));
    }
  }
  return absl::InvalidArgumentError(Cat("invalid value for IntOrString: ",
                                        json::JsonToString(*v).value_or("?")));
}

int64_t SpecReplicas(const api::Object& o) {
  return field::Int64(field::Object(&o.json(), "spec"), "replicas").value_or(1);
}

int64_t StatusCount(const api::Object& o, std::string_view key) {
  return field::Int64(field::Object(&o.json(), "status"), key).value_or(0);
}

const Value* TemplateOf(const api::Object& o) {
  return field::Object(field::Object(&o.json(), "spec"), "template");
}

// The revision annotation as a number; 0 when absent or malformed.
int64_t Revision(const api::Object& rs) {
  int64_t v = 0;
  std::optional<std::string_view> a = rs.Annotation(kRevisionAnnotation);
  if (!a.has_value() || !ParseInt(*a, &v)) return 0;
  return v;
}

bool CreatedBefore(const api::ObjectPtr& a, const api::ObjectPtr& b) {
  if (a->creation_timestamp() != b->creation_timestamp()) {
    return a->creation_timestamp() < b->creation_timestamp();
  }
  return a->name() < b->name();
}

int64_t SumSpec(const std::vector<api::ObjectPtr>& rss) {
  int64_t n = 0;
  for (const auto& rs : rss) n += SpecReplicas(*rs);
  return n;
}

int64_t SumStatus(const std::vector<api::ObjectPtr>& rss,
                  std::string_view key) {
  int64_t n = 0;
  for (const auto& rs : rss) n += StatusCount(*rs, key);
  return n;
}

std::vector<api::ObjectPtr> Active(const std::vector<api::ObjectPtr>& rss) {
  std::vector<api::ObjectPtr> out;
  for (const auto& rs : rss) {
    if (SpecReplicas(*rs) > 0) out.push_back(rs);
  }
  return out;
}

// --- Deployment status ---

struct Condition {
  std::string type, status, last_update, last_transition, reason, message;
};

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

// One pass over one Deployment: kube's syncDeployment and what it calls.
class DeploymentSync {
 public:
  DeploymentSync(Registry* registry, const ResourceInfo& deployments,
                 const ResourceInfo& replicasets, const ResourceInfo& pods,
                 api::ObjectPtr d, absl::Time now)
      : registry_(registry),
        deployments_(deployments),
        replicasets_(replicasets),
        pods_(pods),
        d_(std::move(d)),
        now_(now),
        now_text_(api::FormatRfc3339(now)) {}

  // Returns when the deployment next needs a pass.
  absl::Time Run(const std::vector<api::ObjectPtr>& ns_replicasets) {
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

 private:
  absl::Status RunImpl(const std::vector<api::ObjectPtr>& ns_replicasets) {
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

  absl::Status ReadSpec() {
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

  // --- ReplicaSets ---

  // ClaimReplicaSets: adopt orphans the selector matches, release owned
  // ones it does not.
  absl::Status Claim(const api::LabelSelector& selector,
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
            registry_->Update(replicasets_, rs->ns(), rs->name(), std::move(b))
                .status());
        continue;
      }
      if (ref.has_value() || !matches || d_->being_deleted() ||
          rs->being_deleted()) {
        continue;
      }
      api::ObjectBuilder b = rs->ToBuilder();
      b.AddOwnerReference(OwnerRef());
      KCR_ASSIGN_OR_RETURN(
          WriteResult w,
          registry_->Update(replicasets_, rs->ns(), rs->name(), std::move(b)));
      rss_.push_back(w.object);
    }
    std::sort(rss_.begin(), rss_.end(), CreatedBefore);
    return absl::OkStatus();
  }

  api::OwnerReferenceView OwnerRef() const {
    api::OwnerReferenceView ref;
    ref.api_version = "apps/v1";
    ref.kind = "Deployment";
    ref.name = d_->name();
    ref.uid = d_->uid();
    ref.controller = true;
    ref.block_owner_deletion = true;
    return ref;
  }

  // The oldest ReplicaSet whose template is the Deployment's, or null.
  api::ObjectPtr FindNew() const {
    for (const api::ObjectPtr& rs : rss_) {
      if (EqualIgnoreHash(TemplateOf(*rs), TemplateOf(*d_))) return rs;
    }
    return nullptr;
  }

  std::vector<api::ObjectPtr> OldOf(const api::ObjectPtr& new_rs) const {
    std::vector<api::ObjectPtr> out;
    for (const api::ObjectPtr& rs : rss_) {
      if (new_rs == nullptr || rs->uid() != new_rs->uid()) out.push_back(rs);
    }
    return out;
  }

  void Replace(const api::ObjectPtr& rs) {
    for (api::ObjectPtr& r : rss_) {
      if (r->uid() == rs->uid()) {
        r = rs;
        return;
      }
    }
    rss_.push_back(rs);
  }

  // Copies the Deployment's annotations onto `b`; true when one changed.
  bool CopyDeploymentAnnotations(api::ObjectBuilder* b) const {
    bool changed = false;
    for (const auto& [k, v] : d_->annotations().ToMap()) {
      if (SkipCopyAnnotation(k)) continue;
      const Value* cur =
          b->Find(Cat("/metadata/annotations/", EscapePointer(k)));
      if (cur != nullptr && cur->IsString() && field::View(*cur) == v) {
        continue;
      }
      b->SetAnnotation(k, v);
      changed = true;
    }
    return changed;
  }

  static std::string EscapePointer(std::string_view key) {
    std::string out;
    for (char c : key) {
      if (c == '~') {
        out += "~0";
      } else if (c == '/') {
        out += "~1";
      } else {
        out += c;
      }
    }
    return out;
  }

  static std::optional<std::string> AnnotationOf(const api::ObjectBuilder& b,
                                                 std::string_view key) {
    const Value* v = b.Find(Cat("/metadata/annotations/", EscapePointer(key)));
    if (v == nullptr || !v->IsString()) return std::nullopt;
    return std::string(field::View(*v));
  }

  // util.SetReplicasAnnotations; true when one changed.
  bool SetReplicasAnnotations(api::ObjectBuilder* b) const {
    bool changed = false;
    const std::string desired = Cat(replicas_);
    const std::string max = Cat(replicas_ + max_surge_);
    if (AnnotationOf(*b, kDesiredReplicasAnnotation) != desired) {
      b->SetAnnotation(kDesiredReplicasAnnotation, desired);
      changed = true;
    }
    if (AnnotationOf(*b, kMaxReplicasAnnotation) != max) {
      b->SetAnnotation(kMaxReplicasAnnotation, max);
      changed = true;
    }
    return changed;
  }

  // util.SetNewReplicaSetAnnotations; true when one changed.
  bool SetNewReplicaSetAnnotations(api::ObjectBuilder* b, int64_t new_revision,
                                   bool exists) const {
    bool changed = CopyDeploymentAnnotations(b);
    const std::optional<std::string> old =
        AnnotationOf(*b, kRevisionAnnotation);
    int64_t old_revision = 0;
    if (old.has_value() && !ParseInt(*old, &old_revision)) {
      if (exists) return false;
      old_revision = 0;
    }
    if (old_revision < new_revision) {
      b->SetAnnotation(kRevisionAnnotation, Cat(new_revision));
      changed = true;
      if (old.has_value() && !old->empty()) {
        std::optional<std::string> history =
            AnnotationOf(*b, kRevisionHistoryAnnotation);
        b->SetAnnotation(kRevisionHistoryAnnotation,
                         history.has_value() && !history->empty()
                             ? Cat(*history, ",", *old)
                             : *old);
      }
    }
    if (!exists && SetReplicasAnnotations(b)) changed = true;
    return changed;
  }

  // getNewReplicaSet: the new ReplicaSet with its revision brought up to
  // date, created when `create` and missing; null otherwise.
  absl::StatusOr<api::ObjectPtr> GetNew(bool create) {
    api::ObjectPtr existing = FindNew();
    int64_t max_old = 0;
    for (const api::ObjectPtr& rs : OldOf(existing)) {
      max_old = std::max(max_old, Revision(*rs));
    }
    const int64_t new_revision = max_old + 1;
    if (existing != nullptr) {
      api::ObjectBuilder b = existing->ToBuilder();
      const bool annotations = SetNewReplicaSetAnnotations(&b, new_revision,
                                                           /*exists=*/true);
      const bool min_ready =
          field::Int64(field::Object(&existing->json(), "spec"),
                       "minReadySeconds")
              .value_or(0) != min_ready_seconds_;
      if (annotations || min_ready) {
        if (min_ready_seconds_ == 0) {
          b.Remove("/spec/minReadySeconds");
        } else {
          (void)b.SetInt("/spec/minReadySeconds", min_ready_seconds_);
        }
        KCR_ASSIGN_OR_RETURN(WriteResult w,
                             registry_->Update(replicasets_, existing->ns(),
                                               existing->name(), std::move(b)));
        Replace(w.object);
        return w.object;
      }
      Status st = ParseStatus(*d_);
      std::optional<std::string> revision(
          existing->Annotation(kRevisionAnnotation).value_or(""));
      bool update = d_->Annotation(kRevisionAnnotation) != revision;
      if (st.Get(kProgressing) == nullptr) {
        st.Set(NewCondition(
            kProgressing, "True", "FoundNewReplicaSet",
            Cat("Found new replica set \"", existing->name(), "\"")));
        update = true;
      }
      if (update) KCR_RETURN_IF_ERROR(WriteStatus(st, revision));
      return existing;
    }
    if (!create) return api::ObjectPtr();

    // A new ReplicaSet.
    Status st = ParseStatus(*d_);
    const std::string hash =
        PodTemplateHash(*TemplateOf(*d_), st.collision_count);
    const std::string name = Cat(d_->name(), "-", hash);
    api::ObjectBuilder b("apps/v1", "ReplicaSet");
    b.SetName(name);
    b.SetNamespace(d_->ns());
    KCR_RETURN_IF_ERROR(b.Set("/spec/template", *TemplateOf(*d_)));
    KCR_RETURN_IF_ERROR(b.SetString(
        Cat("/spec/template/metadata/labels/", kPodTemplateHashLabel), hash));
    if (const Value* labels = b.Find("/spec/template/metadata/labels")) {
      KCR_RETURN_IF_ERROR(b.Set("/metadata/labels", *labels));
    }
    KCR_RETURN_IF_ERROR(
        b.Set("/spec/selector",
              *field::Member(field::Object(&d_->json(), "spec"), "selector")));
    KCR_RETURN_IF_ERROR(b.SetString(
        Cat("/spec/selector/matchLabels/", kPodTemplateHashLabel), hash));
    if (min_ready_seconds_ != 0) {
      KCR_RETURN_IF_ERROR(
          b.SetInt("/spec/minReadySeconds", min_ready_seconds_));
    }
    b.AddOwnerReference(OwnerRef());
    // NewRSNewReplicas with the new ReplicaSet at zero.
    int64_t new_replicas = replicas_;
    if (!recreate_) {
      const int64_t current = SumSpec(rss_);
      const int64_t max_total = replicas_ + max_surge_;
      new_replicas =
          current >= max_total ? 0 : std::min(max_total - current, replicas_);
    }
    KCR_RETURN_IF_ERROR(b.SetInt("/spec/replicas", new_replicas));
    SetNewReplicaSetAnnotations(&b, new_revision, /*exists=*/false);
    absl::StatusOr<WriteResult> created =
        registry_->Create(replicasets_, d_->ns(), std::move(b));
    api::ObjectPtr rs;
    bool already_exists = false;
    if (!created.ok()) {
      if (ApiError::FromStatus(created.status()).reason != "AlreadyExists") {
        return created.status();
      }
      // Ours already (a pass that lost its answer), or a hash collision.
      api::ObjectPtr other =
          registry_->storage()->Get(replicasets_.StorageKey(), d_->ns(), name);
      std::optional<api::OwnerReferenceView> ref =
          other == nullptr ? std::nullopt : other->controller_reference();
      if (other != nullptr && ref.has_value() && ref->uid == d_->uid() &&
          EqualIgnoreHash(TemplateOf(*other), TemplateOf(*d_))) {
        rs = other;
        already_exists = true;
      } else {
        st.collision_count = st.collision_count.value_or(0) + 1;
        LOG(INFO) << "deployment controller: pod-template-hash collision "
                     "deployment="
                  << d_->Key() << " rs=" << name
                  << " collisionCount=" << *st.collision_count;
        KCR_RETURN_IF_ERROR(WriteStatus(st));
        next_ = now_;
        return absl::AbortedError("pod-template-hash collision");
      }
    } else {
      rs = created->object;
      VLOG(2) << "deployment controller: created rs=" << rs->Key()
              << " replicas=" << new_replicas;
    }
    Replace(rs);
    std::sort(rss_.begin(), rss_.end(), CreatedBefore);
    if (!already_exists) {
      st.Set(NewCondition(kProgressing, "True", "NewReplicaSetCreated",
                          Cat("Created new replica set \"", name, "\"")));
    }
    KCR_RETURN_IF_ERROR(WriteStatus(st, Cat(new_revision)));
    return rs;
  }

  // scaleReplicaSet: size and replica annotations; true when resized.
  absl::StatusOr<bool> ScaleReplicaSet(const api::ObjectPtr& rs, int64_t size) {
    const bool resize = SpecReplicas(*rs) != size;
    api::ObjectBuilder b = rs->ToBuilder();
    const bool annotations = SetReplicasAnnotations(&b);
    if (!resize && !annotations) return false;
    KCR_RETURN_IF_ERROR(b.SetInt("/spec/replicas", size));
    KCR_ASSIGN_OR_RETURN(
        WriteResult w,
        registry_->Update(replicasets_, rs->ns(), rs->name(), std::move(b)));
    if (resize) {
      VLOG(2) << "deployment controller: scaled rs=" << rs->Key() << " from "
              << SpecReplicas(*rs) << " to " << size;
    }
    Replace(w.object);
    return resize;
  }

  // --- Status ---

  Condition NewCondition(const char* type, const char* status,
                         const char* reason, std::string message) const {
    return {type, status, now_text_, now_text_, reason, std::move(message)};
  }

  // Writes `st` (and the revision annotation, when given) through the
  // status subresource, unless nothing changes.
  absl::Status WriteStatus(const Status& st,
                           std::optional<std::string> revision = {}) {
    api::ObjectBuilder b = d_->ToBuilder();
    bool changed = false;
    if (revision.has_value() &&
        d_->Annotation(kRevisionAnnotation) !=
            std::optional<std::string_view>(*revision)) {
      b.SetAnnotation(kRevisionAnnotation, *revision);
      changed = true;
    }
    Value json = StatusJson(st, b.allocator());
    const Value* old = field::Object(&d_->json(), "status");
    if (old == nullptr || !json::JsonDeepEqual(json, *old)) changed = true;
    if (!changed) return absl::OkStatus();
    KCR_RETURN_IF_ERROR(b.Set("/status", json));
    WriteOptions w;
    w.subresource = "status";
    KCR_ASSIGN_OR_RETURN(
        WriteResult r,
        registry_->Update(deployments_, d_->ns(), d_->name(), std::move(b), w));
    d_ = r.object;
    return absl::OkStatus();
  }

  // calculateStatus, on top of the stored status's conditions.
  Status Calculate(const api::ObjectPtr& new_rs) const {
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

  bool Complete(const Status& st) const {
    return st.updated == replicas_ && st.replicas == replicas_ &&
           st.available == replicas_ &&
           st.observed_generation >= d_->generation();
  }

  // syncDeploymentStatus.
  absl::Status SyncStatusOnly() {
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr new_rs, GetNew(false));
    return WriteStatus(Calculate(new_rs));
  }

  // syncRolloutStatus: the Progressing condition and the deadline.
  absl::Status SyncRolloutStatus(const api::ObjectPtr& new_rs) {
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
        next_ = std::min(next_, *from + absl::Seconds(*progress_deadline_) +
                                    absl::Seconds(1));
      }
    }
    return absl::OkStatus();
  }

  bool TimedOut(const Status& st) const {
    const Condition* c = st.Get(kProgressing);
    if (c == nullptr || c->reason == kNewRSAvailableReason) return false;
    if (c->reason == kTimedOutReason) return true;
    absl::StatusOr<absl::Time> from = api::ParseTime(c->last_update);
    return from.ok() && *from + absl::Seconds(*progress_deadline_) < now_;
  }

  // checkPausedConditions.
  absl::Status CheckPausedConditions() {
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

  // --- Scaling ---

  absl::StatusOr<bool> IsScalingEvent() {
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr new_rs, GetNew(false));
    (void)new_rs;
    for (const api::ObjectPtr& rs : Active(rss_)) {
      std::optional<std::string_view> a =
          rs->Annotation(kDesiredReplicasAnnotation);
      int64_t desired;
      if (!a.has_value() || !ParseInt(*a, &desired)) continue;
      if (desired != replicas_) return true;
    }
    return false;
  }

  // sync: scale, clean up while paused, report.
  absl::Status ScaleSync() {
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr new_rs, GetNew(false));
    KCR_RETURN_IF_ERROR(Scale(new_rs));
    new_rs = new_rs == nullptr ? nullptr : Current(new_rs);
    if (paused_) KCR_RETURN_IF_ERROR(Cleanup(new_rs));
    return WriteStatus(Calculate(new_rs));
  }

  api::ObjectPtr Current(const api::ObjectPtr& rs) const {
    for (const api::ObjectPtr& r : rss_) {
      if (r->uid() == rs->uid()) return r;
    }
    return rs;
  }

  // scale: resize the one active (or latest) ReplicaSet, or every active
  // one in proportion to its max-replicas annotation.
  absl::Status Scale(const api::ObjectPtr& new_rs) {
    std::vector<api::ObjectPtr> old = OldOf(new_rs);
    std::vector<api::ObjectPtr> active = Active(rss_);
    if (active.size() <= 1 && (new_rs != nullptr || !old.empty())) {
      api::ObjectPtr target;
      if (active.size() == 1) {
        target = active[0];
      } else if (new_rs != nullptr) {
        target = new_rs;
      } else {
        target = old.back();  // the newest
      }
      if (SpecReplicas(*target) == replicas_) return absl::OkStatus();
      return ScaleReplicaSet(target, replicas_).status();
    }
    // IsSaturated: the new ReplicaSet has everything; old ones go to zero.
    if (new_rs != nullptr && SpecReplicas(*new_rs) == replicas_ &&
        StatusCount(*new_rs, "availableReplicas") == replicas_) {
      for (const api::ObjectPtr& rs : Active(old)) {
        KCR_RETURN_IF_ERROR(ScaleReplicaSet(rs, 0).status());
      }
      return absl::OkStatus();
    }
    if (recreate_ || active.empty()) return absl::OkStatus();
    const int64_t all = SumSpec(active);
    const int64_t allowed = replicas_ > 0 ? replicas_ + max_surge_ : 0;
    const int64_t to_add = allowed - all;
    if (to_add == 0) return absl::OkStatus();
    // Larger first when growing, smaller first when shrinking (newer first
    // among equals).
    std::sort(active.begin(), active.end(),
              [&](const api::ObjectPtr& a, const api::ObjectPtr& b) {
                if (SpecReplicas(*a) != SpecReplicas(*b)) {
                  return to_add > 0 ? SpecReplicas(*a) > SpecReplicas(*b)
                                    : SpecReplicas(*a) < SpecReplicas(*b);
                }
                return CreatedBefore(b, a);
              });
    std::map<std::string, int64_t> sizes;
    int64_t added = 0;
    for (const api::ObjectPtr& rs : active) {
      const int64_t proportion = Proportion(*rs, to_add, added);
      sizes[std::string(rs->uid())] = SpecReplicas(*rs) + proportion;
      added += proportion;
    }
    for (size_t i = 0; i < active.size(); ++i) {
      int64_t size = sizes[std::string(active[i]->uid())];
      if (i == 0 && to_add != added)
        size = std::max<int64_t>(0, size + to_add - added);
      KCR_RETURN_IF_ERROR(ScaleReplicaSet(active[i], size).status());
    }
    return absl::OkStatus();
  }

  // util.GetProportion.
  int64_t Proportion(const api::Object& rs, int64_t to_add,
                     int64_t added) const {
    if (SpecReplicas(rs) == 0 || to_add == 0 || to_add == added) return 0;
    int64_t fraction;
    if (replicas_ == 0) {
      fraction = -SpecReplicas(rs);
    } else {
      int64_t annotated = 0;
      std::optional<std::string_view> a = rs.Annotation(kMaxReplicasAnnotation);
      if (!a.has_value() || !ParseInt(*a, &annotated) || annotated <= 0) {
        annotated = std::max<int64_t>(1, StatusCount(*d_, "replicas"));
      }
      const double size = static_cast<double>(SpecReplicas(rs)) *
                          static_cast<double>(replicas_ + max_surge_) /
                          static_cast<double>(annotated);
      fraction = static_cast<int64_t>(std::llround(size)) - SpecReplicas(rs);
    }
    const int64_t allowed = to_add - added;
    return to_add > 0 ? std::min(fraction, allowed)
                      : std::max(fraction, allowed);
  }

  // cleanupDeployment: old ReplicaSets beyond revisionHistoryLimit.
  absl::Status Cleanup(const api::ObjectPtr& new_rs) {
    if (!revision_history_limit_.has_value()) return absl::OkStatus();
    std::vector<api::ObjectPtr> cleanable;
    for (const api::ObjectPtr& rs : OldOf(new_rs)) {
      if (!rs->being_deleted()) cleanable.push_back(rs);
    }
    const int64_t diff =
        static_cast<int64_t>(cleanable.size()) - *revision_history_limit_;
    if (diff <= 0) return absl::OkStatus();
    std::sort(cleanable.begin(), cleanable.end(),
              [](const api::ObjectPtr& a, const api::ObjectPtr& b) {
                if (Revision(*a) != Revision(*b)) {
                  return Revision(*a) < Revision(*b);
                }
                return CreatedBefore(a, b);
              });
    for (int64_t i = 0; i < diff; ++i) {
      const api::ObjectPtr& rs = cleanable[static_cast<size_t>(i)];
      if (StatusCount(*rs, "replicas") != 0 || SpecReplicas(*rs) != 0 ||
          rs->generation() > StatusCount(*rs, "observedGeneration")) {
        continue;
      }
      DeleteOptions o;
      o.precondition_uid = std::string(rs->uid());
      absl::Status s =
          registry_->Delete(replicasets_, rs->ns(), rs->name(), o).status();
      if (!s.ok() && !IsRaceError(s)) return s;
      VLOG(2) << "deployment controller: deleted old rs=" << rs->Key();
    }
    return absl::OkStatus();
  }

  // --- Rollouts ---

  absl::Status RolloutRolling() {
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr new_rs, GetNew(true));
    // reconcileNewReplicaSet.
    bool scaled = false;
    const int64_t current = SpecReplicas(*new_rs);
    if (current > replicas_) {
      KCR_ASSIGN_OR_RETURN(scaled, ScaleReplicaSet(new_rs, replicas_));
    } else if (current < replicas_) {
      const int64_t all = SumSpec(rss_);
      const int64_t max_total = replicas_ + max_surge_;
      int64_t want = current;
      if (all < max_total) {
        want = current + std::min(max_total - all, replicas_ - current);
      }
      KCR_ASSIGN_OR_RETURN(scaled, ScaleReplicaSet(new_rs, want));
    }
    new_rs = Current(new_rs);
    if (scaled) return SyncRolloutStatus(new_rs);
    KCR_ASSIGN_OR_RETURN(bool scaled_down, ReconcileOld(new_rs));
    new_rs = Current(new_rs);
    if (scaled_down) return SyncRolloutStatus(new_rs);
    if (Complete(Calculate(new_rs))) KCR_RETURN_IF_ERROR(Cleanup(new_rs));
    return SyncRolloutStatus(new_rs);
  }

  // reconcileOldReplicaSets: scale old ReplicaSets down as far as
  // maxUnavailable allows, unhealthy replicas first.
  absl::StatusOr<bool> ReconcileOld(const api::ObjectPtr& new_rs) {
    std::vector<api::ObjectPtr> old = OldOf(new_rs);
    if (SumSpec(old) == 0) return false;
    const int64_t min_available = replicas_ - max_unavailable_;
    const int64_t new_unavailable =
        SpecReplicas(*new_rs) - StatusCount(*new_rs, "availableReplicas");
    const int64_t max_scaled_down =
        SumSpec(rss_) - min_available - new_unavailable;
    if (max_scaled_down <= 0) return false;
    // cleanupUnhealthyReplicas (oldest first).
    int64_t cleaned = 0;
    for (const api::ObjectPtr& rs : Active(old)) {
      if (cleaned >= max_scaled_down) break;
      const int64_t unhealthy =
          SpecReplicas(*rs) - StatusCount(*rs, "availableReplicas");
      if (unhealthy <= 0) continue;
      const int64_t down = std::min(max_scaled_down - cleaned, unhealthy);
      KCR_RETURN_IF_ERROR(
          ScaleReplicaSet(rs, SpecReplicas(*rs) - down).status());
      cleaned += down;
    }
    // scaleDownOldReplicaSetsForRollingUpdate.
    const int64_t available = SumStatus(rss_, "availableReplicas");
    int64_t scaled = 0;
    if (available > min_available) {
      const int64_t total = available - min_available;
      for (const api::ObjectPtr& rs : OldOf(new_rs)) {
        if (scaled >= total) break;
        if (SpecReplicas(*rs) == 0) continue;
        const int64_t down = std::min(SpecReplicas(*rs), total - scaled);
        KCR_RETURN_IF_ERROR(
            ScaleReplicaSet(rs, SpecReplicas(*rs) - down).status());
        scaled += down;
      }
    }
    return cleaned + scaled > 0;
  }

  absl::Status RolloutRecreate() {
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr new_rs, GetNew(false));
    bool scaled_down = false;
    for (const api::ObjectPtr& rs : Active(OldOf(new_rs))) {
      KCR_ASSIGN_OR_RETURN(bool s, ScaleReplicaSet(rs, 0));
      scaled_down = scaled_down || s;
    }
    if (scaled_down) {
      return SyncRolloutStatus(new_rs == nullptr ? nullptr : Current(new_rs));
    }
    if (OldPodsRunning(new_rs)) {
      return SyncRolloutStatus(new_rs == nullptr ? nullptr : Current(new_rs));
    }
    if (new_rs == nullptr) {
      KCR_ASSIGN_OR_RETURN(new_rs, GetNew(true));
    }
    KCR_RETURN_IF_ERROR(ScaleReplicaSet(Current(new_rs), replicas_).status());
    new_rs = Current(new_rs);
    if (Complete(Calculate(new_rs))) KCR_RETURN_IF_ERROR(Cleanup(new_rs));
    return SyncRolloutStatus(new_rs);
  }

  // oldPodsRunning: an old ReplicaSet still reports pods, or one of its
  // pods has not finished.
  bool OldPodsRunning(const api::ObjectPtr& new_rs) const {
    std::vector<api::ObjectPtr> old = OldOf(new_rs);
    if (SumStatus(old, "replicas") > 0) return true;
    std::vector<std::string_view> uids;
    for (const api::ObjectPtr& rs : old) uids.push_back(rs->uid());
    for (const api::ObjectPtr& pod :
         registry_->storage()->Snapshot(pods_.StorageKey(), d_->ns())) {
      std::optional<api::OwnerReferenceView> ref = pod->controller_reference();
      if (!ref.has_value() ||
          std::find(uids.begin(), uids.end(), ref->uid) == uids.end()) {
        continue;
      }
      const std::string_view phase =
          field::String(field::Object(&pod->json(), "status"), "phase");
      if (phase != "Succeeded" && phase != "Failed") return true;
    }
    return false;
  }

  Registry* const registry_;
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

}  // namespace

std::string PodTemplateHash(const rapidjson::Value& pod_template,
                            std::optional<int64_t> collision_count) {
  std::string text;
  CanonicalJson(WithoutHash(&pod_template), &text);
  if (collision_count.has_value()) text += Cat(*collision_count);
  // FNV-1a, 32 bits.
  uint32_t h = 2166136261u;
  for (unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  // rand.SafeEncodeString of the decimal value.
  static constexpr char kAlphanums[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out = Cat(h);
  for (char& c : out) {
    c = kAlphanums[static_cast<unsigned char>(c) % (sizeof(kAlphanums) - 1)];
  }
  return out;
}

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
    by_ns[std::string(rs->ns())].push_back(std::move(rs));
  }
  static const std::vector<api::ObjectPtr> kNone;
  for (const api::ObjectPtr& d :
       registry_->storage()->Snapshot(deployments->StorageKey())) {
    auto it = by_ns.find(d->ns());
    DeploymentSync sync(registry_, *deployments, *replicasets, *pods, d, now);
    next = std::min(next, sync.Run(it == by_ns.end() ? kNone : it->second));
  }
  return next;
}

}  // namespace apiserver
}  // namespace kcr
