// The controller manager's --embedded mode runs its controllers on an
// envtest::Environment (runtime/envtest): the local API server in this
// process with kcr's CRDs and manifests/samples installed. Both are
// compiled into the binary, so `bazel run` and a copied binary alike work.
#ifndef KCR_CMD_CONTROLLER_MANAGER_EMBEDDED_H_
#define KCR_CMD_CONTROLLER_MANAGER_EMBEDDED_H_

#include <vector>

#include "runtime/envtest/environment.h"

namespace kcr::cmd {

// The CRDs of kcr's controllers (manifests/crds, through api/crd).
std::vector<envtest::Manifest> EmbeddedCrds();
// manifests/samples, in file order.
std::vector<envtest::Manifest> EmbeddedSamples();
// The manager's namespace (manifests/namespace.yaml) first, then
// manifests/rbac in file order: its ServiceAccount, roles and bindings.
std::vector<envtest::Manifest> EmbeddedRbac();

// The ServiceAccount of manifests/rbac, which the manager runs as.
inline constexpr char kManagerNamespace[] = "kcr-system";
inline constexpr char kManagerServiceAccount[] = "kcr-controller-manager";

// One manifest file compiled into the binary (embedded_samples.cc and
// embedded_rbac.cc, made from manifests/ by genrules).
struct EmbeddedManifest {
  const char* path;  // e.g. "manifests/samples/nginx.yaml"
  const char* text;
};
extern const EmbeddedManifest kEmbeddedSamples[];
extern const int kEmbeddedSampleCount;
extern const EmbeddedManifest kEmbeddedRbac[];
extern const int kEmbeddedRbacCount;

}  // namespace kcr::cmd

#endif  // KCR_CMD_CONTROLLER_MANAGER_EMBEDDED_H_
