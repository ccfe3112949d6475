// Conversion between the served versions of a built-in kind stored at one
// of them: autoscaling/v1 and v2 HorizontalPodAutoscalers share one
// collection stored at v2, as kube-apiserver stores them. v1 shows the CPU
// utilization target and current value as its own fields; what v1 cannot
// say (other metrics, behavior) rides in annotations, as kube's conversion
// keeps it, so a v1 read-modify-write loses nothing.
//
// Stateless; thread-safe.
#ifndef KCR_APISERVER_REGISTRY_BUILTIN_CONVERSION_H_
#define KCR_APISERVER_REGISTRY_BUILTIN_CONVERSION_H_

#include <string_view>

#include "api/object_builder.h"
#include "apiserver/registry/resources.h"

namespace kcr {
namespace apiserver {

// True when objects of `resource` are stored at another version than the
// one it serves (and so convert on the way in and out).
bool ConvertsBuiltin(const ResourceInfo& resource);

// Converts `object` of `resource`'s kind from `from` ("v2") to `to` ("v1")
// and sets its apiVersion. Nothing for a pair it does not know.
void ConvertBuiltin(const ResourceInfo& resource, std::string_view from,
                    std::string_view to, api::ObjectBuilder* object);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_BUILTIN_CONVERSION_H_
