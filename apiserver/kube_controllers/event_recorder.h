// EventRecorder: the core/v1 Events kube-controller-manager's controllers
// record through client-go's legacy recorder (the deployment controller's
// ScalingReplicaSet, the replicaset controller's SuccessfulCreate and
// SuccessfulDelete), written straight into the registry: named
// "<object>.<UnixNano in hex>" in the object's namespace, with
// source.component, reportingComponent, first and last timestamp and a
// count of 1.
//
// Thread-safe.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_EVENT_RECORDER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_EVENT_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "api/object.h"
#include "apiserver/registry/registry.h"

namespace kcr {
namespace apiserver {

class EventRecorder {
 public:
  // `registry` must outlive the recorder; `component` is the controller's
  // name as kube-controller-manager gives it ("deployment-controller").
  EventRecorder(Registry* registry, std::string component);

  // An Event about `object` (whose apiVersion and kind are given, since a
  // stored object may lack them), of type Normal or Warning, at `now`.
  // A failure to record is logged, never returned: Events are best effort.
  void Record(const api::Object& object, std::string_view api_version,
              std::string_view kind, bool warning, std::string_view reason,
              std::string_view message, absl::Time now);

 private:
  Registry* const registry_;
  const std::string component_;
  // The last name suffix handed out, so names stay unique within a
  // nanosecond.
  std::atomic<int64_t> last_nanos_{0};
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_EVENT_RECORDER_H_
