// The new ReplicaSet and the revisions of a Deployment (kube's
// getNewReplicaSet and cleanupDeployment, and deployment/util's revision
// annotations): the pod-template-hash, finding or creating the new
// ReplicaSet, the revision, revision-history, desired-replicas and
// max-replicas annotations, and the deletion of old ReplicaSets beyond
// spec.revisionHistoryLimit.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/types/field.h"
#include "apiserver/kube_controllers/deployment_controller.h"
#include "apiserver/kube_controllers/deployment_internal.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "apiserver/kube_controllers/template_hash.h"
#include "base/status_macros.h"
#include "base/str_cat.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {
namespace deployment_internal {
namespace {

namespace field = ::kcr::api::field;
using Value = rapidjson::Value;

// Annotations a ReplicaSet does not copy from its Deployment.
bool SkipCopyAnnotation(std::string_view key) {
  return key == "kubectl.kubernetes.io/last-applied-configuration" ||
         key == kRevisionAnnotation || key == kRevisionHistoryAnnotation ||
         key == kDesiredReplicasAnnotation || key == kMaxReplicasAnnotation ||
         key == "deprecated.deployment.rollback.to";
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

// Whether `labels` is a map WithoutHash would leave empty, and so remove.
bool OnlyHashLabel(const Value& labels) {
  if (!labels.IsObject()) return false;
  for (const auto& m : labels.GetObject()) {
    if (field::View(m.name) != kPodTemplateHashLabel) return false;
  }
  return true;
}

// JsonDeepEqual of `x` and `y` without member `skip` (when an object).
bool EqualWithout(const Value& x, const Value& y, std::string_view skip) {
  if (!x.IsObject() || !y.IsObject()) return json::JsonDeepEqual(x, y);
  auto counted = [&](const Value& v) {
    size_t n = 0;
    for (const auto& m : v.GetObject()) n += field::View(m.name) != skip;
    return n;
  };
  if (counted(x) != counted(y)) return false;
  for (const auto& m : x.GetObject()) {
    if (field::View(m.name) == skip) continue;
    auto it = y.FindMember(m.name);
    if (it == y.MemberEnd() || !json::JsonDeepEqual(m.value, it->value)) {
      return false;
    }
  }
  return true;
}

// The metadata of two templates, as WithoutHash would leave them.
bool MetadataEqualIgnoreHash(const Value& x, const Value& y) {
  if (!x.IsObject() || !y.IsObject()) return json::JsonDeepEqual(x, y);
  const Value* x_labels = field::Member(&x, "labels");
  const Value* y_labels = field::Member(&y, "labels");
  const bool x_dropped = x_labels != nullptr && OnlyHashLabel(*x_labels);
  const bool y_dropped = y_labels != nullptr && OnlyHashLabel(*y_labels);
  if ((x_labels == nullptr || x_dropped) !=
      (y_labels == nullptr || y_dropped)) {
    return false;
  }
  if (!EqualWithout(x, y, "labels")) return false;
  if (x_labels == nullptr || x_dropped) return true;
  return EqualWithout(*x_labels, *y_labels, kPodTemplateHashLabel);
}

// JsonDeepEqual(WithoutHash(a), WithoutHash(b)) without the two copies: the
// deployment controller compares its template with every ReplicaSet's on
// each pass.
bool EqualIgnoreHash(const Value* a, const Value* b) {
  static const Value* const kEmpty = new Value(rapidjson::kObjectType);
  const Value& x = a == nullptr ? *kEmpty : *a;
  const Value& y = b == nullptr ? *kEmpty : *b;
  if (!x.IsObject() || !y.IsObject()) return json::JsonDeepEqual(x, y);
  const Value* x_meta = field::Member(&x, "metadata");
  const Value* y_meta = field::Member(&y, "metadata");
  if ((x_meta == nullptr) != (y_meta == nullptr)) return false;
  if (!EqualWithout(x, y, "metadata")) return false;
  return x_meta == nullptr || MetadataEqualIgnoreHash(*x_meta, *y_meta);
}

// The revision annotation as a number; 0 when absent or malformed.
int64_t Revision(const api::Object& rs) {
  int64_t v = 0;
  std::optional<std::string_view> a = rs.Annotation(kRevisionAnnotation);
  if (!a.has_value() || !ParseInt(*a, &v)) return 0;
  return v;
}

std::string EscapePointer(std::string_view key) {
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

std::optional<std::string> AnnotationOf(const api::ObjectBuilder& b,
                                        std::string_view key) {
  const Value* v = b.Find(Cat("/metadata/annotations/", EscapePointer(key)));
  if (v == nullptr || !v->IsString()) return std::nullopt;
  return std::string(field::View(*v));
}

}  // namespace

api::ObjectPtr DeploymentSync::FindNew() const {
  for (const api::ObjectPtr& rs : rss_) {
    if (EqualIgnoreHash(TemplateOf(*rs), TemplateOf(*d_))) return rs;
  }
  return nullptr;
}

bool DeploymentSync::CopyDeploymentAnnotations(api::ObjectBuilder* b) const {
  bool changed = false;
  for (const auto& [k, v] : d_->annotations().ToMap()) {
    if (SkipCopyAnnotation(k)) continue;
    const Value* cur = b->Find(Cat("/metadata/annotations/", EscapePointer(k)));
    if (cur != nullptr && cur->IsString() && field::View(*cur) == v) {
      continue;
    }
    b->SetAnnotation(k, v);
    changed = true;
  }
  return changed;
}

bool DeploymentSync::SetReplicasAnnotations(api::ObjectBuilder* b) const {
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

bool DeploymentSync::SetNewReplicaSetAnnotations(api::ObjectBuilder* b,
                                                 int64_t new_revision,
                                                 bool exists) const {
  bool changed = CopyDeploymentAnnotations(b);
  const std::optional<std::string> old = AnnotationOf(*b, kRevisionAnnotation);
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

absl::StatusOr<api::ObjectPtr> DeploymentSync::GetNew(bool create) {
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
      KCR_ASSIGN_OR_RETURN(
          WriteResult w, registry_->Update(replicasets_, existing->namespace_(),
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
  b.SetNamespace(d_->namespace_());
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
    KCR_RETURN_IF_ERROR(b.SetInt("/spec/minReadySeconds", min_ready_seconds_));
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
      registry_->Create(replicasets_, d_->namespace_(), std::move(b));
  api::ObjectPtr rs;
  bool already_exists = false;
  if (!created.ok()) {
    if (api::StatusError::FromStatus(created.status()).reason !=
        "AlreadyExists") {
      return created.status();
    }
    // Ours already (a pass that lost its answer), or a hash collision.
    api::ObjectPtr other = registry_->storage()->Get(replicasets_.StorageKey(),
                                                     d_->namespace_(), name);
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
    if (new_replicas > 0) {
      events_->Record(*d_, "apps/v1", "Deployment", false, "ScalingReplicaSet",
                      Cat("Scaled up replica set ", rs->name(), " from 0 to ",
                          new_replicas),
                      now_);
    }
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

absl::Status DeploymentSync::Cleanup(const api::ObjectPtr& new_rs) {
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
        registry_->Delete(replicasets_, rs->namespace_(), rs->name(), o)
            .status();
    if (!s.ok() && !IsRaceError(s)) return s;
    VLOG(2) << "deployment controller: deleted old rs=" << rs->Key();
  }
  return absl::OkStatus();
}

}  // namespace deployment_internal

std::string PodTemplateHash(const rapidjson::Value& pod_template,
                            std::optional<int64_t> collision_count) {
  std::string text;
  AppendCanonicalJson(deployment_internal::WithoutHash(&pod_template), &text);
  return SafeEncodedHash(text, collision_count);
}

bool PodTemplatesEqualIgnoringHash(const rapidjson::Value* a,
                                   const rapidjson::Value* b) {
  return deployment_internal::EqualIgnoreHash(a, b);
}

}  // namespace apiserver
}  // namespace kcr
