// What the workload controllers read of a pod's status, as kube's podutil
// reads it, and the count fields they write.
//
// Stateless functions; thread-safe.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_POD_UTIL_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_POD_UTIL_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/time/time.h"
#include "api/object.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// status.phase ("" before the server gave it one).
std::string_view PodPhase(const api::Object& pod);

// When the pod's Ready condition turned True (InfinitePast when its time
// does not parse), or nullopt when it is not Ready.
std::optional<absl::Time> PodReadySince(const api::Object& pod);

// kube's podutil.IsPodAvailable: Ready for at least `min_ready_seconds` at
// `now`. When it is Ready but not yet available, `*due` (if given) is
// lowered to when it becomes so.
bool PodAvailable(const api::Object& pod, int64_t min_ready_seconds,
                  absl::Time now, absl::Time* due = nullptr);

// Sets status count `key` to `v`, leaving it out when zero and
// `omit_zero` (Go's omitempty).
void SetStatusCount(rapidjson::Value* status, const char* key, int64_t v,
                    bool omit_zero, rapidjson::MemoryPoolAllocator<>& a);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_POD_UTIL_H_
