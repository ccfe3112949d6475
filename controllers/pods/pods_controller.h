// The pods controller: watches Pods (in every namespace or one) and
// reports them. Each add and delete is logged at INFO with the pod's
// phase, readiness, restarts and node, and each update that changes one of
// those with what changed (`pod updated namespace=default name=web
// phase=Pending->Running ready=false->true`); updates that change none of
// them (labels, annotations, resyncs) only at VLOG(4). The gauge
// `kcr_pods{namespace,phase}` in the Manager's registry counts the pods
// seen; a series goes away when its count drops to zero. It never writes
// to the API server.
//
// It is an event handler on the Manager's shared Pod informer rather than
// a reconciler: what it reports is the transition between two versions of
// a Pod, which a level-triggered reconciler never sees. Like a controller
// it runs only while its Manager leads (one replica logs and exports), and
// when it stops its gauge series are removed, so that a standby does not
// export stale counts.
#ifndef KCR_CONTROLLERS_PODS_PODS_CONTROLLER_H_
#define KCR_CONTROLLERS_PODS_PODS_CONTROLLER_H_

#include <string>

#include "absl/status/status.h"
#include "runtime/controller/manager.h"

namespace kcr::pods {

struct PodsOptions {
  // Only Pods in this namespace; "" for the Manager's cache namespace
  // (every namespace unless the Manager's cache is limited to one).
  std::string namespace_;
};

// The controller's name (logs, and the Runnable AddPodsController adds).
// It records no Events.
inline constexpr char kPodsControllerName[] = "pods";

// Adds the pods controller to `mgr` (before Start, or after: it then
// starts at once), registering kcr_pods in mgr's registry. Once per
// Manager: a second one would count every pod twice.
absl::Status AddPodsController(controller::Manager& mgr,
                               const PodsOptions& options);

}  // namespace kcr::pods

#endif  // KCR_CONTROLLERS_PODS_PODS_CONTROLLER_H_
