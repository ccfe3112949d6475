// What the pods controller reports about a Pod, and what changed between
// two versions of one: phase, readiness, restarts and node, the fields a
// person watching pods (`kubectl get pods -w`) looks at.
#ifndef KCR_CONTROLLERS_PODS_POD_DIFF_H_
#define KCR_CONTROLLERS_PODS_POD_DIFF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "api/object.h"

namespace kcr::pods {

struct PodState {
  std::string phase;     // status.phase, "" before the server set one
  bool ready = false;    // the Ready condition is True
  int64_t restarts = 0;  // restartCount summed over (init) containers
  std::string node;      // spec.nodeName, "" while unscheduled
};

// The state of `pod`; a field that is absent or mistyped reads as empty,
// false or zero (never fails: the object comes from the network).
PodState PodStateOf(const api::ObjectPtr& pod);

struct PodChange {
  std::string field;  // "phase", "ready", "restarts", "node"
  std::string from;
  std::string to;
};

// The fields that differ, in the order phase, ready, restarts, node.
std::vector<PodChange> DiffPodStates(const PodState& before,
                                     const PodState& after);

// "phase=Pending->Running ready=false->true": key=value pairs for a log
// line; an empty value is written as "" so the pair stays readable.
std::string FormatChanges(const std::vector<PodChange>& changes);

// "phase=Running ready=true restarts=0 node=kcr-node".
std::string FormatState(const PodState& state);

}  // namespace kcr::pods

#endif  // KCR_CONTROLLERS_PODS_POD_DIFF_H_
