#include "cmd/controller-manager/embedded.h"

#include <algorithm>

#include "api/crd/crd_manifests.h"

namespace kcr::cmd {

std::vector<envtest::Manifest> EmbeddedCrds() {
  return {
      {"manifests/crds/nginx.yaml", api::crd::kNginxCrdYaml},
      {"manifests/crds/copyrator_rule.yaml", api::crd::kCopyratorRuleCrdYaml},
      {"manifests/crds/loadtest.yaml", api::crd::kLoadTestCrdYaml},
      {"manifests/crds/simpledeployment.yaml",
       api::crd::kSimpleDeploymentCrdYaml}};
}

std::vector<envtest::Manifest> EmbeddedSamples() {
  std::vector<envtest::Manifest> samples;
  for (int i = 0; i < kEmbeddedSampleCount; ++i) {
    samples.push_back({kEmbeddedSamples[i].path, kEmbeddedSamples[i].text});
  }
  return samples;
}

std::vector<envtest::Manifest> EmbeddedRbac() {
  std::vector<envtest::Manifest> rbac;
  for (int i = 0; i < kEmbeddedRbacCount; ++i) {
    rbac.push_back({kEmbeddedRbac[i].path, kEmbeddedRbac[i].text});
  }
  // The namespace before what lives in it.
  std::stable_partition(rbac.begin(), rbac.end(), [](const auto& m) {
    return m.path == "manifests/namespace.yaml";
  });
  return rbac;
}

}  // namespace kcr::cmd
