#include "apiserver/kube_controllers/garbage_collector.h"

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/object_builder.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/str_cat.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {
namespace {

constexpr char kOrphan[] = "orphan";
constexpr char kForeground[] = "foregroundDeletion";

struct Node {
  ResourceInfoPtr resource;
  api::ObjectPtr object;
};

class Pass {
 public:
  explicit Pass(Registry* registry) : registry_(registry) {
    for (const StoredCollection& c :
         StoredCollections(*registry->resources())) {
      for (api::ObjectPtr& o : registry->storage()->Snapshot(c.key)) {
        nodes_.push_back({c.resource, std::move(o)});
      }
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const api::Object& o = *nodes_[i].object;
      by_uid_[std::string(o.uid())] = i;
      for (const api::OwnerReferenceView& ref : o.owner_references()) {
        dependents_[std::string(ref.uid)].push_back(i);
      }
    }
  }

  // The uids some object references as its owner.
  std::unordered_set<std::string> Owners() const {
    std::unordered_set<std::string> out;
    for (const auto& [uid, deps] : dependents_) out.insert(uid);
    return out;
  }

  void Run() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const api::Object& o = *nodes_[i].object;
      if (o.being_deleted()) {
        if (o.HasFinalizer(kOrphan)) {
          Orphan(i);
        } else if (o.HasFinalizer(kForeground)) {
          Foreground(i);
        }
        continue;
      }
      if (!o.owner_references().empty()) Dependent(i);
    }
  }

 private:
  // The live owner `ref` of `dependent` points to, or null.
  const Node* Owner(const api::Object& dependent,
                    const api::OwnerReferenceView& ref) const {
    auto it = by_uid_.find(std::string(ref.uid));
    if (it == by_uid_.end()) return nullptr;
    const Node& owner = nodes_[it->second];
    // A namespaced owner lives in its dependent's namespace.
    if (owner.resource->namespaced() &&
        owner.object->namespace_() != dependent.namespace_()) {
      return nullptr;
    }
    return &owner;
  }

  std::vector<size_t> DependentsOf(const api::Object& owner) const {
    auto it = dependents_.find(std::string(owner.uid()));
    if (it == dependents_.end()) return {};
    std::vector<size_t> out;
    for (size_t d : it->second) {
      const api::Object& o = *nodes_[d].object;
      // A namespaced owner only owns objects in its namespace.
      if (nodes_[by_uid_.at(std::string(owner.uid()))].resource->namespaced() &&
          o.namespace_() != owner.namespace_()) {
        continue;
      }
      out.push_back(d);
    }
    return out;
  }

  void Report(const char* what, const Node& n, const absl::Status& s) {
    if (s.ok() || IsRaceError(s)) return;
    LOG(WARNING) << "garbage collector: " << what
                 << " failed resource=" << n.resource->resource()
                 << " key=" << n.object->Key() << ": " << s;
  }

  void Delete(const Node& n, const std::string& policy) {
    DeleteOptions options;
    options.propagation_policy = policy;
    options.precondition_uid = std::string(n.object->uid());
    VLOG(2) << "garbage collector: deleting resource=" << n.resource->resource()
            << " key=" << n.object->Key() << " policy=" << policy;
    Report("delete", n,
           registry_
               ->Delete(*n.resource, n.object->namespace_(), n.object->name(),
                        options)
               .status());
  }

  // Writes `n` without the owner references whose uid is in `uids`.
  absl::Status DropReferences(const Node& n,
                              const std::vector<std::string>& uids) {
    api::ObjectBuilder b = n.object->ToBuilder();
    for (const std::string& uid : uids) b.RemoveOwnerReference(uid);
    const rapidjson::Value* refs = b.Find("/metadata/ownerReferences");
    if (refs != nullptr && refs->IsArray() && refs->Empty()) {
      b.Remove("/metadata/ownerReferences");
    }
    return registry_
        ->Update(*n.resource, n.object->namespace_(), n.object->name(),
                 std::move(b))
        .status();
  }

  // An object with owner references, not being deleted.
  void Dependent(size_t i) {
    const Node& n = nodes_[i];
    std::vector<std::string> dangling;
    std::vector<std::string> waiting;
    int solid = 0;
    for (const api::OwnerReferenceView& ref : n.object->owner_references()) {
      const Node* owner = Owner(*n.object, ref);
      if (owner == nullptr) {
        dangling.emplace_back(ref.uid);
      } else if (owner->object->being_deleted() &&
                 owner->object->HasFinalizer(kForeground)) {
        waiting.emplace_back(ref.uid);
      } else {
        ++solid;
      }
    }
    if (dangling.empty() && waiting.empty()) return;
    if (solid > 0) {
      // Live owners remain: only forget the ones that are gone or going.
      std::vector<std::string> uids = dangling;
      uids.insert(uids.end(), waiting.begin(), waiting.end());
      Report("removing owner references", n, DropReferences(n, uids));
      return;
    }
    const bool has_dependents = !DependentsOf(*n.object).empty();
    Delete(n, !waiting.empty() && has_dependents ? "Foreground" : "Background");
  }

  // An owner deleted with propagationPolicy=Foreground.
  void Foreground(size_t i) {
    const Node& owner = nodes_[i];
    bool blocked = false;
    for (size_t d : DependentsOf(*owner.object)) {
      const Node& dep = nodes_[d];
      for (const api::OwnerReferenceView& ref :
           dep.object->owner_references()) {
        if (ref.uid == owner.object->uid() && ref.block_owner_deletion) {
          blocked = true;
        }
      }
      // Dependents of this dependent are deleted first as well.
      if (!dep.object->being_deleted()) {
        Delete(dep,
               DependentsOf(*dep.object).empty() ? "Background" : "Foreground");
      }
    }
    if (blocked) return;
    VLOG(2) << "garbage collector: dependents gone, finishing foreground "
               "deletion key="
            << owner.object->Key();
    Report("removing finalizer", owner,
           RemoveFinalizer(registry_, *owner.resource, *owner.object,
                           kForeground));
  }

  // An owner deleted with propagationPolicy=Orphan.
  void Orphan(size_t i) {
    const Node& owner = nodes_[i];
    const std::string uid(owner.object->uid());
    bool all = true;
    for (size_t d : DependentsOf(*owner.object)) {
      absl::Status s = DropReferences(nodes_[d], {uid});
      if (!s.ok()) {
        all = false;
        Report("orphaning", nodes_[d], s);
      }
    }
    if (!all) return;  // the next pass retries
    Report("removing finalizer", owner,
           RemoveFinalizer(registry_, *owner.resource, *owner.object, kOrphan));
  }

  Registry* const registry_;
  std::vector<Node> nodes_;
  std::unordered_map<std::string, size_t> by_uid_;
  std::unordered_map<std::string, std::vector<size_t>> dependents_;
};

}  // namespace

absl::Time GarbageCollector::Sync() {
  Pass pass(registry_);
  pass.Run();
  owners_ = pass.Owners();
  return absl::InfiniteFuture();
}

bool GarbageCollector::Wants(const StoredEvent& event) const {
  if (event.object == nullptr) return true;
  const api::Object& o = *event.object;
  if (!o.owner_references().empty()) return true;
  if (o.being_deleted() &&
      (o.HasFinalizer(kOrphan) || o.HasFinalizer(kForeground))) {
    return true;
  }
  return event.type == EventType::kDeleted &&
         owners_.count(std::string(o.uid())) > 0;
}

}  // namespace apiserver
}  // namespace kcr
