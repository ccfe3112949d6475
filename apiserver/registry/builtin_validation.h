// kube-apiserver's semantic validation of the built-in kinds
// (pkg/apis/core/validation, pkg/apis/apps/validation): required fields,
// the rules between fields, size limits and immutable fields. Each function
// appends field errors in kube-apiserver's order and wording; the store
// answers them as one 422 Invalid Status with every cause. The objects
// have decoded (builtin_schema.h) and been defaulted: a field of the wrong
// JSON type never gets here and is skipped if it does.
//
// Stateless free functions; thread-safe.
#ifndef KCR_APISERVER_REGISTRY_BUILTIN_VALIDATION_H_
#define KCR_APISERVER_REGISTRY_BUILTIN_VALIDATION_H_

#include <cstddef>
#include <string>
#include <vector>

#include "api/errors/errors.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// The most a ConfigMap's data and binaryData, or a Secret's data, may hold
// together (bytes, decoded): kube's MaxSecretSize, 1 MiB.
inline constexpr size_t kMaxConfigMapDataBytes = size_t{1} << 20;

// ConfigMap: keys of data and binaryData, no key in both, the 1 MiB total.
void ValidateConfigMap(const rapidjson::Value& config_map,
                       std::vector<api::FieldError>* errors);
// What an update may not change once `immutable` is true.
void ValidateConfigMapUpdate(const rapidjson::Value& live,
                             const rapidjson::Value& config_map,
                             std::vector<api::FieldError>* errors);

// Secret: keys of data, the 1 MiB total, the keys a type requires.
void ValidateSecret(const rapidjson::Value& secret,
                    std::vector<api::FieldError>* errors);
// `type` never changes; nothing else once `immutable` is true.
void ValidateSecretUpdate(const rapidjson::Value& live,
                          const rapidjson::Value& secret,
                          std::vector<api::FieldError>* errors);

// A pod spec at `path` ("spec", "spec.template.spec"): containers present,
// named (DNS labels, unique) and with an image; ports; restartPolicy.
void ValidatePodSpec(const rapidjson::Value* spec, const std::string& path,
                     std::vector<api::FieldError>* errors);
// Pod updates change only images, activeDeadlineSeconds (down), tolerations
// (additions) and a negative terminationGracePeriodSeconds (to 1). The
// local server also lets spec.nodeName go from unset to a node: its
// simulated node binds pods with an update (there is no binding
// subresource).
void ValidatePodUpdate(const rapidjson::Value& live,
                       const rapidjson::Value& pod,
                       std::vector<api::FieldError>* errors);

// Deployment: replicas, a non-empty selector that matches the template's
// labels, the template's pod spec (restartPolicy Always), the strategy.
void ValidateDeployment(const rapidjson::Value& deployment,
                        std::vector<api::FieldError>* errors);
// Also spec.selector is immutable.
void ValidateDeploymentUpdate(const rapidjson::Value& live,
                              const rapidjson::Value& deployment,
                              std::vector<api::FieldError>* errors);

// ReplicaSet: replicas, minReadySeconds, the selector and template rules of
// a Deployment.
void ValidateReplicaSet(const rapidjson::Value& replica_set,
                        std::vector<api::FieldError>* errors);
// Also spec.selector is immutable.
void ValidateReplicaSetUpdate(const rapidjson::Value& live,
                              const rapidjson::Value& replica_set,
                              std::vector<api::FieldError>* errors);

// Service: ports (required unless headless or ExternalName; numbers in
// range; unique names), type.
void ValidateService(const rapidjson::Value& service,
                     std::vector<api::FieldError>* errors);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_BUILTIN_VALIDATION_H_
