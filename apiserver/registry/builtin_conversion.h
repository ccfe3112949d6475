// Conversion between the served versions of a built-in kind stored at one
// of them: autoscaling/v1 and v2 HorizontalPodAutoscalers share one
// collection stored at v2, as kube-apiserver stores them. v1 shows the CPU
// utilization target and current value as its own fields; what v1 cannot
// say (other metrics, behavior) rides in annotations, as kube's conversion
// keeps it, so a v1 read-modify-write loses nothing. events.k8s.io/v1
// Events are the core v1 Events under other names (regarding for
// involvedObject, note for message, deprecated* for the series fields the
// core Event keeps).
//
// Stateless; thread-safe.
#ifndef KCR_APISERVER_REGISTRY_BUILTIN_CONVERSION_H_
#define KCR_APISERVER_REGISTRY_BUILTIN_CONVERSION_H_

#include <string_view>

#include "api/object_builder.h"
#include "apiserver/registry/resources.h"

namespace kcr {
namespace apiserver {

// True when objects of `resource` are stored at another group or version
// than the one it serves (and so convert on the way in and out).
bool ConvertsBuiltin(const ResourceInfo& resource);

// Converts `object`, as sent to `resource`, to the stored form and sets
// its apiVersion to the stored one.
void ConvertBuiltinToStorage(const ResourceInfo& resource,
                             api::ObjectBuilder* object);
// Converts a stored `object` to what `resource` serves and sets its
// apiVersion.
void ConvertBuiltinFromStorage(const ResourceInfo& resource,
                               api::ObjectBuilder* object);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_BUILTIN_CONVERSION_H_
