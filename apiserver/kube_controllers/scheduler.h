// The simulated cluster's scheduler: kube-scheduler's default filters and a
// least-allocated score, over the Node objects, for the node simulator.
//
// Filters, in kube-scheduler's order, each node stopping at the first that
// fails: NodeUnschedulable (spec.unschedulable, unless tolerated), node
// affinity (nodeSelector and requiredDuringSchedulingIgnoredDuringExecution
// with In, NotIn, Exists, DoesNotExist, Gt, Lt and matchFields on
// metadata.name), TaintToleration (NoSchedule and NoExecute taints), and
// NodeResourcesFit (cpu, memory and the pod count against
// status.allocatable). A pod that fits nowhere gets kube-scheduler's
// FailedScheduling message, e.g. "0/3 nodes are available: 1 Insufficient
// cpu, 2 node(s) didn't match Pod's node affinity/selector. preemption:
// 0/3 nodes are available: 1 No preemption victims found for incoming
// pod., 2 Preemption is not helpful for scheduling.".
//
// Stateless functions; thread-safe.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_SCHEDULER_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_SCHEDULER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// cpu in millicores, memory in bytes.
struct Resources {
  int64_t cpu_milli = 0;
  int64_t memory = 0;
  int64_t pods = 0;

  Resources& operator+=(const Resources& o) {
    cpu_milli += o.cpu_milli;
    memory += o.memory;
    pods += o.pods;
    return *this;
  }
  Resources& operator-=(const Resources& o) {
    cpu_milli -= o.cpu_milli;
    memory -= o.memory;
    pods -= o.pods;
    return *this;
  }
};

// A resource.Quantity ("100m", "1.5", "128Mi", "1G", "2e3") in units of
// 1/1000 (`milli`) or whole units rounded up; nullopt when it does not
// parse.
std::optional<int64_t> ParseQuantity(std::string_view q, bool milli);

// What a pod asks for: the sum of its containers' requests (a limit stands
// in for a missing request), or its largest init container's if larger;
// one pod.
Resources PodRequests(const api::Object& pod);

// A node's status.allocatable (capacity when missing).
Resources NodeAllocatable(const api::Object& node);

struct Placement {
  std::string node;     // where the pod goes, or empty
  std::string message;  // why it goes nowhere (FailedScheduling)
};

// kube-scheduler's NodeAffinity filter: `node` carries every label of the
// pod's spec.nodeSelector and matches one term of its required node
// affinity (when it has one).
bool MatchesNodeAffinity(const api::Object& pod, const api::Object& node);

// The first of `node`'s taints with effect NoExecute (and NoSchedule,
// unless `no_execute_only`) that the pod's tolerations do not tolerate
// (kube's TaintToleration filter); null when it tolerates them all.
const rapidjson::Value* UntoleratedTaint(const api::Object& pod,
                                         const api::Object& node,
                                         bool no_execute_only);

// Picks the node for `pod` among `nodes`, given what is already placed on
// each (`used(name)`): of the nodes that pass every filter, the least
// allocated (mean of cpu and memory shares), then the one with fewer pods,
// then the first by name.
Placement Schedule(const api::Object& pod,
                   const std::vector<api::ObjectPtr>& nodes,
                   const std::function<Resources(std::string_view)>& used);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_SCHEDULER_H_
