#include "apiserver/kube_controllers/garbage_collector.h"

#include <algorithm>
#include <utility>

#include "api/object_builder.h"
#include "apiserver/kube_controllers/controller_indexes.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "glog/logging.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

constexpr char kOrphan[] = "orphan";
constexpr char kForeground[] = "foregroundDeletion";
// Writes here may change which resource serves a collection.
constexpr char kCrdsKey[] = "apiextensions.k8s.io/customresourcedefinitions";
// How long a write that failed for another reason than a race waits.
constexpr absl::Duration kRetryDelay = absl::Seconds(1);

// An owner whose deletion the collector carries out.
bool Finalizing(const api::Object& o) {
  return o.being_deleted() &&
         (o.HasFinalizer(kOrphan) || o.HasFinalizer(kForeground));
}

bool WaitsForDependents(const api::Object& o) {
  return o.being_deleted() && o.HasFinalizer(kForeground);
}

// Same owners, and the same blockOwnerDeletion for each.
bool SameReferences(const api::Object& a, const api::Object& b) {
  const std::vector<api::OwnerReferenceView> x = a.owner_references();
  const std::vector<api::OwnerReferenceView> y = b.owner_references();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].uid != y[i].uid ||
        x[i].block_owner_deletion != y[i].block_owner_deletion) {
      return false;
    }
  }
  return true;
}

}  // namespace

GarbageCollector::GarbageCollector(Registry* registry, const Clock* clock,
                                   IncrementalControllerOptions options)
    : IncrementalController(registry, clock, options) {
  AddControllerIndexes(registry->storage());
}

bool GarbageCollector::Wants(const StoredEvent& event) const {
  if (event.object == nullptr) return true;
  const api::Object& o = *event.object;
  if (!o.owner_references().empty()) return true;
  if (event.previous != nullptr &&
      !event.previous->owner_references().empty()) {
    return true;
  }
  if (Finalizing(o)) return true;
  return event.type == EventType::kDeleted && primed_ &&
         !storage()->ByIndexAll(kOwnerIndex, o.uid()).empty();
}

void GarbageCollector::OnEvent(const StoredEvent& event) {
  if (event.object == nullptr) return;
  if (event.collection == kCrdsKey) {
    resources_.clear();
    unserved_.clear();
  }
  const api::Object& o = *event.object;
  const api::Object* before = event.previous.get();
  if (event.type == EventType::kDeleted) {
    for (const auto& [collection, dependent] :
         storage()->ByIndexAll(kOwnerIndex, o.uid())) {
      Enqueue(std::string(dependent->uid()));
    }
    EnqueueWaitingOwners(o);
    return;
  }
  if (Finalizing(o)) Enqueue(std::string(o.uid()));
  const bool references_changed =
      before == nullptr || !SameReferences(*before, o);
  if (references_changed && !o.being_deleted() &&
      !o.owner_references().empty()) {
    Enqueue(std::string(o.uid()));
  }
  if (references_changed) {
    EnqueueWaitingOwners(o);
    if (before != nullptr) EnqueueWaitingOwners(*before);
  } else if (before != nullptr && !before->being_deleted() &&
             o.being_deleted()) {
    EnqueueWaitingOwners(o);
  }
}

void GarbageCollector::EnqueueWaitingOwners(const api::Object& o) {
  for (const api::OwnerReferenceView& ref : o.owner_references()) {
    for (const auto& [collection, owner] :
         storage()->ByIndexAll(kUidIndex, ref.uid)) {
      if (WaitsForDependents(*owner)) Enqueue(std::string(ref.uid));
    }
  }
}

void GarbageCollector::EnqueueAll() {
  primed_ = true;
  resources_.clear();
  unserved_.clear();
  const std::vector<StoredCollection> collections =
      StoredCollections(*registry()->resources());
  for (const StoredCollection& c : collections) {
    resources_[c.key] = c.resource;
  }
  for (const StoredCollection& c : collections) {
    for (const api::ObjectPtr& o : storage()->Snapshot(c.key)) {
      if (o->being_deleted()) {
        if (Finalizing(*o)) Enqueue(std::string(o->uid()));
        continue;
      }
      if (o->owner_references().empty()) continue;
      const References refs = Classify(*o);
      if (!refs.dangling.empty() || !refs.waiting.empty()) {
        Enqueue(std::string(o->uid()));
      }
    }
  }
}

absl::Time GarbageCollector::SyncKey(const std::string& key, absl::Time now) {
  const std::optional<Node> n = Find(key);
  if (!n.has_value()) return absl::InfiniteFuture();
  const api::Object& o = *n->object;
  if (o.being_deleted()) {
    if (o.HasFinalizer(kOrphan)) return Orphan(*n, now);
    if (o.HasFinalizer(kForeground)) return Foreground(*n, now);
    return absl::InfiniteFuture();
  }
  if (o.owner_references().empty()) return absl::InfiniteFuture();
  return Dependent(*n, now);
}

ResourceInfoPtr GarbageCollector::ResourceOf(const std::string& collection) {
  auto it = resources_.find(collection);
  if (it != resources_.end()) return it->second;
  if (unserved_.count(collection) > 0) return nullptr;
  for (const StoredCollection& c :
       StoredCollections(*registry()->resources())) {
    resources_[c.key] = c.resource;
  }
  it = resources_.find(collection);
  if (it != resources_.end()) return it->second;
  unserved_.insert(collection);
  return nullptr;
}

std::optional<GarbageCollector::Node> GarbageCollector::Find(
    std::string_view uid) {
  for (auto& [collection, object] : storage()->ByIndexAll(kUidIndex, uid)) {
    ResourceInfoPtr resource = ResourceOf(collection);
    if (resource != nullptr) return Node{std::move(resource), object};
  }
  return std::nullopt;
}

std::optional<GarbageCollector::Node> GarbageCollector::OwnerOf(
    const api::Object& dependent, const api::OwnerReferenceView& ref) {
  std::optional<Node> owner = Find(ref.uid);
  // A namespaced owner lives in its dependent's namespace.
  if (owner.has_value() && owner->resource->namespaced() &&
      owner->object->namespace_() != dependent.namespace_()) {
    return std::nullopt;
  }
  return owner;
}

std::vector<GarbageCollector::Node> GarbageCollector::DependentsOf(
    const Node& owner) {
  std::vector<Node> out;
  // A namespaced owner only owns objects in its namespace.
  const bool namespaced = owner.resource->namespaced();
  for (auto& [collection, object] :
       storage()->ByIndexAll(kOwnerIndex, owner.object->uid())) {
    if (namespaced && object->namespace_() != owner.object->namespace_()) {
      continue;
    }
    ResourceInfoPtr resource = ResourceOf(collection);
    if (resource != nullptr) out.push_back({std::move(resource), object});
  }
  return out;
}

GarbageCollector::References GarbageCollector::Classify(
    const api::Object& dependent) {
  References out;
  for (const api::OwnerReferenceView& ref : dependent.owner_references()) {
    const std::optional<Node> owner = OwnerOf(dependent, ref);
    if (!owner.has_value()) {
      out.dangling.emplace_back(ref.uid);
    } else if (WaitsForDependents(*owner->object)) {
      out.waiting.emplace_back(ref.uid);
    } else {
      ++out.solid;
    }
  }
  return out;
}

absl::Time GarbageCollector::Retry(const char* what, const Node& n,
                                   const absl::Status& s,
                                   absl::Time now) const {
  if (s.ok()) return absl::InfiniteFuture();
  // Gone or changed: the next pass looks at it as it is now.
  if (IsRaceError(s)) return now;
  LOG(WARNING) << "garbage collector: " << what
               << " failed resource=" << n.resource->resource()
               << " key=" << n.object->Key() << ": " << s;
  return now + kRetryDelay;
}

absl::Time GarbageCollector::Delete(const Node& n, const char* policy,
                                    absl::Time now) {
  DeleteOptions options;
  options.propagation_policy = policy;
  options.precondition_uid = std::string(n.object->uid());
  VLOG(2) << "garbage collector: deleting resource=" << n.resource->resource()
          << " key=" << n.object->Key() << " policy=" << policy;
  return Retry("delete", n,
               registry()
                   ->Delete(*n.resource, n.object->namespace_(),
                            n.object->name(), options)
                   .status(),
               now);
}

absl::Status GarbageCollector::DropReferences(
    const Node& n, const std::vector<std::string>& uids) {
  api::ObjectBuilder b = n.object->ToBuilder();
  for (const std::string& uid : uids) b.RemoveOwnerReference(uid);
  const rapidjson::Value* refs = b.Find("/metadata/ownerReferences");
  if (refs != nullptr && refs->IsArray() && refs->Empty()) {
    b.Remove("/metadata/ownerReferences");
  }
  return registry()
      ->Update(*n.resource, n.object->namespace_(), n.object->name(),
               std::move(b))
      .status();
}

absl::Time GarbageCollector::Dependent(const Node& n, absl::Time now) {
  const References refs = Classify(*n.object);
  if (refs.dangling.empty() && refs.waiting.empty()) {
    return absl::InfiniteFuture();
  }
  if (refs.solid > 0) {
    // Live owners remain: only forget the ones that are gone or going.
    std::vector<std::string> uids = refs.dangling;
    uids.insert(uids.end(), refs.waiting.begin(), refs.waiting.end());
    return Retry("removing owner references", n, DropReferences(n, uids), now);
  }
  const bool has_dependents = !DependentsOf(n).empty();
  return Delete(
      n, !refs.waiting.empty() && has_dependents ? "Foreground" : "Background",
      now);
}

absl::Time GarbageCollector::Foreground(const Node& owner, absl::Time now) {
  absl::Time again = absl::InfiniteFuture();
  // Each dependent as kube's attemptToDelete sees it: deleted (in the
  // foreground again when it has dependents of its own), or, with another
  // live owner, left without its reference to this one.
  for (const Node& dependent : DependentsOf(owner)) {
    if (dependent.object->being_deleted()) continue;
    again = std::min(again, Dependent(dependent, now));
  }
  // Those that remain after the writes decide.
  for (const Node& dependent : DependentsOf(owner)) {
    for (const api::OwnerReferenceView& ref :
         dependent.object->owner_references()) {
      if (ref.uid == owner.object->uid() && ref.block_owner_deletion) {
        return again;
      }
    }
  }
  VLOG(2) << "garbage collector: dependents gone, finishing foreground "
             "deletion key="
          << owner.object->Key();
  return std::min(again, Retry("removing finalizer", owner,
                               RemoveFinalizer(registry(), *owner.resource,
                                               *owner.object, kForeground),
                               now));
}

absl::Time GarbageCollector::Orphan(const Node& owner, absl::Time now) {
  const std::string uid(owner.object->uid());
  absl::Time again = absl::InfiniteFuture();
  bool all = true;
  for (const Node& dependent : DependentsOf(owner)) {
    absl::Status s = DropReferences(dependent, {uid});
    if (!s.ok()) {
      all = false;
      again = std::min(again, Retry("orphaning", dependent, s, now));
    }
  }
  if (!all) return again;
  return Retry(
      "removing finalizer", owner,
      RemoveFinalizer(registry(), *owner.resource, *owner.object, kOrphan),
      now);
}

}  // namespace apiserver
}  // namespace kcr
