// Pod (v1): a read-only view of what controllers read from Pods — phase,
// conditions, container statuses and restart counts.
#ifndef KCR_API_TYPES_POD_H_
#define KCR_API_TYPES_POD_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "api/types/condition.h"
#include "api/types/view.h"

namespace kcr {
namespace api {

// status.containerStatuses[i]. Absent or mistyped fields read as empty /
// zero / false.
struct ContainerStatus {
  std::string_view name;
  std::string_view image;
  bool ready = false;
  bool started = false;
  int32_t restart_count = 0;
  // "running", "waiting", "terminated", or "" when state is absent.
  std::string_view state;
  // state.waiting.reason or state.terminated.reason (e.g. CrashLoopBackOff).
  std::string_view state_reason;
};

class PodView : public TypedView {
 public:
  // InvalidArgument when `pod` is null or of another kind.
  static absl::StatusOr<PodView> Create(ObjectPtr pod);

  // status.phase: Pending, Running, Succeeded, Failed, Unknown, or "".
  std::string_view phase() const;
  std::string_view node_name() const;
  std::string_view pod_ip() const;
  std::vector<Condition> conditions() const;
  std::vector<ContainerStatus> container_statuses() const;
  std::vector<ContainerStatus> init_container_statuses() const;
  // Sum of restartCount over containers and init containers.
  int64_t total_restarts() const;
  // The Ready condition is True (what kubectl shows as READY for the pod).
  bool ready() const;
  // Containers ready, out of container statuses reported ("1/2").
  int ready_containers() const;

 private:
  explicit PodView(ObjectPtr pod) : TypedView(std::move(pod)) {}
  std::vector<ContainerStatus> Statuses(std::string_view key) const;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_POD_H_
