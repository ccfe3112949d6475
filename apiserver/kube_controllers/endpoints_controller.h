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
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_ENDPOINTS_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_ENDPOINTS_CONTROLLER_H_

#include <set>
#include <string>

#include "absl/time/time.h"
#include "apiserver/kube_controllers/controller_runner.h"
#include "apiserver/registry/registry.h"

namespace kcr {
namespace apiserver {

class EndpointsController : public SyncedController {
 public:
  // `registry` must outlive it.
  explicit EndpointsController(Registry* registry) : registry_(registry) {}

  absl::Time Sync() override;  // absl::InfiniteFuture(): changes drive it
  std::string Name() const override { return "endpoints-controller"; }
  // Services, pods, endpoints and endpoint slices.
  bool Wants(const StoredEvent& event) const override;

 private:
  void SyncService(const ResourceInfo& endpoints, const ResourceInfo* slices,
                   const api::Object& service,
                   const std::vector<api::ObjectPtr>& pods);

  Registry* const registry_;
  // "<ns>/<name>" of the Endpoints this controller wrote.
  std::set<std::string> managed_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_ENDPOINTS_CONTROLLER_H_
