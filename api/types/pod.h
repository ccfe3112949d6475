// Pod (v1): a read-only view of what controllers read from Pods — phase,
// conditions, container statuses and restart counts — and a builder for the
// Pods controllers create (spec) and for the status a node reports.
#ifndef KCR_API_TYPES_POD_H_
#define KCR_API_TYPES_POD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/types/condition.h"
#include "api/types/owner_reference.h"
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
  // state.waiting.message, or state.terminated.message (the container's
  // termination message).
  std::string_view state_message;
  // state.terminated.exitCode; nullopt unless terminated with one.
  std::optional<int32_t> exit_code;
};

class PodView : public TypedView {
 public:
  // Where it lives on the server (GroupVersionResource and scope).
  static constexpr char kGroup[] = "";
  static constexpr char kVersion[] = "v1";
  static constexpr char kPlural[] = "pods";
  static constexpr bool kNamespaced = true;

  // InvalidArgument when `pod` is null or of another kind.
  static absl::StatusOr<PodView> Create(ObjectPtr pod);

  // status.phase: Pending, Running, Succeeded, Failed, Unknown, or "".
  std::string_view phase() const;
  // Whether the phase is Succeeded or Failed: every container ended and
  // none will restart.
  bool finished() const;
  // status.reason and status.message (why the pod is in its phase, e.g.
  // Evicted), or "".
  std::string_view reason() const;
  std::string_view message() const;
  std::string_view node_name() const;
  std::string_view pod_ip() const;
  std::vector<Condition> conditions() const;
  std::vector<ContainerStatus> container_statuses() const;
  std::vector<ContainerStatus> init_container_statuses() const;
  // The container status named `name`, or else the first terminated one
  // (how a pod with one main container ended); nullopt when none ended.
  std::optional<ContainerStatus> terminated_container(
      std::string_view name) const;
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

// spec.containers[i] as a controller writes it. Empty fields and lists are
// left out of the JSON.
struct PodContainer {
  std::string name;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  // env[] as name/value pairs, in order.
  std::vector<std::pair<std::string, std::string>> env;
  // ports[].containerPort; each must be 1..65535.
  std::vector<int32_t> ports;
};

// Builds a v1 Pod. Setters that can meet bad input (a port out of range, an
// empty container name, an unknown phase) record the first error, which
// Build() returns; the builder never writes an invalid value.
class PodBuilder {
 public:
  PodBuilder(std::string_view namespace_, std::string_view name);
  // Edits an existing Pod (deep copy).
  explicit PodBuilder(const Object& pod);

  // metadata.generateName (the server appends a random suffix when
  // metadata.name is empty).
  PodBuilder& SetGenerateName(std::string_view prefix);
  PodBuilder& SetLabels(const std::map<std::string, std::string>& labels);
  PodBuilder& SetOwner(const OwnerReference& owner);
  // Adds the container, or replaces the one with the same name in place.
  PodBuilder& SetContainer(const PodContainer& container);
  // spec.restartPolicy: Always, OnFailure or Never.
  PodBuilder& SetRestartPolicy(std::string_view policy);
  PodBuilder& SetNodeName(std::string_view node);

  // status.phase: Pending, Running, Succeeded, Failed or Unknown.
  PodBuilder& SetPhase(std::string_view phase);
  PodBuilder& SetPodIP(std::string_view ip);
  // Adds or updates status.conditions[type] (SetStatusCondition's rules for
  // lastTransitionTime).
  PodBuilder& SetCondition(const Condition& condition, absl::Time now);
  // Adds or replaces status.containerStatuses[name]: name, image, ready,
  // started, restartCount, and state.<state>.reason, .message and (for
  // terminated) .exitCode when `status.state` is running, waiting or
  // terminated.
  PodBuilder& SetContainerStatus(const ContainerStatus& status);

  ObjectBuilder& object() { return builder_; }
  std::string ToJson() const { return builder_.ToJson(); }
  // The first error a setter met, else the built Pod.
  absl::StatusOr<ObjectPtr> Build() const;

 private:
  void Fail(absl::Status status);
  // Index of the element of the array at `pointer` whose "name" is `name`,
  // or the array's size; creates the array when absent.
  size_t NamedIndex(std::string_view pointer, std::string_view name);

  ObjectBuilder builder_;
  absl::Status error_;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_POD_H_
