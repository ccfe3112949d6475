// Strategies of the kinds operators' manifests carry beside Deployments:
// the workloads (StatefulSet, DaemonSet, ReplicationController, Job,
// CronJob) and the policy, autoscaling, storage, networking, scheduling,
// apiregistration and certificates kinds with rules of their own
// (kube-apiserver's pkg/registry/<group>/<kind>/strategy.go and the
// SetDefaults_<Kind> functions). Their controllers are not simulated: the
// objects are stored and served, with status written by clients.
#ifndef KCR_APISERVER_REGISTRY_WORKLOAD_STRATEGY_H_
#define KCR_APISERVER_REGISTRY_WORKLOAD_STRATEGY_H_

#include "apiserver/registry/resources.h"
#include "apiserver/registry/strategy.h"

namespace kcr {
namespace apiserver {

// The strategy of one of the kinds above, or null for the others.
const Strategy* WorkloadStrategyFor(const ResourceInfo& resource);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_WORKLOAD_STRATEGY_H_
