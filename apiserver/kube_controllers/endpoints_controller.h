// EndpointsController: kube-controller-manager's endpoints and
// endpointslice controllers, in process over the Registry. For every
// Service with a selector (not ExternalName), from the pods of its
// namespace whose labels match and that have an IP (scheduled, started, not
// being deleted, not finished):
//   - v1 Endpoints named as the Service, labelled as it is (plus
//     service.kubernetes.io/headless for clusterIP None): subsets grouping
//     the pods by their resolved ports, Ready pods under addresses and the
//     others under notReadyAddresses, each with ip, nodeName and a targetRef
//     to its Pod; no subsets when no pod matches;
//   - one discovery.k8s.io/v1 EndpointSlice (generateName `<service>-`,
//     labels kubernetes.io/service-name and endpointslice.kubernetes.io/
//     managed-by, owned by the Service) with an endpoint per pod
//     (conditions ready, serving, terminating) and the resolved ports.
// A service port's targetPort is a number, a container port's name (looked
// up in each pod; pods without it are left out of that port's group), or
// absent (the port). Endpoints this controller wrote are deleted with their
// Service; the slices go through the garbage collector (ownerReferences).
//
// Simplified next to kube: one slice per Service (kube splits at 100
// endpoints), IPv4 only, no topology hints, no last-change-trigger-time.
//
// Incremental (incremental_controller.h): the keys are Services. A
// Service's write queues it. A pod's write that can change an endpoint (it
// serves before or after, and its IP, readiness, node, labels or phase
// changed) queues the Services whose selector matches the pod before or
// after the write, found through kServiceSelectorIndex under each of the
// pod's labels. A write of an Endpoints or EndpointSlice that this
// controller did not make, or its deletion, queues its Service. A sync
// reads the Service's candidate pods through kPodLabelIndex under the
// selector entry with the fewest pods, and its slice through
// kControllerIndex (the Service's uid), never a namespace's pods or slices.
// The Endpoints of a Service are deleted when its deletion is synced.
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_ENDPOINTS_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_ENDPOINTS_CONTROLLER_H_

#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "apiserver/kube_controllers/incremental_controller.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

class EndpointsController : public IncrementalController {
 public:
  // `registry` and `clock` must outlive it. Adds the controller indexes to
  // the registry's storage.
  explicit EndpointsController(Registry* registry,
                               const Clock* clock = Clock::Real(),
                               IncrementalControllerOptions options = {});

  std::string Name() const override { return "endpoints-controller"; }
  // Services, pod writes that can change an endpoint, endpoints and
  // endpoint slices.
  bool Wants(const StoredEvent& event) const override;

 protected:
  void OnEvent(const StoredEvent& event) override;
  void EnqueueAll() override;
  // Returns a retry time after a failed write, else InfiniteFuture.
  absl::Time SyncKey(const std::string& key, absl::Time now) override;

 private:
  // Writes the Service's Endpoints and EndpointSlice from `pods` (its
  // candidates); false when a write failed.
  bool SyncService(const ResourceInfo& endpoints, const ResourceInfo* slices,
                   const api::Object& service,
                   const std::vector<api::ObjectPtr>& pods);
  // Queues the Services whose selector matches `pod`.
  void EnqueueForPod(const api::Object& pod);
  // Notes a write this controller made, so that its event is skipped.
  void Made(const api::Object& written);
  // Whether `event` is the event of a write this controller made (and
  // forgets it).
  bool MadeHere(const StoredEvent& event);

  // "<ns>/<name>" of the Endpoints this controller wrote, until their
  // Service's deletion is synced.
  std::set<std::string> managed_;
  // resourceVersions of this controller's Endpoints and EndpointSlice
  // writes whose events are yet to be read.
  absl::flat_hash_set<std::string> made_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_ENDPOINTS_CONTROLLER_H_
