// Strategies of the core (v1) kinds with rules of their own: namespaces,
// pods, services, secrets, configmaps (kube-apiserver's
// pkg/registry/core/<kind>); their validation is builtin_validation.h's.
#ifndef KCR_APISERVER_REGISTRY_CORE_STRATEGY_H_
#define KCR_APISERVER_REGISTRY_CORE_STRATEGY_H_

#include <string>

#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/registry/strategy.h"

namespace kcr {
namespace apiserver {

const Strategy& NamespaceStrategy();
const Strategy& PodStrategy();
const Strategy& ServiceStrategy();
const Strategy& SecretStrategy();
const Strategy& ConfigMapStrategy();

// SetDefaults_PodSpec for the pod spec at JSON pointer `spec` ("/spec", or
// a template's "/spec/template/spec"); nothing when absent.
void DefaultPodSpec(api::ObjectBuilder* object, const std::string& spec);

// Drops the empty maps and lists that Go's omitempty leaves out when
// kube-apiserver writes an object it decoded into its Go type: metadata's
// labels, annotations, finalizers and ownerReferences for every kind (a
// custom resource's metadata goes through ObjectMeta too), and the map
// fields of the built-in kinds (a ConfigMap's data and binaryData, a
// Secret's data, a pod spec's nodeSelector, a Service's selector, a pod
// template's labels and annotations). So `labels: {}` sent by a client is
// not stored, and `kubectl get -o yaml` / `kubectl diff` do not show it.
void DropEmptyMaps(const ResourceInfo& resource, api::ObjectBuilder* object);

// Sets `pointer` to `value` unless it is present.
void SetIfAbsent(api::ObjectBuilder* object, const std::string& pointer,
                 std::string_view value);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_CORE_STRATEGY_H_
