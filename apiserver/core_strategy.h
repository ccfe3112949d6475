// Strategies of the core (v1) kinds with rules of their own: namespaces,
// pods, services, secrets (kube-apiserver's pkg/registry/core/<kind>).
#ifndef KCR_APISERVER_CORE_STRATEGY_H_
#define KCR_APISERVER_CORE_STRATEGY_H_

#include <string>

#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/strategy.h"

namespace kcr {
namespace apiserver {

const Strategy& NamespaceStrategy();
const Strategy& PodStrategy();
const Strategy& ServiceStrategy();
const Strategy& SecretStrategy();

// SetDefaults_PodSpec for the pod spec at JSON pointer `spec` ("/spec", or
// a template's "/spec/template/spec"); nothing when absent.
void DefaultPodSpec(api::ObjectBuilder* object, const std::string& spec);

// Sets `pointer` to `value` unless it is present.
void SetIfAbsent(api::ObjectBuilder* object, const std::string& pointer,
                 std::string_view value);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_CORE_STRATEGY_H_
