#include "apiserver/kube_controllers/statefulset_controller.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "api/json/json_util.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/kube_controllers/controller_indexes.h"
#include "apiserver/kube_controllers/pod_util.h"
#include "apiserver/kube_controllers/statefulset_internal.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/str_cat.h"
#include "glog/logging.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

namespace field = ::kcr::api::field;
using Value = rapidjson::Value;

constexpr char kStatefulSetsKey[] = "apps/statefulsets";
constexpr char kPodsKey[] = "/pods";

// kube's MaxBatchSize: the most pods one pass creates (Parallel).
constexpr int64_t kMaxBatchSize = 500;

// kube's isCreated: the API server has given the pod a phase.
bool IsCreated(const api::Object* pod) {
  return pod != nullptr && !PodPhase(*pod).empty();
}

bool IsTerminating(const api::Object& pod) { return pod.being_deleted(); }

bool IsRunningAndReady(const api::Object* pod) {
  return pod != nullptr && PodPhase(*pod) == "Running" &&
         PodReadySince(*pod).has_value();
}

// One pod of the set (null: not created yet) and what a pass learns of it.
struct Replica {
  api::ObjectPtr pod;
  int64_t ordinal = 0;
};

}  // namespace

namespace statefulset_internal {

std::optional<std::pair<std::string_view, int64_t>> ParentAndOrdinal(
    std::string_view pod_name) {
  const size_t dash = pod_name.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == pod_name.size()) {
    return std::nullopt;
  }
  const std::string_view digits = pod_name.substr(dash + 1);
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int32_t ordinal = 0;  // kube parses an int32
  if (!absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()),
                        &ordinal))
    return std::nullopt;
  return std::make_pair(pod_name.substr(0, dash), int64_t{ordinal});
}

std::vector<std::string> ClaimTemplateNames(const api::Object& set) {
  std::vector<std::string> names;
  const Value* templates =
      field::Array(field::Object(&set.json(), "spec"), "volumeClaimTemplates");
  if (templates == nullptr) return names;
  for (const Value& t : templates->GetArray()) {
    names.emplace_back(field::String(field::Object(&t, "metadata"), "name"));
  }
  return names;
}

std::string ClaimName(std::string_view template_name, std::string_view set,
                      int64_t ordinal) {
  return Cat(template_name, "-", set, "-", ordinal);
}

bool IsAvailable(const api::Object& pod, int64_t min_ready_seconds,
                 absl::Time now, absl::Time* next) {
  return IsRunningAndReady(&pod) &&
         PodAvailable(pod, min_ready_seconds, now, next);
}

std::vector<api::OwnerReferenceView> ClaimOwners(const api::Object& claim,
                                                 const api::Object& set,
                                                 const api::Object& pod,
                                                 bool scaled_down) {
  const std::vector<api::OwnerReferenceView> refs = claim.owner_references();
  // kube's matchesRef: the same kind and name, whatever the uid.
  auto is_set = [&](const api::OwnerReferenceView& r) {
    return r.api_version == "apps/v1" && r.kind == "StatefulSet" &&
           r.name == set.name();
  };
  auto is_pod = [&](const api::OwnerReferenceView& r) {
    return r.api_version == "v1" && r.kind == "Pod" && r.name == pod.name();
  };
  // A reference to an earlier set or pod of the same name: the claim is
  // left as it is (kube's hasStaleOwnerRef).
  for (const api::OwnerReferenceView& r : refs) {
    if ((is_set(r) && r.uid != set.uid()) ||
        (is_pod(r) && r.uid != pod.uid())) {
      return refs;
    }
  }
  const Value* policy = field::Object(field::Object(&set.json(), "spec"),
                                      "persistentVolumeClaimRetentionPolicy");
  const bool delete_when_deleted =
      field::String(policy, "whenDeleted") == "Delete";
  const bool delete_when_scaled =
      field::String(policy, "whenScaled") == "Delete";
  // Another controller of the claim: ours are scrubbed and none added
  // (kube's hasUnexpectedController).
  bool unexpected = false;
  if (delete_when_deleted || delete_when_scaled) {
    for (const api::OwnerReferenceView& r : refs) {
      if (!is_set(r) && !is_pod(r) && r.controller) unexpected = true;
    }
  }
  // The set's and pod's references scrubbed, then added back as the
  // policy says, as controller references.
  std::vector<api::OwnerReferenceView> out;
  for (const api::OwnerReferenceView& r : refs) {
    if (!is_set(r) && !is_pod(r)) out.push_back(r);
  }
  if (unexpected) return out;
  api::OwnerReferenceView ref;
  ref.controller = true;
  ref.block_owner_deletion = true;
  if (delete_when_scaled && scaled_down) {
    ref.api_version = "v1";
    ref.kind = "Pod";
    ref.name = pod.name();
    ref.uid = pod.uid();
    out.push_back(ref);
  } else if (delete_when_deleted) {
    ref.api_version = "apps/v1";
    ref.kind = "StatefulSet";
    ref.name = set.name();
    ref.uid = set.uid();
    out.push_back(ref);
  }
  return out;
}

}  // namespace statefulset_internal

namespace {

using statefulset_internal::ClaimName;
using statefulset_internal::ClaimOwners;
using statefulset_internal::ClaimTemplateNames;
using statefulset_internal::IsAvailable;
using statefulset_internal::ParentAndOrdinal;

std::string RevisionOf(const api::Object& pod) {
  return std::string(pod.Label(kControllerRevisionHashLabel).value_or(""));
}

bool SameOwners(const std::vector<api::OwnerReferenceView>& a,
                const std::vector<api::OwnerReferenceView>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].uid != b[i].uid || a[i].controller != b[i].controller ||
        a[i].block_owner_deletion != b[i].block_owner_deletion) {
      return false;
    }
  }
  return true;
}

// The status kube's updateStatus computes.
struct Counts {
  int64_t replicas = 0, ready = 0, available = 0, current = 0, updated = 0;
};

// One sync of one StatefulSet: kube's defaultStatefulSetControl.
class SetSync {
 public:
  SetSync(Registry* registry, EventRecorder* events, const ResourceInfo& sets,
          const ResourceInfo& pods, const ResourceInfo& claims,
          const api::ObjectPtr& set, absl::Time now)
      : registry_(registry),
        events_(events),
        sets_(sets),
        pods_(pods),
        claims_(claims),
        set_(*set),
        spec_(field::Object(&set->json(), "spec")),
        now_(now) {}

  // Syncs; returns when the set needs another pass though nothing changes.
  absl::Time Run(std::vector<api::ObjectPtr> candidates);

 private:
  // kube's ClaimPods: the pods the set owns after adoption and release.
  std::vector<api::ObjectPtr> Claim(const api::LabelSelector& selector,
                                    std::vector<api::ObjectPtr> candidates);
  // Pod `ordinal` at `revision` from `pod_template`.
  absl::StatusOr<api::ObjectBuilder> NewPod(const Value& pod_template,
                                            const std::string& revision,
                                            int64_t ordinal) const;
  // Creates the claims of `pod` that do not exist; false when one could not
  // be created or is being deleted (the pod must wait).
  bool CreateMissingClaims(std::string_view pod_name, int64_t ordinal);
  bool ClaimIsStale(int64_t ordinal) const;
  // kube's CreateStatefulPod (claims first).
  bool CreatePod(int64_t ordinal);
  bool DeletePod(const api::Object& pod);
  // Makes the claims' ownerReferences follow the retention policy; returns
  // whether any changed.
  bool FixClaimOwners(const api::Object& pod, bool scaled_down);
  // kube's UpdateStatefulPod for a pod that is created: identity labels and
  // claims.
  void UpdatePod(const api::Object& pod);
  // kube's processReplica; true: stop this pass (monotonic only).
  bool ProcessReplica(Replica* r, bool monotonic);
  // kube's processCondemned.
  bool ProcessCondemned(const api::ObjectPtr& pod,
                        const api::Object* first_unavailable, bool monotonic);
  bool Unavailable(const api::Object* pod) {
    return pod == nullptr || IsTerminating(*pod) ||
           !IsAvailable(*pod, min_ready_seconds_, now_, &next_);
  }
  Counts Count(const std::vector<Replica>& replicas,
               const std::vector<api::ObjectPtr>& condemned);
  void WriteStatus(Counts counts);
  void Event(bool warning, std::string_view reason, std::string_view message) {
    events_->Record(set_, "apps/v1", "StatefulSet", warning, reason, message,
                    now_);
  }

  Registry* const registry_;
  EventRecorder* const events_;
  const ResourceInfo& sets_;
  const ResourceInfo& pods_;
  const ResourceInfo& claims_;
  const api::Object& set_;
  const Value* const spec_;
  const absl::Time now_;
  int64_t min_ready_seconds_ = 0;
  statefulset_internal::Revisions revisions_;
  absl::Time next_ = absl::InfiniteFuture();
  // Pods created this pass.
  int64_t creates_ = 0;
};

std::vector<api::ObjectPtr> SetSync::Claim(
    const api::LabelSelector& selector,
    std::vector<api::ObjectPtr> candidates) {
  std::vector<api::ObjectPtr> owned;
  for (const api::ObjectPtr& pod : candidates) {
    const std::optional<api::OwnerReferenceView> ref =
        pod->controller_reference();
    const auto parent = ParentAndOrdinal(pod->name());
    const bool matches =
        parent.has_value() && parent->first == set_.name() &&
        selector.Matches(
            field::Object(field::Object(&pod->json(), "metadata"), "labels"));
    if (ref.has_value() && ref->uid == set_.uid()) {
      if (matches) {
        owned.push_back(pod);
      } else if (!set_.being_deleted()) {
        api::ObjectBuilder b = pod->ToBuilder();
        b.RemoveOwnerReference(set_.uid());
        absl::Status s =
            registry_
                ->Update(pods_, pod->namespace_(), pod->name(), std::move(b))
                .status();
        if (!s.ok() && !IsRaceError(s)) {
          LOG(WARNING) << "statefulset controller: releasing pod=" << pod->Key()
                       << " failed: " << s;
        }
      }
      continue;
    }
    if (ref.has_value() || !matches || set_.being_deleted() ||
        pod->being_deleted()) {
      continue;
    }
    api::ObjectBuilder b = pod->ToBuilder();
    api::OwnerReferenceView adopt;
    adopt.api_version = "apps/v1";
    adopt.kind = "StatefulSet";
    adopt.name = set_.name();
    adopt.uid = set_.uid();
    adopt.controller = true;
    adopt.block_owner_deletion = true;
    b.AddOwnerReference(adopt);
    absl::StatusOr<WriteResult> w =
        registry_->Update(pods_, pod->namespace_(), pod->name(), std::move(b));
    if (w.ok()) {
      owned.push_back(w->object);
    } else if (!IsRaceError(w.status())) {
      LOG(WARNING) << "statefulset controller: adopting pod=" << pod->Key()
                   << " failed: " << w.status();
    }
  }
  return owned;
}

absl::StatusOr<api::ObjectBuilder> SetSync::NewPod(const Value& pod_template,
                                                   const std::string& revision,
                                                   int64_t ordinal) const {
  const std::string name = Cat(set_.name(), "-", ordinal);
  api::ObjectBuilder b("v1", "Pod");
  b.SetName(name);
  b.SetNamespace(set_.namespace_());
  const Value* meta = field::Object(&pod_template, "metadata");
  for (const char* key : {"labels", "annotations", "finalizers"}) {
    if (const Value* v = field::Member(meta, key); v != nullptr) {
      if (absl::Status s = b.Set(Cat("/metadata/", key), *v); !s.ok()) return s;
    }
  }
  b.SetLabel(kStatefulSetPodNameLabel, name);
  b.SetLabel(kPodIndexLabel, std::to_string(ordinal));
  b.SetLabel(kControllerRevisionHashLabel, revision);
  api::OwnerReferenceView ref;
  ref.api_version = "apps/v1";
  ref.kind = "StatefulSet";
  ref.name = set_.name();
  ref.uid = set_.uid();
  ref.controller = true;
  ref.block_owner_deletion = true;
  b.AddOwnerReference(ref);
  if (const Value* spec = field::Object(&pod_template, "spec");
      spec != nullptr) {
    if (absl::Status s = b.Set("/spec", *spec); !s.ok()) return s;
  }
  (void)b.SetString("/spec/hostname", name);
  const std::string_view service = field::String(spec_, "serviceName");
  if (!service.empty()) (void)b.SetString("/spec/subdomain", service);
  // kube's updateStorage: a volume per claim template, then the template's
  // own volumes of other names.
  const std::vector<std::string> claims = ClaimTemplateNames(set_);
  if (!claims.empty()) {
    rapidjson::MemoryPoolAllocator<>& a = b.allocator();
    Value volumes(rapidjson::kArrayType);
    for (const std::string& claim : claims) {
      Value source(rapidjson::kObjectType);
      source.AddMember("claimName",
                       Value(ClaimName(claim, set_.name(), ordinal).c_str(), a),
                       a);
      Value volume(rapidjson::kObjectType);
      volume.AddMember("name", Value(claim.c_str(), a), a);
      volume.AddMember("persistentVolumeClaim", source, a);
      volumes.PushBack(volume, a);
    }
    if (const Value* own =
            field::Array(field::Object(&pod_template, "spec"), "volumes");
        own != nullptr) {
      for (const Value& v : own->GetArray()) {
        const std::string_view n = field::String(&v, "name");
        if (std::find(claims.begin(), claims.end(), n) != claims.end()) {
          continue;
        }
        volumes.PushBack(Value(v, a), a);
      }
    }
    if (absl::Status s = b.Set("/spec/volumes", volumes); !s.ok()) return s;
  }
  return b;
}

bool SetSync::ClaimIsStale(int64_t ordinal) const {
  for (const std::string& t : ClaimTemplateNames(set_)) {
    api::ObjectPtr claim =
        registry_->storage()->Get(claims_.StorageKey(), set_.namespace_(),
                                  ClaimName(t, set_.name(), ordinal));
    if (claim != nullptr && claim->being_deleted()) return true;
  }
  return false;
}

bool SetSync::CreateMissingClaims(std::string_view pod_name, int64_t ordinal) {
  const Value* templates = field::Array(spec_, "volumeClaimTemplates");
  if (templates == nullptr) return true;
  const Value* match_labels =
      field::Object(field::Object(spec_, "selector"), "matchLabels");
  bool ok = true;
  for (const Value& t : templates->GetArray()) {
    const Value* meta = field::Object(&t, "metadata");
    const std::string name =
        ClaimName(field::String(meta, "name"), set_.name(), ordinal);
    api::ObjectPtr existing = registry_->storage()->Get(
        claims_.StorageKey(), set_.namespace_(), name);
    if (existing != nullptr) {
      if (existing->being_deleted()) ok = false;
      continue;
    }
    api::ObjectBuilder b("v1", "PersistentVolumeClaim");
    b.SetName(name);
    b.SetNamespace(set_.namespace_());
    if (const Value* v = field::Member(meta, "labels"); v != nullptr) {
      (void)b.Set("/metadata/labels", *v);
    }
    if (const Value* v = field::Member(meta, "annotations"); v != nullptr) {
      (void)b.Set("/metadata/annotations", *v);
    }
    if (match_labels != nullptr) {
      for (const auto& m : match_labels->GetObject()) {
        if (m.value.IsString()) {
          b.SetLabel(field::View(m.name), field::View(m.value));
        }
      }
    }
    if (const Value* spec = field::Object(&t, "spec"); spec != nullptr) {
      (void)b.Set("/spec", *spec);
    }
    // The set's ownerReference as the retention policy has it once the pod
    // exists (the pod is in range, so it owns nothing yet).
    if (field::String(
            field::Object(spec_, "persistentVolumeClaimRetentionPolicy"),
            "whenDeleted") == "Delete") {
      api::OwnerReferenceView ref;
      ref.api_version = "apps/v1";
      ref.kind = "StatefulSet";
      ref.name = set_.name();
      ref.uid = set_.uid();
      ref.controller = true;
      ref.block_owner_deletion = true;
      b.AddOwnerReference(ref);
    }
    absl::StatusOr<WriteResult> created =
        registry_->Create(claims_, set_.namespace_(), std::move(b));
    if (created.ok()) {
      Event(false, "SuccessfulCreate",
            Cat("create Claim ", name, " Pod ", pod_name, " in StatefulSet ",
                set_.name(), " success"));
      continue;
    }
    ok = false;
    if (created.status().code() != absl::StatusCode::kAlreadyExists) {
      Event(
          true, "FailedCreate",
          Cat("create Claim ", name, " for Pod ", pod_name, " in StatefulSet ",
              set_.name(), " failed error: ", created.status().message()));
    }
  }
  return ok;
}

bool SetSync::CreatePod(int64_t ordinal) {
  // kube's newVersionedStatefulSetPod: below the partition, the current
  // revision.
  const Value* strategy = field::Object(spec_, "updateStrategy");
  const int64_t start =
      field::Int64(field::Object(spec_, "ordinals"), "start").value_or(0);
  const bool at_current =
      field::String(strategy, "type") == "RollingUpdate" &&
      ordinal < start + field::Int64(field::Object(strategy, "rollingUpdate"),
                                     "partition")
                            .value_or(0);
  const std::string& revision =
      at_current ? revisions_.current_name : revisions_.update_name;
  const Value* pod_template =
      at_current ? revisions_.current_template : revisions_.update_template;
  const std::string name = Cat(set_.name(), "-", ordinal);
  if (pod_template == nullptr) return false;
  absl::StatusOr<api::ObjectBuilder> pod =
      NewPod(*pod_template, revision, ordinal);
  if (!pod.ok()) {
    LOG_EVERY_N(WARNING, 100)
        << "statefulset controller: bad template set=" << set_.Key() << ": "
        << pod.status();
    return false;
  }
  if (!CreateMissingClaims(name, ordinal)) {
    next_ = std::min(next_, now_ + absl::Seconds(1));
    return false;
  }
  absl::StatusOr<WriteResult> created =
      registry_->Create(pods_, set_.namespace_(), std::move(*pod));
  if (!created.ok()) {
    if (created.status().code() == absl::StatusCode::kAlreadyExists) {
      return false;
    }
    LOG_EVERY_N(WARNING, 100) << "statefulset controller: creating pod " << name
                              << " failed: " << created.status();
    Event(true, "FailedCreate",
          Cat("create Pod ", name, " in StatefulSet ", set_.name(),
              " failed error: ", created.status().message()));
    next_ = std::min(next_, now_ + absl::Seconds(1));
    return false;
  }
  Event(
      false, "SuccessfulCreate",
      Cat("create Pod ", name, " in StatefulSet ", set_.name(), " successful"));
  return true;
}

bool SetSync::DeletePod(const api::Object& pod) {
  DeleteOptions o;
  o.precondition_uid = std::string(pod.uid());
  absl::Status s =
      registry_->Delete(pods_, pod.namespace_(), pod.name(), o).status();
  if (s.ok()) {
    Event(false, "SuccessfulDelete",
          Cat("delete Pod ", pod.name(), " in StatefulSet ", set_.name(),
              " successful"));
    return true;
  }
  if (!IsRaceError(s)) {
    Event(true, "FailedDelete",
          Cat("delete Pod ", pod.name(), " in StatefulSet ", set_.name(),
              " failed error: ", s.message()));
    next_ = std::min(next_, now_ + absl::Seconds(1));
  }
  return false;
}

bool SetSync::FixClaimOwners(const api::Object& pod, bool scaled_down) {
  const auto parent = ParentAndOrdinal(pod.name());
  if (!parent.has_value()) return false;
  bool changed = false;
  for (const std::string& t : ClaimTemplateNames(set_)) {
    const std::string name = ClaimName(t, set_.name(), parent->second);
    api::ObjectPtr claim = registry_->storage()->Get(claims_.StorageKey(),
                                                     set_.namespace_(), name);
    if (claim == nullptr || claim->being_deleted()) continue;
    const std::vector<api::OwnerReferenceView> want =
        ClaimOwners(*claim, set_, pod, scaled_down);
    if (SameOwners(want, claim->owner_references())) continue;
    api::ObjectBuilder b = claim->ToBuilder();
    b.SetOwnerReferences(want);
    absl::Status s =
        registry_->Update(claims_, set_.namespace_(), name, std::move(b))
            .status();
    if (s.ok()) {
      changed = true;
    } else if (!IsRaceError(s)) {
      LOG(WARNING) << "statefulset controller: owners of claim=" << name
                   << " failed: " << s;
      next_ = std::min(next_, now_ + absl::Seconds(1));
    }
  }
  return changed;
}

void SetSync::UpdatePod(const api::Object& pod) {
  const auto parent = ParentAndOrdinal(pod.name());
  if (!parent.has_value()) return;
  const std::string index = std::to_string(parent->second);
  const bool identity = pod.Label(kStatefulSetPodNameLabel) == pod.name() &&
                        pod.Label(kPodIndexLabel) == index;
  const bool claims = FixClaimOwners(pod, /*scaled_down=*/false);
  if (identity && !claims) return;
  if (!identity) {
    api::ObjectBuilder b = pod.ToBuilder();
    b.SetLabel(kStatefulSetPodNameLabel, pod.name());
    b.SetLabel(kPodIndexLabel, index);
    absl::Status s =
        registry_->Update(pods_, pod.namespace_(), pod.name(), std::move(b))
            .status();
    if (!s.ok()) {
      if (!IsRaceError(s)) {
        Event(true, "FailedUpdate",
              Cat("update Pod ", pod.name(), " in StatefulSet ", set_.name(),
                  " failed error: ", s.message()));
      }
      return;
    }
  }
  Event(false, "SuccessfulUpdate",
        Cat("update Pod ", pod.name(), " in StatefulSet ", set_.name(),
            " successful"));
}

bool SetSync::ProcessReplica(Replica* r, bool monotonic) {
  const api::Object* pod = r->pod.get();
  if (pod != nullptr &&
      (PodPhase(*pod) == "Failed" || PodPhase(*pod) == "Succeeded")) {
    // Recreated on the next pass, once the deletion is seen.
    if (!pod->being_deleted()) DeletePod(*pod);
    return true;
  }
  if (!IsCreated(pod)) {
    if (ClaimIsStale(r->ordinal)) {
      next_ = std::min(next_, now_ + absl::Seconds(1));
      return true;
    }
    if (creates_ >= kMaxBatchSize) {
      // The rest on the next pass, at once: a pass stays short.
      next_ = now_;
      return true;
    }
    ++creates_;
    if (!CreatePod(r->ordinal)) return true;
    // Parallel goes on to the next ordinal; the pod is looked at again when
    // its creation is seen.
    return monotonic;
  }
  if (PodPhase(*pod) == "Pending") CreateMissingClaims(pod->name(), r->ordinal);
  if (IsTerminating(*pod) && monotonic) return true;
  if (!IsRunningAndReady(pod) && monotonic) return true;
  if (!IsAvailable(*pod, min_ready_seconds_, now_, &next_) && monotonic) {
    return true;
  }
  if (!IsTerminating(*pod)) UpdatePod(*pod);
  return false;
}

bool SetSync::ProcessCondemned(const api::ObjectPtr& pod,
                               const api::Object* first_unavailable,
                               bool monotonic) {
  if (IsTerminating(*pod)) return monotonic;
  if (monotonic && pod.get() != first_unavailable &&
      (!IsRunningAndReady(pod.get()) ||
       !IsAvailable(*pod, min_ready_seconds_, now_, &next_))) {
    return true;
  }
  DeletePod(*pod);
  return true;
}

Counts SetSync::Count(const std::vector<Replica>& replicas,
                      const std::vector<api::ObjectPtr>& condemned) {
  Counts c;
  auto add = [&](const api::Object* pod) {
    if (!IsCreated(pod)) return;
    ++c.replicas;
    if (IsRunningAndReady(pod)) {
      ++c.ready;
      if (IsAvailable(*pod, min_ready_seconds_, now_, &next_)) ++c.available;
    }
    if (IsTerminating(*pod)) return;
    const std::string revision = RevisionOf(*pod);
    if (revision == revisions_.current_name) ++c.current;
    if (revision == revisions_.update_name) ++c.updated;
  };
  for (const Replica& r : replicas) add(r.pod.get());
  for (const api::ObjectPtr& pod : condemned) add(pod.get());
  return c;
}

void SetSync::WriteStatus(Counts c) {
  std::string current_revision = revisions_.current_name;
  // kube's completeRollingUpdate: every wanted pod exists, is updated and
  // is ready.
  const int64_t wanted = field::Int64(spec_, "replicas").value_or(1);
  if (field::String(field::Object(spec_, "updateStrategy"), "type") ==
          "RollingUpdate" &&
      c.updated == wanted && c.ready == wanted && c.replicas == wanted) {
    c.current = c.updated;
    current_revision = revisions_.update_name;
  }
  rapidjson::MemoryPoolAllocator<> a(1024);
  Value status(rapidjson::kObjectType);
  auto count = [&](const char* key, int64_t v, bool omit_zero) {
    if (v != 0 || !omit_zero) status.AddMember(Value(key, a), Value(v), a);
  };
  count("observedGeneration", set_.generation(), true);
  count("replicas", c.replicas, false);
  count("readyReplicas", c.ready, true);
  count("currentReplicas", c.current, true);
  count("updatedReplicas", c.updated, true);
  if (!current_revision.empty()) {
    status.AddMember("currentRevision", Value(current_revision.c_str(), a), a);
  }
  if (!revisions_.update_name.empty()) {
    status.AddMember("updateRevision", Value(revisions_.update_name.c_str(), a),
                     a);
  }
  count("collisionCount", revisions_.collision_count, false);
  count("availableReplicas", c.available, false);
  const Value* old_status = field::Object(&set_.json(), "status");
  if (old_status != nullptr) {
    // Conditions are not the controller's; keep what others wrote.
    if (const Value* conds = field::Member(old_status, "conditions");
        conds != nullptr) {
      status.AddMember("conditions", Value(*conds, a), a);
    }
    if (json::JsonDeepEqual(status, *old_status)) return;
  }
  api::ObjectBuilder b = StatusWriteOf(set_, /*with_annotations=*/true);
  (void)b.Set("/status", status);
  WriteOptions w;
  w.subresource = "status";
  absl::Status s =
      registry_->Update(sets_, set_.namespace_(), set_.name(), std::move(b), w)
          .status();
  if (!s.ok() && !IsRaceError(s)) {
    LOG(WARNING) << "statefulset controller: status of set=" << set_.Key()
                 << " failed: " << s;
  }
}

absl::Time SetSync::Run(std::vector<api::ObjectPtr> candidates) {
  const Value* selector_json = field::Member(spec_, "selector");
  if (selector_json == nullptr) return absl::InfiniteFuture();
  absl::StatusOr<api::LabelSelector> selector =
      api::LabelSelector::FromLabelSelector(*selector_json);
  if (!selector.ok()) {
    LOG_EVERY_N(WARNING, 100)
        << "statefulset controller: bad selector set=" << set_.Key() << ": "
        << selector.status();
    return absl::InfiniteFuture();
  }
  min_ready_seconds_ = field::Int64(spec_, "minReadySeconds").value_or(0);
  const std::vector<api::ObjectPtr> pods = Claim(*selector, candidates);

  absl::StatusOr<statefulset_internal::Revisions> revisions =
      statefulset_internal::ResolveRevisions(registry_, set_, pods);
  if (!revisions.ok()) {
    LOG_EVERY_N(WARNING, 100)
        << "statefulset controller: revisions of set=" << set_.Key() << ": "
        << revisions.status();
    return now_ + absl::Seconds(1);
  }
  revisions_ = std::move(*revisions);

  // kube's updateStatefulSet: the replicas by ordinal and the condemned.
  const int64_t replica_count = field::Int64(spec_, "replicas").value_or(1);
  const int64_t start =
      field::Int64(field::Object(spec_, "ordinals"), "start").value_or(0);
  std::vector<Replica> replicas(static_cast<size_t>(
      std::max<int64_t>(0, std::min<int64_t>(replica_count, 1 << 20))));
  for (size_t i = 0; i < replicas.size(); ++i) {
    replicas[i].ordinal = start + static_cast<int64_t>(i);
  }
  std::vector<api::ObjectPtr> condemned;
  for (const api::ObjectPtr& pod : pods) {
    const auto parent = ParentAndOrdinal(pod->name());
    if (!parent.has_value()) continue;
    const int64_t ord = parent->second;
    if (ord >= start && ord < start + static_cast<int64_t>(replicas.size())) {
      replicas[static_cast<size_t>(ord - start)].pod = pod;
    } else {
      condemned.push_back(pod);
    }
  }
  // Highest ordinal first.
  std::sort(condemned.begin(), condemned.end(),
            [](const api::ObjectPtr& a, const api::ObjectPtr& b) {
              return ParentAndOrdinal(a->name())->second >
                     ParentAndOrdinal(b->name())->second;
            });
  const api::Object* first_unavailable = nullptr;
  for (const Replica& r : replicas) {
    if (Unavailable(r.pod.get())) {
      first_unavailable = r.pod.get();
      break;
    }
  }
  if (first_unavailable == nullptr) {
    for (auto it = condemned.rbegin(); it != condemned.rend(); ++it) {
      if (Unavailable(it->get())) {
        first_unavailable = it->get();
        break;
      }
    }
  }
  Counts counts = Count(replicas, condemned);
  if (set_.being_deleted()) {
    WriteStatus(counts);
    return next_;
  }
  const bool monotonic =
      field::String(spec_, "podManagementPolicy") != "Parallel";
  auto finish = [&]() {
    WriteStatus(counts);
    return next_;
  };

  for (Replica& r : replicas) {
    if (ProcessReplica(&r, monotonic) && monotonic) return finish();
  }
  for (const api::ObjectPtr& pod : condemned) {
    if (!IsTerminating(*pod)) FixClaimOwners(*pod, /*scaled_down=*/true);
  }
  for (const api::ObjectPtr& pod : condemned) {
    if (ProcessCondemned(pod, first_unavailable, monotonic) && monotonic) {
      return finish();
    }
  }
  const Value* strategy = field::Object(spec_, "updateStrategy");
  if (field::String(strategy, "type") == "OnDelete") return finish();

  // Rolling update: the highest ordinal not at the update revision goes
  // first, once every pod above it is available.
  const int64_t partition =
      field::Int64(field::Object(strategy, "rollingUpdate"), "partition")
          .value_or(0);
  for (int64_t target = static_cast<int64_t>(replicas.size()) - 1;
       target >= partition; --target) {
    const api::Object* pod = replicas[static_cast<size_t>(target)].pod.get();
    if (pod == nullptr) return finish();
    if (RevisionOf(*pod) != revisions_.update_name && !IsTerminating(*pod)) {
      if (DeletePod(*pod)) --counts.current;
      return finish();
    }
    if (Unavailable(pod)) return finish();
  }
  return finish();
}

}  // namespace

StatefulSetController::StatefulSetController(
    Registry* registry, const Clock* clock,
    IncrementalControllerOptions options)
    : IncrementalController(registry, clock, options),
      events_(registry, "statefulset-controller") {
  AddControllerIndexes(registry->storage());
}

bool StatefulSetController::Wants(const StoredEvent& event) const {
  return event.collection == kStatefulSetsKey || event.collection == kPodsKey;
}

void StatefulSetController::EnqueueForPod(const api::Object& pod) {
  if (const std::optional<api::OwnerReferenceView> ref =
          pod.controller_reference()) {
    if (ref->kind == "StatefulSet" && ref->api_version == "apps/v1") {
      Enqueue(Storage::Key(pod.namespace_(), ref->name));
    }
    return;
  }
  if (pod.being_deleted()) return;
  // An orphan: a set adopts only the pods its name names.
  if (const auto parent = ParentAndOrdinal(pod.name()); parent.has_value()) {
    Enqueue(Storage::Key(pod.namespace_(), parent->first));
  }
}

void StatefulSetController::OnEvent(const StoredEvent& event) {
  if (event.collection == kStatefulSetsKey) {
    Enqueue(Storage::Key(event.object->namespace_(), event.object->name()));
  } else if (event.collection == kPodsKey) {
    EnqueueForPod(*event.object);
    if (event.previous != nullptr) EnqueueForPod(*event.previous);
  }
}

void StatefulSetController::EnqueueAll() {
  for (const api::ObjectPtr& set : storage()->Snapshot(kStatefulSetsKey)) {
    Enqueue(Storage::Key(set->namespace_(), set->name()));
  }
}

absl::Time StatefulSetController::SyncKey(const std::string& key,
                                          absl::Time now) {
  ResourceRegistry* resources = registry()->resources();
  ResourceInfoPtr sets = resources->Lookup("apps", "v1", "statefulsets");
  ResourceInfoPtr pods = resources->Lookup("", "v1", "pods");
  ResourceInfoPtr claims =
      resources->Lookup("", "v1", "persistentvolumeclaims");
  if (sets == nullptr || pods == nullptr || claims == nullptr) {
    return absl::InfiniteFuture();
  }
  api::ObjectPtr set = storage()->GetByKey(sets->StorageKey(), key);
  // Gone: its pods are the garbage collector's.
  if (set == nullptr) return absl::InfiniteFuture();
  std::vector<api::ObjectPtr> candidates =
      storage()->ByIndex(pods->StorageKey(), kControllerIndex, set->uid());
  for (api::ObjectPtr& orphan :
       storage()->ByIndex(pods->StorageKey(), kControllerIndex,
                          OrphanKey(set->namespace_()))) {
    const auto parent = ParentAndOrdinal(orphan->name());
    if (parent.has_value() && parent->first == set->name()) {
      candidates.push_back(std::move(orphan));
    }
  }
  SetSync sync(registry(), &events_, *sets, *pods, *claims, set, now);
  return sync.Run(std::move(candidates));
}

}  // namespace apiserver
}  // namespace kcr
