// The strategy of custom resources (objects of a CRD): pruned, defaulted
// and validated against the served version's structural schema; a status
// subresource makes a create start without status.
#ifndef KCR_APISERVER_REGISTRY_CUSTOM_RESOURCE_STRATEGY_H_
#define KCR_APISERVER_REGISTRY_CUSTOM_RESOURCE_STRATEGY_H_

#include "apiserver/registry/strategy.h"

namespace kcr {
namespace apiserver {

const Strategy& CustomResourceStrategy();

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_CUSTOM_RESOURCE_STRATEGY_H_
