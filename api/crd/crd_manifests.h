// The CRD manifests under manifests/crds, compiled into the binary as text
// (see embed_manifest.bzl): the one statement of each custom resource's
// schema, which kubectl installs into a cluster, the local API server
// enforces, and the CRD types in this folder validate and default with.
#ifndef KCR_API_CRD_CRD_MANIFESTS_H_
#define KCR_API_CRD_CRD_MANIFESTS_H_

namespace kcr {
namespace api {
namespace crd {

// manifests/crds/nginx.yaml
extern const char kNginxCrdYaml[];
// manifests/crds/copyrator_rule.yaml
extern const char kCopyratorRuleCrdYaml[];
// manifests/crds/loadtest.yaml
extern const char kLoadTestCrdYaml[];
// manifests/crds/simpledeployment.yaml
extern const char kSimpleDeploymentCrdYaml[];

}  // namespace crd
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_CRD_CRD_MANIFESTS_H_
