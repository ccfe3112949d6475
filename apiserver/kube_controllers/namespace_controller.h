// NamespaceController: kube-controller-manager's namespace controller, in
// process, over the local API server's Registry. For every namespace being
// deleted (the API server has set its deletionTimestamp and status.phase
// Terminating, and keeps it while spec.finalizers holds "kubernetes"):
//   1. deletes every object in it, of every namespaced resource
//      (propagationPolicy Background);
//   2. reports progress in status.conditions as kube-controller-manager
//      does: NamespaceDeletionDiscoveryFailure,
//      NamespaceDeletionGroupVersionParsingFailure,
//      NamespaceDeletionContentFailure (all False), NamespaceContentRemaining
//      ("Some resources are remaining: pods. has 2 resource instances") and
//      NamespaceFinalizersRemaining ("Some content in the namespace has
//      finalizers remaining: example.com/keep in 1 resource instances");
//   3. once nothing is left, removes "kubernetes" from spec.finalizers
//      through the namespace's finalize subresource, after which the API
//      server removes the namespace (unless metadata.finalizers remain).
// It takes a namespace up only `deletion_grace_period` (kube-controller-
// manager's namespaceDeletionGracePeriod, 5 s) after it first saw it
// Terminating, as kube-controller-manager does: until then the objects in
// it stay, and a client's own DELETEs of them (`kubectl delete -f` of a file
// with a namespace and its contents) find them and succeed.
// Objects that wait for their own finalizers keep the namespace
// Terminating until whoever owns those finalizers removes them.
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_NAMESPACE_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_NAMESPACE_CONTROLLER_H_

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "absl/time/time.h"
#include "apiserver/kube_controllers/controller_runner.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

class NamespaceController : public SyncedController {
 public:
  // `registry` and `clock` (condition timestamps) must outlive it.
  static constexpr absl::Duration kDefaultDeletionGracePeriod =
      absl::Seconds(5);

  NamespaceController(
      Registry* registry, const Clock* clock = Clock::Real(),
      absl::Duration deletion_grace_period = kDefaultDeletionGracePeriod)
      : registry_(registry),
        clock_(clock),
        deletion_grace_period_(deletion_grace_period) {}

  // One pass over every Terminating namespace. Returns when the grace
  // period of a namespace seen Terminating ends, or absl::InfiniteFuture():
  // otherwise progress comes from changes.
  absl::Time Sync() override;
  std::string Name() const override { return "namespace-controller"; }
  // Writes to namespaces, and to objects in namespaces being deleted.
  bool Wants(const StoredEvent& event) const override;

 private:
  void Finalize(const ResourceInfo& namespaces, const api::Object& ns);

  Registry* const registry_;
  const Clock* const clock_;
  const absl::Duration deletion_grace_period_;
  // Namespaces being deleted at the last pass.
  std::unordered_set<std::string> terminating_;
  // When each namespace (by uid) was first seen Terminating.
  std::unordered_map<std::string, absl::Time> first_seen_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_NAMESPACE_CONTROLLER_H_
