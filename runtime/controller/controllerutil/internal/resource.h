// The collection to address an object in: `resource`, in the object's
// namespace unless `resource` names one.
#ifndef KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_INTERNAL_RESOURCE_H_
#define KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_INTERNAL_RESOURCE_H_

#include <string>

#include "api/object.h"
#include "runtime/client/options.h"

namespace kcr::controller::controllerutil::internal {

inline client::Resource ResourceFor(const client::Resource& resource,
                                    const api::Object& object) {
  if (!resource.namespaced || !resource.namespace_.empty()) return resource;
  return resource.InNamespace(std::string(object.namespace_()));
}

}  // namespace kcr::controller::controllerutil::internal

#endif  // KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_INTERNAL_RESOURCE_H_
