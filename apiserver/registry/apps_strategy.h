// Strategies of the apps/v1 kinds with rules of their own: deployments and
// replicasets (kube-apiserver's pkg/registry/apps/{deployment,replicaset}).
// Their status writes may also change metadata.annotations, as kube's
// status strategies allow (the deployment controller records revisions so).
#ifndef KCR_APISERVER_REGISTRY_APPS_STRATEGY_H_
#define KCR_APISERVER_REGISTRY_APPS_STRATEGY_H_

#include "apiserver/registry/strategy.h"

namespace kcr {
namespace apiserver {

const Strategy& DeploymentStrategy();
const Strategy& ReplicaSetStrategy();

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_APPS_STRATEGY_H_
