// GarbageCollector: kube-controller-manager's garbage collector, in process,
// over the local API server's Registry. It reads metadata.ownerReferences
// across every resource and:
//   background  deletes an object once none of its owners exists any more
//               (an owner exists when an object with the reference's uid
//               does, in the dependent's namespace for namespaced owners);
//               an object that still has a live owner loses only its
//               dangling references;
//   foreground  for an owner being deleted with the `foregroundDeletion`
//               finalizer: deletes its dependents (foreground again for a
//               dependent that has dependents of its own; a dependent with
//               another live owner loses only the reference, as in kube)
//               and removes the finalizer once no dependent whose reference
//               sets blockOwnerDeletion remains, letting the owner go;
//   orphan      for an owner being deleted with the `orphan` finalizer:
//               removes the owner's references from its dependents, then
//               the finalizer.
// Writes go through the Registry (Update with the object's resourceVersion,
// Delete with a uid precondition), so a concurrent change makes a write fail
// harmlessly; the key is synced again on the next pass.
//
// Incremental (incremental_controller.h). The owner graph is not held by
// the collector: it is Storage's kOwnerIndex (owner uid -> dependents, in
// every collection) and kUidIndex (uid -> object), so a sync reads the
// objects around one uid and nothing else. Keys are uids: owner references
// and both indexes speak uids, so an owner to re-check is queued straight
// from a reference, and an object deleted and created again under its name
// is a new key, never mistaken for the old one. Which writes queue what:
//   - an object whose owner references are new or changed, not being
//     deleted: the object itself (its owners are looked up);
//   - an object being deleted with the orphan or foregroundDeletion
//     finalizer: the object, whose sync visits each of its dependents;
//   - a deleted object: its dependents (kOwnerIndex of its uid);
//   - a dependent deleted, newly being deleted or whose references changed:
//     those of its owners (before and after the write) that wait in
//     foreground deletion.
// Other writes (a pod's status, say) queue nothing. The first pass, a
// missed history and the periodic resync (EnqueueAll) read every
// collection once and queue the objects that call for work at that moment:
// owners being deleted with either finalizer, and dependents with a
// reference that dangles or waits in foreground deletion — kube's graph
// builder queueing the "virtual" (absent) owners' dependents at start-up. A
// dependent whose owner goes in that pass is queued by the owner's deletion
// on the next pass, as in kube.
//
// Thread safety: Sync is not reentrant; run one pass at a time (the
// ControllerRunner does); Wants is called between passes on that thread.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_GARBAGE_COLLECTOR_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_GARBAGE_COLLECTOR_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "apiserver/kube_controllers/incremental_controller.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

class GarbageCollector : public IncrementalController {
 public:
  // `registry` and `clock` must outlive the collector. Adds the controller
  // indexes to the registry's storage.
  explicit GarbageCollector(Registry* registry,
                            const Clock* clock = Clock::Real(),
                            IncrementalControllerOptions options = {});

  std::string Name() const override { return "garbage-collector"; }
  // Writes of objects with owner references (before or after), of owners
  // being deleted in the foreground or with orphaning, and, once a pass
  // has run, deletions of objects something references as its owner.
  bool Wants(const StoredEvent& event) const override;

 protected:
  void OnEvent(const StoredEvent& event) override;
  void EnqueueAll() override;
  // Syncs the object with uid `key`. Returns the next pass when a write
  // failed (a 409 is retried at once, other errors after a second).
  absl::Time SyncKey(const std::string& key, absl::Time now) override;

 private:
  // An object and the resource to write it through.
  struct Node {
    ResourceInfoPtr resource;
    api::ObjectPtr object;
  };
  // The owner references of a dependent, by the state of their owners.
  struct References {
    std::vector<std::string> dangling;  // owner absent
    std::vector<std::string> waiting;   // owner in foreground deletion
    int solid = 0;                      // owner present, not waiting
  };

  // The resource the objects of `collection` are written through, or null.
  ResourceInfoPtr ResourceOf(const std::string& collection);
  // The object with `uid` (of a known resource), if stored.
  std::optional<Node> Find(std::string_view uid);
  // The live owner `ref` of `dependent` names, if any.
  std::optional<Node> OwnerOf(const api::Object& dependent,
                              const api::OwnerReferenceView& ref);
  // The objects `owner` owns (for a namespaced owner, those of its
  // namespace).
  std::vector<Node> DependentsOf(const Node& owner);
  References Classify(const api::Object& dependent);

  // An object with owner references, not being deleted.
  absl::Time Dependent(const Node& n, absl::Time now);
  // An owner deleted with propagationPolicy=Foreground.
  absl::Time Foreground(const Node& owner, absl::Time now);
  // An owner deleted with propagationPolicy=Orphan.
  absl::Time Orphan(const Node& owner, absl::Time now);

  absl::Time Delete(const Node& n, const char* policy, absl::Time now);
  // Writes `n` without the owner references whose uid is in `uids`.
  absl::Status DropReferences(const Node& n,
                              const std::vector<std::string>& uids);
  // Logs a failed write; returns when to try again (InfiniteFuture when
  // there is nothing to retry).
  absl::Time Retry(const char* what, const Node& n, const absl::Status& s,
                   absl::Time now) const;

  // Queues the owners named by `o`'s references that wait in foreground
  // deletion.
  void EnqueueWaitingOwners(const api::Object& o);

  // collection -> resource, filled on demand; cleared when a CRD changes.
  absl::flat_hash_map<std::string, ResourceInfoPtr> resources_;
  // Collections no resource serves (since the last CRD change).
  absl::flat_hash_set<std::string> unserved_;
  // Set by the first pass: until then, deletions need not wake the
  // collector (the first pass looks at everything).
  bool primed_ = false;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_GARBAGE_COLLECTOR_H_
