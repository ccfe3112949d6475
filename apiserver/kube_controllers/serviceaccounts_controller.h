// ServiceAccountsController and RootCaCertPublisher: the furniture that
// kube-controller-manager puts into every namespace, in process over the
// local API server's Registry.
//
//   ServiceAccountsController (kube's serviceaccount controller): the
//     `default` ServiceAccount in every namespace that is not being deleted,
//     created when the namespace appears and again whenever it is deleted.
//   RootCaCertPublisher (kube's root-ca-cert-publisher): the ConfigMap
//     `kube-root-ca.crt` in every such namespace, with the cluster's CA
//     certificate under `ca.crt` and kube's description annotation;
//     recreated when deleted, and its data put back when changed.
//
// Thread safety: Sync is not reentrant; run one pass at a time (a
// ControllerRunner does).
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_SERVICEACCOUNTS_CONTROLLER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_SERVICEACCOUNTS_CONTROLLER_H_

#include <string>

#include "absl/time/time.h"
#include "apiserver/kube_controllers/controller_runner.h"
#include "apiserver/registry/registry.h"

namespace kcr {
namespace apiserver {

inline constexpr char kRootCaConfigMapName[] = "kube-root-ca.crt";

class ServiceAccountsController : public SyncedController {
 public:
  // `registry` must outlive it.
  explicit ServiceAccountsController(Registry* registry)
      : registry_(registry) {}

  absl::Time Sync() override;  // absl::InfiniteFuture(): changes drive it
  std::string Name() const override { return "serviceaccount-controller"; }
  // Namespaces and service accounts.
  bool Wants(const StoredEvent& event) const override;

 private:
  Registry* const registry_;
};

class RootCaCertPublisher : public SyncedController {
 public:
  // `registry` must outlive it; `ca_pem` is the CA certificate (PEM) that
  // signs the server's certificate.
  RootCaCertPublisher(Registry* registry, std::string ca_pem)
      : registry_(registry), ca_pem_(std::move(ca_pem)) {}

  absl::Time Sync() override;  // absl::InfiniteFuture(): changes drive it
  std::string Name() const override { return "root-ca-cert-publisher"; }
  // Namespaces and config maps.
  bool Wants(const StoredEvent& event) const override;

 private:
  Registry* const registry_;
  const std::string ca_pem_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_SERVICEACCOUNTS_CONTROLLER_H_
