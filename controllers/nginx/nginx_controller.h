// The nginx controller: for every Nginx (example.org/v1) it keeps a
// Deployment `<name>-deploy` running spec.replicas copies of spec.image
// (default nginx:1.7.9) listening on spec.port (default 80), labelled
// `underneathall-app: nginx-<name>` and `app: underneathall`, and
// controlled by the Nginx (see nginx_deployment.h for the fields it owns).
//
// What it does, per reconcile, from the Manager's caches (its Deployments
// trimmed to the fields it reads, see NginxOptions):
//   - creates the Deployment when it is missing (Event Normal Created);
//   - updates it when the Nginx's spec changed (Normal Updated), and puts
//     it back when someone edited or scaled it by hand (Normal
//     DriftRepaired) — it watches the Deployments it owns, so a change to
//     one wakes its Nginx; it compares only the fields it owns, so the API
//     server's defaults never look like drift;
//   - leaves deletion to the garbage collector (the ownerReference);
//   - writes status.readyReplicas, status.observedGeneration and a Ready
//     condition from the Deployment's status, and only when they change;
//   - refuses an invalid spec (ValidateNginx): Ready=False, reason
//     InvalidSpec with the validation message, a Warning InvalidSpec Event,
//     and no change to the Deployment;
//   - never touches a Deployment of that name that another object (or no
//     one) controls: Ready=False, reason DeploymentNotOwned, a Warning
//     Failed Event, and a retry with backoff;
//   - writes a Deployment only from a copy just read from the API server,
//     never from its cache;
//   - on a failed write: a Warning Failed Event, Ready=False with reason
//     DeploymentFailed, and a retry with backoff; a conflict (its cache was
//     behind) is retried at once, without an Event.
#ifndef KCR_CONTROLLERS_NGINX_NGINX_CONTROLLER_H_
#define KCR_CONTROLLERS_NGINX_NGINX_CONTROLLER_H_

#include "absl/status/status.h"
#include "runtime/client/options.h"
#include "runtime/controller/manager.h"

namespace kcr::nginx {

struct NginxOptions {
  // Concurrent reconciles (different Nginxes at once).
  int workers = 1;
  // Cache only the fields of each Deployment that the controller reads
  // (TrimDeploymentForCache in nginx_deployment.h): about a third of the
  // memory of whole Deployments. The transform is the Manager's Deployment
  // informer's, shared by every controller of that Manager that reads
  // Deployments: turn it off when another one needs their other fields.
  // Ignored (with a warning) when that informer is already running.
  bool trim_cached_deployments = true;
};

// The controller's name (logs, metrics' `controller` label), and the
// component its Events come from.
inline constexpr char kNginxControllerName[] = "nginx";
inline constexpr char kNginxEventComponent[] = "nginx-controller";

// Event reasons.
inline constexpr char kEventCreated[] = "Created";
inline constexpr char kEventUpdated[] = "Updated";
inline constexpr char kEventDriftRepaired[] = "DriftRepaired";
inline constexpr char kEventFailed[] = "Failed";
inline constexpr char kEventInvalidSpec[] = "InvalidSpec";

// The collections it reconciles and owns, as their types declare them
// (client::ResourceFor<Nginx>(), client::ResourceFor<api::DeploymentView>()),
// for tests and tools.
client::Resource NginxResource();
client::Resource DeploymentResource();

// Adds the nginx controller to `mgr` (and the Nginx kind to its
// RESTMapper). Once per Manager: AlreadyExists for a second one.
absl::Status AddNginxController(controller::Manager& mgr,
                                const NginxOptions& options);

}  // namespace kcr::nginx

#endif  // KCR_CONTROLLERS_NGINX_NGINX_CONTROLLER_H_
