#include "cmd/controller-manager/embedded.h"

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

}  // namespace kcr::cmd
