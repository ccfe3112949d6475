// KubernetesServiceController: kube-apiserver's own controller for the
// `default/kubernetes` Service through which pods reach the API server, in
// process over the Registry: a ClusterIP Service at the first address of
// the service CIDR (10.96.0.1) with port 443 `https` (TCP) whose targetPort
// is the server's port, labelled component=apiserver, provider=kubernetes,
// and its Endpoints and EndpointSlice (the server's address and port).
// Each is created when missing and put back when changed, as the control
// plane reconciles them.
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_KUBERNETES_SERVICE_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_KUBERNETES_SERVICE_CONTROLLER_H_

#include <string>

#include "absl/time/time.h"
#include "apiserver/kube_controllers/controller_runner.h"
#include "apiserver/registry/registry.h"

namespace kcr {
namespace apiserver {

struct KubernetesServiceOptions {
  // The address and port clients reach the server at (the endpoints).
  std::string address = "127.0.0.1";
  int port = 0;
};

class KubernetesServiceController : public SyncedController {
 public:
  // `registry` must outlive it.
  KubernetesServiceController(Registry* registry,
                              KubernetesServiceOptions options)
      : registry_(registry), options_(std::move(options)) {}

  absl::Time Sync() override;  // absl::InfiniteFuture(): changes drive it
  std::string Name() const override { return "kubernetes-service"; }
  // Writes in the default namespace.
  bool Wants(const StoredEvent& event) const override;

 private:
  void EnsureService();
  void EnsureEndpoints();
  void EnsureEndpointSlice();

  Registry* const registry_;
  const KubernetesServiceOptions options_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_KUBERNETES_SERVICE_CONTROLLER_H_
