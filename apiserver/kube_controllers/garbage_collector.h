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
//               dependent that has dependents of its own) and removes the
//               finalizer once no dependent whose reference sets
//               blockOwnerDeletion remains, letting the owner go;
//   orphan      for an owner being deleted with the `orphan` finalizer:
//               removes the owner's references from its dependents, then
//               the finalizer.
// Writes go through the Registry (Update with the object's resourceVersion,
// Delete with a uid precondition), so a concurrent change makes a write fail
// harmlessly and the next pass decides again.
//
// Simplified: the owner graph is rebuilt from a snapshot of the store on
// every pass instead of being maintained from watch events; references are
// matched by uid (and namespace), not re-read by kind and name.
//
// Thread safety: Sync is not reentrant; run one pass at a time (the
// ControllerRunner does).
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_GARBAGE_COLLECTOR_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_GARBAGE_COLLECTOR_H_

#include <string>
#include <unordered_set>

#include "absl/time/time.h"
#include "apiserver/kube_controllers/controller_runner.h"
#include "apiserver/registry/registry.h"

namespace kcr {
namespace apiserver {

class GarbageCollector : public SyncedController {
 public:
  // `registry` must outlive the collector.
  explicit GarbageCollector(Registry* registry) : registry_(registry) {}

  // One pass over every object. Always returns absl::InfiniteFuture(): the
  // collector acts only on changes.
  absl::Time Sync() override;
  std::string Name() const override { return "garbage-collector"; }
  // Writes of objects with owner references, of owners being deleted in the
  // foreground or with orphaning, and deletions of owners.
  bool Wants(const StoredEvent& event) const override;

 private:
  Registry* const registry_;
  // The uids that owned something at the last pass.
  std::unordered_set<std::string> owners_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_GARBAGE_COLLECTOR_H_
