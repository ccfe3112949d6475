// What an Nginx asks for, and how a Deployment measures up to it: the
// nginx controller's decisions, free of any client or cache so that they
// can be tested on their own.
//
// An Nginx owns one Deployment, `<name>-deploy`. The controller owns these
// fields of it and nothing else (the API server's defaults and anyone
// else's additions are left alone):
//   - metadata.labels `underneathall-app: nginx-<name>` and
//     `app: underneathall` (other labels are kept);
//   - the controller ownerReference to the Nginx;
//   - spec.replicas;
//   - spec.selector.matchLabels (set on create; immutable afterwards);
//   - the same two labels on spec.template.metadata.labels;
//   - the container named `nginx`: its image, and its ports (exactly one,
//     containerPort spec.port; the server defaults its protocol).
#ifndef KCR_CONTROLLERS_NGINX_NGINX_DEPLOYMENT_H_
#define KCR_CONTROLLERS_NGINX_NGINX_DEPLOYMENT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "api/transform.h"
#include "api/types/condition.h"
#include "api/types/deployment.h"
#include "controllers/nginx/nginx_types.h"

namespace kcr::nginx {

// The Ready condition's type, and the reasons the controller gives it.
inline constexpr char kReadyCondition[] = "Ready";
inline constexpr char kReasonReady[] = "DeploymentReady";
inline constexpr char kReasonProgressing[] = "DeploymentProgressing";
inline constexpr char kReasonDeadlineExceeded[] = "ProgressDeadlineExceeded";
inline constexpr char kReasonInvalidSpec[] = "InvalidSpec";
inline constexpr char kReasonNotOwned[] = "DeploymentNotOwned";
inline constexpr char kReasonFailed[] = "DeploymentFailed";

// The container the controller manages in the pod template.
inline constexpr char kContainerName[] = "nginx";

// The Deployment an Nginx wants: its name and the fields the controller
// owns.
struct DesiredDeployment {
  std::string namespace_;
  std::string name;  // "<nginx name>-deploy"
  // The two labels: on the Deployment, its selector and its pod template.
  std::map<std::string, std::string> labels;
  int32_t replicas = 1;
  std::string image;
  int32_t port = 80;
};

// "<name>-deploy".
std::string DeploymentName(std::string_view nginx_name);

// The labels an Nginx's Deployment and pods carry.
std::map<std::string, std::string> DeploymentLabels(
    std::string_view nginx_name);

// Why `nginx` (defaults applied) cannot be turned into a Deployment, in
// kube-apiserver's field-error wording; empty when it can. Beyond the CRD
// schema (which the API server enforces too, but an object stored before
// the CRD had it would escape), it refuses what the schema lets through
// and a Deployment cannot run: spec.replicas above 2147483647 (a
// Deployment's replicas is an int32) and a spec.image that is not an image
// reference (`[registry[:port]/]repository[:tag][@digest]`, lower-case
// repository, no spaces).
std::vector<std::string> ValidateNginx(const Nginx& nginx);

// The Deployment that a valid `nginx` with defaults applied wants.
DesiredDeployment DesiredFor(const Nginx& nginx);

// A new Deployment for `desired`, controlled by `nginx` (the cached Nginx
// object: its uid makes the ownerReference).
absl::StatusOr<api::ObjectPtr> NewDeployment(const api::Object& nginx,
                                             const DesiredDeployment& desired);

// How `deployment` differs from `desired` in the fields the controller
// owns, one entry per field ("replicas 5->2", "image nginx:1.8->nginx:1.7.9",
// "port 8080->80", "labels", "template labels", "container nginx missing");
// empty when it matches.
std::vector<std::string> DeploymentDrift(const api::DeploymentView& deployment,
                                         const DesiredDeployment& desired);

// `deployment` (as read from the API server, with its resourceVersion) with
// the owned fields set to `desired` and everything else as it was: what an
// update sends. Never a cached Deployment: the cache keeps only part of one
// (TrimDeploymentForCache), and an update built from it would clear the
// rest.
absl::StatusOr<api::ObjectPtr> RepairDeployment(
    const api::Object& deployment, const DesiredDeployment& desired);

// The Ready condition for an Nginx that wants `replicas` of `deployment`:
// True (DeploymentReady) once the Deployment's controller has observed its
// latest generation and every replica is updated, available and ready with
// no old ones left; False with ProgressDeadlineExceeded when the rollout
// timed out; otherwise False (DeploymentProgressing). The message counts
// ready replicas. Its observedGeneration is `generation` (the Nginx's);
// lastTransitionTime is left for SetStatusCondition.
api::Condition ReadyConditionFor(const api::DeploymentView& deployment,
                                 int32_t replicas, int64_t generation);

// What the controller's cache keeps of a Deployment (the transform of the
// Manager's Deployment informer, as controller-runtime's per-object cache
// Transform): exactly the fields the controller reads, and nothing else.
//   - apiVersion, kind;
//   - metadata: name, namespace, uid, resourceVersion, generation, labels,
//     ownerReferences, finalizers, deletionTimestamp and
//     deletionGracePeriodSeconds;
//   - spec.replicas and spec.template.metadata.labels;
//   - of each container in spec.template.spec.containers: name, image, and
//     the containerPort of each of its ports;
//   - status: replicas, readyReplicas, availableReplicas, updatedReplicas,
//     observedGeneration, and the conditions of type Progressing whose
//     status is False (type, status, reason, message): the only one that
//     ReadyConditionFor reads.
// So DeploymentView::Create, DeploymentDrift, ReadyConditionFor,
// IsControlledBy and being_deleted() read the same from the trimmed object
// as from the whole one. A field of another type than expected is kept as
// it is (so the views read it as they would have). About a third of the
// bytes of a Deployment as the API server sends it (server defaults,
// strategy, selector, annotations and timestamps go), which is most of the
// Manager's memory at tens of thousands of Nginx.
//
// Safe because the controller never writes a cached Deployment back: a
// repair reads the Deployment from the API server first (see
// RepairDeployment). InvalidArgument for a null object.
absl::StatusOr<api::ObjectPtr> TrimDeploymentForCache(
    const api::ObjectPtr& deployment);

// TrimDeploymentForCache as an informer transform.
api::TransformFunc DeploymentCacheTransform();

}  // namespace kcr::nginx

#endif  // KCR_CONTROLLERS_NGINX_NGINX_DEPLOYMENT_H_
