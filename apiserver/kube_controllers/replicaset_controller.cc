#include "apiserver/kube_controllers/replicaset_controller.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/json/json_util.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/kube_controllers/controller_indexes.h"
#include "apiserver/kube_controllers/pod_util.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/str_cat.h"
#include "glog/logging.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

namespace field = ::kcr::api::field;
using Value = rapidjson::Value;

constexpr char kPodsKey[] = "/pods";

// kube's burstReplicas: the most pods one pass creates or deletes.
constexpr int64_t kBurstReplicas = 500;

bool IsActive(const api::Object& pod) {
  if (pod.being_deleted()) return false;
  const std::string_view phase =
      field::String(field::Object(&pod.json(), "status"), "phase");
  return phase != "Succeeded" && phase != "Failed";
}

// Whether `labels` holds every entry of the template's labels.
bool FullyLabeled(const api::Object& pod, const Value* template_labels) {
  if (template_labels == nullptr || !template_labels->IsObject()) return true;
  for (const auto& m : template_labels->GetObject()) {
    if (!m.value.IsString()) continue;
    std::optional<std::string_view> v = pod.Label(field::View(m.name));
    if (!v.has_value() || *v != field::View(m.value)) return false;
  }
  return true;
}

// The deletion order of kube's controller.ActivePods: the pods to delete
// first sort first.
int PhaseRank(const api::Object& pod) {
  const std::string_view phase =
      field::String(field::Object(&pod.json(), "status"), "phase");
  if (phase == "Pending" || phase.empty()) return 0;
  if (phase == "Unknown") return 1;
  return 2;
}

bool DeleteBefore(const api::ObjectPtr& a, const api::ObjectPtr& b) {
  const bool a_assigned =
      !field::String(field::Object(&a->json(), "spec"), "nodeName").empty();
  const bool b_assigned =
      !field::String(field::Object(&b->json(), "spec"), "nodeName").empty();
  if (a_assigned != b_assigned) return !a_assigned;
  if (PhaseRank(*a) != PhaseRank(*b)) return PhaseRank(*a) < PhaseRank(*b);
  const std::optional<absl::Time> ra = PodReadySince(*a),
                                  rb = PodReadySince(*b);
  if (ra.has_value() != rb.has_value()) return !ra.has_value();
  if (ra.has_value() && *ra != *rb) return *ra > *rb;
  if (a->creation_timestamp() != b->creation_timestamp()) {
    return a->creation_timestamp() > b->creation_timestamp();
  }
  return a->name() < b->name();
}

// A pod for `rs` from its template.
absl::StatusOr<api::ObjectBuilder> NewPod(const api::Object& rs,
                                          const api::OwnerReferenceView& ref) {
  const Value* tmpl =
      field::Object(field::Object(&rs.json(), "spec"), "template");
  api::ObjectBuilder b("v1", "Pod");
  b.SetGenerateName(Cat(rs.name(), "-"));
  b.SetNamespace(rs.namespace_());
  const Value* meta = field::Object(tmpl, "metadata");
  for (const char* key : {"labels", "annotations", "finalizers"}) {
    if (const Value* v = field::Member(meta, key); v != nullptr) {
      if (absl::Status s = b.Set(Cat("/metadata/", key), *v); !s.ok()) return s;
    }
  }
  b.AddOwnerReference(ref);
  if (const Value* spec = field::Object(tmpl, "spec"); spec != nullptr) {
    if (absl::Status s = b.Set("/spec", *spec); !s.ok()) return s;
  }
  return b;
}

}  // namespace

ReplicatedKind ReplicatedKind::ReplicaSets() {
  return {"apps",       "replicasets",           "apps/v1",
          "ReplicaSet", "replicaset-controller", "replicaset-controller",
          false};
}

ReplicatedKind ReplicatedKind::ReplicationControllers() {
  return {"",
          "replicationcontrollers",
          "v1",
          "ReplicationController",
          "replicationcontroller-controller",
          "replication-controller",
          true};
}

ReplicaSetController::ReplicaSetController(Registry* registry,
                                           const Clock* clock,
                                           IncrementalControllerOptions options,
                                           ReplicatedKind kind)
    : IncrementalController(registry, clock, options),
      kind_(std::move(kind)),
      collection_(Cat(kind_.group, "/", kind_.resource)),
      events_(registry, kind_.event_component) {
  AddControllerIndexes(registry->storage());
}

bool ReplicaSetController::Wants(const StoredEvent& event) const {
  return event.collection == collection_ || event.collection == kPodsKey;
}

absl::StatusOr<api::LabelSelector> ReplicaSetController::SelectorOf(
    const api::Object& owner) const {
  const Value* selector_json =
      field::Member(field::Object(&owner.json(), "spec"), "selector");
  if (selector_json == nullptr || selector_json->IsNull()) {
    return api::LabelSelector::Nothing();
  }
  if (!kind_.map_selector) {
    return api::LabelSelector::FromLabelSelector(*selector_json);
  }
  // A ReplicationController's map; an empty one selects nothing (kube
  // defaults it from the template's labels).
  api::LabelMap set;
  if (selector_json->IsObject()) {
    for (const auto& m : selector_json->GetObject()) {
      if (m.value.IsString()) {
        set[std::string(field::View(m.name))] =
            std::string(field::View(m.value));
      }
    }
  }
  if (set.empty()) return api::LabelSelector::Nothing();
  return api::LabelSelector::SelectorFromSet(set);
}

api::OwnerReferenceView ReplicaSetController::ControllerRef(
    const api::Object& owner) const {
  api::OwnerReferenceView ref;
  ref.api_version = kind_.api_version;
  ref.kind = kind_.kind;
  ref.name = owner.name();
  ref.uid = owner.uid();
  ref.controller = true;
  ref.block_owner_deletion = true;
  return ref;
}

void ReplicaSetController::EnqueueForPod(const api::Object& pod) {
  if (const std::optional<api::OwnerReferenceView> ref =
          pod.controller_reference()) {
    if (ref->kind == kind_.kind && ref->api_version == kind_.api_version) {
      Enqueue(Storage::Key(pod.namespace_(), ref->name));
    }
    return;
  }
  if (pod.being_deleted()) return;
  // An orphan: the owners that may adopt it.
  for (const api::ObjectPtr& rs :
       SelectorCandidates(*storage(), collection_, pod)) {
    absl::StatusOr<api::LabelSelector> selector = SelectorOf(*rs);
    if (selector.ok() &&
        selector->Matches(
            field::Object(field::Object(&pod.json(), "metadata"), "labels"))) {
      Enqueue(Storage::Key(rs->namespace_(), rs->name()));
    }
  }
}

void ReplicaSetController::OnEvent(const StoredEvent& event) {
  if (event.collection == collection_) {
    Enqueue(Storage::Key(event.object->namespace_(), event.object->name()));
  } else if (event.collection == kPodsKey) {
    EnqueueForPod(*event.object);
    if (event.previous != nullptr) EnqueueForPod(*event.previous);
  }
}

void ReplicaSetController::EnqueueAll() {
  for (const api::ObjectPtr& rs : storage()->Snapshot(collection_)) {
    Enqueue(Storage::Key(rs->namespace_(), rs->name()));
  }
}

absl::Time ReplicaSetController::SyncKey(const std::string& key,
                                         absl::Time now) {
  ResourceRegistry* resources = registry()->resources();
  ResourceInfoPtr replicasets =
      resources->Lookup(kind_.group, "v1", kind_.resource);
  ResourceInfoPtr pods = resources->Lookup("", "v1", "pods");
  if (replicasets == nullptr || pods == nullptr) return absl::InfiniteFuture();
  api::ObjectPtr rs = storage()->GetByKey(replicasets->StorageKey(), key);
  // Gone: its pods are the garbage collector's.
  if (rs == nullptr) return absl::InfiniteFuture();
  std::vector<api::ObjectPtr> candidates =
      storage()->ByIndex(pods->StorageKey(), kControllerIndex, rs->uid());
  for (api::ObjectPtr& orphan : storage()->ByIndex(
           pods->StorageKey(), kControllerIndex, OrphanKey(rs->namespace_()))) {
    candidates.push_back(std::move(orphan));
  }
  return SyncReplicaSet(*replicasets, *pods, rs, candidates, now);
}

absl::Time ReplicaSetController::SyncReplicaSet(
    const ResourceInfo& replicasets, const ResourceInfo& pods,
    const api::ObjectPtr& rs_ptr, const std::vector<api::ObjectPtr>& candidates,
    absl::Time now) {
  const api::Object& rs = *rs_ptr;
  const Value* spec = field::Object(&rs.json(), "spec");
  absl::StatusOr<api::LabelSelector> selector = SelectorOf(rs);
  if (!selector.ok()) {
    LOG_EVERY_N(WARNING, 100)
        << "replicaset controller: bad selector rs=" << rs.Key() << ": "
        << selector.status();
    return absl::InfiniteFuture();
  }
  if (selector->IsNothing()) return absl::InfiniteFuture();
  const int64_t replicas = field::Int64(spec, "replicas").value_or(1);
  const int64_t min_ready_seconds =
      field::Int64(spec, "minReadySeconds").value_or(0);

  // Claim: kube's PodControllerRefManager.ClaimPods.
  std::vector<api::ObjectPtr> owned;
  for (const api::ObjectPtr& pod : candidates) {
    const std::optional<api::OwnerReferenceView> ref =
        pod->controller_reference();
    const bool matches = selector->Matches(
        field::Object(field::Object(&pod->json(), "metadata"), "labels"));
    if (ref.has_value() && ref->uid == rs.uid()) {
      if (matches) {
        owned.push_back(pod);
      } else if (!rs.being_deleted()) {
        api::ObjectBuilder b = pod->ToBuilder();
        b.RemoveOwnerReference(rs.uid());
        absl::Status s =
            registry()
                ->Update(pods, pod->namespace_(), pod->name(), std::move(b))
                .status();
        if (!s.ok() && !IsRaceError(s)) {
          LOG(WARNING) << "replicaset controller: releasing pod=" << pod->Key()
                       << " failed: " << s;
        }
      }
      continue;
    }
    if (ref.has_value() || !matches || rs.being_deleted() ||
        pod->being_deleted() || !IsActive(*pod)) {
      continue;
    }
    api::ObjectBuilder b = pod->ToBuilder();
    b.AddOwnerReference(ControllerRef(rs));
    absl::StatusOr<WriteResult> w =
        registry()->Update(pods, pod->namespace_(), pod->name(), std::move(b));
    if (w.ok()) {
      owned.push_back(w->object);
    } else if (!IsRaceError(w.status())) {
      LOG(WARNING) << "replicaset controller: adopting pod=" << pod->Key()
                   << " failed: " << w.status();
    }
  }
  std::vector<api::ObjectPtr> active;
  for (const api::ObjectPtr& pod : owned) {
    if (IsActive(*pod)) active.push_back(pod);
  }

  // Manage: kube's manageReplicas. A create that fails is tried again a
  // second later (kube's rate-limited requeue).
  absl::Time retry = absl::InfiniteFuture();
  if (!rs.being_deleted()) {
    const int64_t diff = static_cast<int64_t>(active.size()) - replicas;
    if (diff < 0) {
      const int64_t want = std::min(-diff, kBurstReplicas);
      for (int64_t i = 0; i < want; ++i) {
        absl::StatusOr<api::ObjectBuilder> pod = NewPod(rs, ControllerRef(rs));
        if (!pod.ok()) {
          LOG_EVERY_N(WARNING, 100)
              << "replicaset controller: bad template rs=" << rs.Key() << ": "
              << pod.status();
          break;
        }
        absl::StatusOr<WriteResult> created =
            registry()->Create(pods, rs.namespace_(), std::move(*pod));
        if (!created.ok()) {
          // A terminating namespace (403) or a template the server rejects.
          LOG_EVERY_N(WARNING, 100)
              << "replicaset controller: creating a pod "
                 "for rs="
              << rs.Key() << " failed: " << created.status();
          events_.Record(
              rs, kind_.api_version, kind_.kind, true, "FailedCreate",
              Cat("Error creating: ", created.status().message()), now);
          retry = now + absl::Seconds(1);
          break;
        }
        events_.Record(rs, kind_.api_version, kind_.kind, false,
                       "SuccessfulCreate",
                       Cat("Created pod: ", created->object->name()), now);
      }
      VLOG(2) << "replicaset controller: created pods rs=" << rs.Key()
              << " count=" << want;
    } else if (diff > 0) {
      std::vector<api::ObjectPtr> victims = active;
      std::sort(victims.begin(), victims.end(), DeleteBefore);
      victims.resize(static_cast<size_t>(std::min(diff, kBurstReplicas)));
      for (const api::ObjectPtr& pod : victims) {
        DeleteOptions o;
        o.precondition_uid = std::string(pod->uid());
        absl::Status s = registry()
                             ->Delete(pods, pod->namespace_(), pod->name(), o)
                             .status();
        if (s.ok()) {
          events_.Record(rs, kind_.api_version, kind_.kind, false,
                         "SuccessfulDelete", Cat("Deleted pod: ", pod->name()),
                         now);
        } else if (!IsRaceError(s)) {
          LOG(WARNING) << "replicaset controller: deleting pod=" << pod->Key()
                       << " failed: " << s;
        }
      }
      VLOG(2) << "replicaset controller: deleted pods rs=" << rs.Key()
              << " count=" << victims.size();
    }
  }

  // Status: kube's calculateStatus, from the pods this pass started with.
  const Value* template_labels = field::Object(
      field::Object(field::Object(spec, "template"), "metadata"), "labels");
  int64_t fully_labeled = 0, ready = 0, available = 0;
  absl::Time next = retry;
  for (const api::ObjectPtr& pod : active) {
    if (FullyLabeled(*pod, template_labels)) ++fully_labeled;
    const std::optional<absl::Time> since = PodReadySince(*pod);
    if (!since.has_value()) continue;
    ++ready;
    const absl::Time due = *since + absl::Seconds(min_ready_seconds);
    if (min_ready_seconds <= 0 || due <= now) {
      ++available;
    } else {
      next = std::min(next, due);
    }
  }
  // The status is computed first and the write built only when it
  // changed; the write carries what the status subresource reads.
  rapidjson::MemoryPoolAllocator<> a(1024);
  const Value* old_status = field::Object(&rs.json(), "status");
  Value status(rapidjson::kObjectType);
  if (old_status != nullptr) status.CopyFrom(*old_status, a);
  SetStatusCount(&status, "replicas", static_cast<int64_t>(active.size()),
                 false, a);
  SetStatusCount(&status, "fullyLabeledReplicas", fully_labeled, true, a);
  SetStatusCount(&status, "readyReplicas", ready, true, a);
  SetStatusCount(&status, "availableReplicas", available, true, a);
  SetStatusCount(&status, "observedGeneration", rs.generation(), true, a);
  if (old_status != nullptr && json::JsonDeepEqual(status, *old_status)) {
    return next;
  }
  api::ObjectBuilder b = StatusWriteOf(rs, /*with_annotations=*/true);
  (void)b.Set("/status", status);
  WriteOptions w;
  w.subresource = "status";
  absl::Status s =
      registry()
          ->Update(replicasets, rs.namespace_(), rs.name(), std::move(b), w)
          .status();
  if (!s.ok() && !IsRaceError(s)) {
    LOG(WARNING) << "replicaset controller: status of rs=" << rs.Key()
                 << " failed: " << s;
  }
  return next;
}

}  // namespace apiserver
}  // namespace kcr
