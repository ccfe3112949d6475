// Strategies of the apps/v1 kinds with rules of their own: deployments
// (kube-apiserver's pkg/registry/apps/deployment).
#ifndef KCR_APISERVER_APPS_STRATEGY_H_
#define KCR_APISERVER_APPS_STRATEGY_H_

#include "apiserver/strategy.h"

namespace kcr {
namespace apiserver {

const Strategy& DeploymentStrategy();

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_APPS_STRATEGY_H_
