// The scale subresource: an object's replicas seen as an autoscaling/v1
// Scale (kube-apiserver's ScaleREST for deployments, and for custom
// resources whose CRD names the replica paths).
#ifndef KCR_APISERVER_REGISTRY_SCALE_H_
#define KCR_APISERVER_REGISTRY_SCALE_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "apiserver/registry/resources.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// The Scale of `object`: its name, namespace, uid, resourceVersion and
// creationTimestamp, spec.replicas and status.replicas from the resource's
// scale paths, and status.selector (a built-in's spec.selector as a
// selector string, or a custom resource's labelSelectorPath). Reads no
// storage, so a write in progress may call it.
absl::StatusOr<api::ObjectPtr> ScaleOf(const ResourceInfo& resource,
                                       const api::ObjectPtr& object);

// spec.replicas of a Scale sent with PUT: 422 Invalid unless an integer
// >= 0.
absl::StatusOr<int64_t> ScaleReplicas(const rapidjson::Value& scale,
                                      std::string_view name);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_SCALE_H_
