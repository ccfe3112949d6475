// NodeSimulator: a simulated node and kubelet, like kwok, in process over
// the local API server's Registry, so pods and deployments progress the way
// they do on a cluster although nothing runs.
//
// Pods (every pod not being deleted):
//   1. scheduled at once: spec.nodeName set to the node (unless set), status
//      Pending with PodScheduled=True, hostIP, startTime and each container
//      waiting with reason ContainerCreating;
//   2. Running `running_after` after creationTimestamp: podIP/podIPs from
//      10.244.0.0/16, Initialized, Ready, ContainersReady and PodScheduled
//      True, init containers terminated Completed, every container running
//      and ready;
//   3. pods with restartPolicy Never or OnFailure finish `complete_after`
//      after they started running: Succeeded (exit code 0, reason
//      Completed) or Failed (exit code, reason Error, the termination
//      message), Ready and ContainersReady False (PodCompleted /
//      PodFailed). Pods with restartPolicy Always (the default) keep
//      running.
// Each pod can override its timing and outcome with annotations:
//   kcr.io/sim-running-after   duration, e.g. "2s", "500ms" (default 500ms)
//   kcr.io/sim-complete-after  duration after Running (default 2s)
//   kcr.io/sim-outcome         Succeeded (default) or Failed
//   kcr.io/sim-exit-code       integer (default 0, or 1 when Failed)
//   kcr.io/sim-message         the containers' termination message
//   kcr.io/sim-log             what the containers print when they start
//                              (their log, pod_log.h, which ends with the
//                              termination message)
// A malformed annotation falls back to the default (and is logged).
//
// Containers that sleep (ContainerSleep below: a shell script whose last
// command is `sleep N`, or a command line that ends with `sleep N`) run for
// N seconds after they start, then exit 0 (reason Completed), as the real
// ones would:
//   - restartPolicy Never or OnFailure: the pod finishes when its last
//     container does (a container that does not sleep runs
//     `complete_after`), unless kcr.io/sim-complete-after says otherwise;
//   - restartPolicy Always: the container restarts as kubelet restarts it:
//     at once the first time, then after kubelet's crash-loop back-off
//     (10s, doubling, at most 5m; at once again when the container ran for
//     longer than twice that cap), waiting in CrashLoopBackOff meanwhile
//     (not ready); each restart adds one to restartCount and keeps the
//     exit in lastState.terminated.
//
// Deployments: `deployment_ready_after` after the simulator first sees a
// generation, status gets observedGeneration, replicas, updatedReplicas,
// readyReplicas and availableReplicas equal to spec.replicas (default 1;
// zero counts omitted, as Go does) and the Available
// (MinimumReplicasAvailable) and Progressing (NewReplicaSetAvailable)
// conditions. No ReplicaSets or Pods are created for them. Off when the
// deployment controller runs (builtin_controllers.h): then the Deployment's
// status is the controller's, and this simulator only runs its pods.
//
// The node itself: a Node object named `node_name`, Ready, with the host IP
// as its InternalIP, created when missing.
//
// Events (core/v1, in the pod's namespace), as a cluster records them:
// Scheduled from default-scheduler ("Successfully assigned ns/pod to node")
// when the simulator binds a pod, FailedScheduling (Warning) when the node
// refuses it; and from the kubelet (source.host the node), when the pod
// runs, Pulling, Pulled, Created and Started for each init container and
// container, with involvedObject.fieldPath spec.containers{name}.
//
// Simplified next to a kubelet: no restarts of failed containers (an
// OnFailure pod that fails stays Failed), the containers of a Never or
// OnFailure pod all terminate together (when the last one is due), no
// probes, no graceful termination, no node heartbeats or leases.
//
// Incremental (incremental_controller.h): the keys are pods ("ns/name"),
// deployments ("deployment:ns/name") and the node ("node:"). A pod's write
// queues the pod; a pod's sync moves it one stage and, when the next stage
// is due later (Running after running_after, completion after
// complete_after or its sleep, a sleeping container's exit or restart),
// asks for another pass then, so a pod that is done (Running forever,
// finished) costs nothing until it is written again: the work set is the
// timer queue, and a due time wakes only its own pod. A deployment's
// write queues it, and its sync asks for a pass when it is due to be ready;
// its first-seen time is forgotten on its deletion event. The node is
// ensured on the first pass, on a full resync and when it is deleted; any
// write of the node queues the pods it refused (cordon or taints), and only
// those.
//
// Thread safety: Sync is not reentrant; run one pass at a time.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_NODE_SIMULATOR_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_NODE_SIMULATOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "apiserver/kube_controllers/incremental_controller.h"
#include "apiserver/kube_controllers/scheduler.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

inline constexpr char kSimRunningAfterAnnotation[] = "kcr.io/sim-running-after";
inline constexpr char kSimCompleteAfterAnnotation[] =
    "kcr.io/sim-complete-after";
inline constexpr char kSimOutcomeAnnotation[] = "kcr.io/sim-outcome";
inline constexpr char kSimExitCodeAnnotation[] = "kcr.io/sim-exit-code";
inline constexpr char kSimMessageAnnotation[] = "kcr.io/sim-message";

// How long `container` (a pod's spec.containers[i]) runs before it exits
// on its own: N seconds when its command line (command, then args) is a
// shell (`sh`, `bash`, `ash`, `dash`, by name or path) given `-c` (alone or
// among other flags: `-x -c`, `-ec`) and a script
// whose last command (after the last `;`, `&&`, `||` or newline) is
// `sleep N`, or when the command line itself ends with `sleep N`; N a
// non-negative integer. nullopt for anything else (a server, `sleep
// infinity`, `sleep 1.5`).
std::optional<absl::Duration> ContainerSleep(const rapidjson::Value& container);

// kubelet's crash-loop back-off before restart number `restarts` + 1 of a
// container that ran for `ran` (flowcontrol.Backoff with 10s initial and
// 5m cap): none for the first restart or after a run longer than 10m.
absl::Duration CrashLoopBackOff(int64_t restarts, absl::Duration ran);

struct NodeSimulatorOptions {
  // The first node's name and address; with `nodes` > 1 the others are
  // <node_name>-2, -3, ... at the following addresses (10.0.0.2, ...).
  std::string node_name = "kcr-node";
  std::string host_ip = "10.0.0.1";
  int nodes = 1;
  // Each node's capacity (= allocatable), as resource quantities.
  std::string node_cpu = "32";
  std::string node_memory = "256Gi";
  std::string node_pods = "1000000";
  // Labels every node gets beside kubernetes.io/hostname, os and arch.
  std::map<std::string, std::string> node_labels;
  absl::Duration running_after = absl::Milliseconds(500);
  absl::Duration complete_after = absl::Seconds(2);
  absl::Duration deployment_ready_after = absl::Milliseconds(500);
  bool simulate_pods = true;
  bool simulate_deployments = true;
  // Keep a Ready Node object named node_name (recreated if deleted), as
  // kwok does, so `kubectl get nodes` shows where pods run.
  bool register_node = true;
  // status.nodeInfo.kubeletVersion of that node.
  std::string kubelet_version = "v1.32.4";
  // Record the pod Events a scheduler and kubelet would (core/v1).
  bool record_events = true;
  // Pass budget and full resync period.
  IncrementalControllerOptions incremental;
};

class NodeSimulator : public IncrementalController {
 public:
  // `registry` and `clock` must outlive the simulator.
  NodeSimulator(Registry* registry, const Clock* clock = Clock::Real(),
                NodeSimulatorOptions options = {});

  std::string Name() const override { return "node-simulator"; }
  // Writes to pods and deployments; the node's deletion, and its writes
  // while it refuses pods.
  bool Wants(const StoredEvent& event) const override;

 protected:
  void OnEvent(const StoredEvent& event) override;
  void EnqueueAll() override;
  // Moves one pod or deployment a stage (or ensures the node). Returns when
  // its next stage is due, or a retry after a failed write.
  absl::Time SyncKey(const std::string& key, absl::Time now) override;

 private:
  // Each returns when the object next needs a pass though nothing writes
  // it; a successful write returns InfiniteFuture, as its event queues the
  // object again.
  absl::Time SyncPod(const ResourceInfo& pods, const std::string& key,
                     const api::ObjectPtr& pod, absl::Time now);
  // A Running pod with restartPolicy Always: exits and restarts its
  // sleeping containers that are due.
  absl::Time RestartSleepers(const ResourceInfo& pods, const api::Object& pod,
                             absl::Time now);
  absl::Time SyncDeployment(const ResourceInfo& deployments,
                            const api::ObjectPtr& d, absl::Time now);
  std::string NextPodIp();
  // Who records a pod Event.
  enum class Reporter { kScheduler, kKubelet };
  // Records a core/v1 Event about `pod` as `reporter` does (`field_path`
  // names a container, "spec.containers{c}", or is empty); a failure is
  // logged only, as a recorder does.
  void RecordPodEvent(const api::Object& pod, Reporter reporter,
                      std::string_view field_path, bool warning,
                      std::string_view reason, std::string_view action,
                      const std::string& message, absl::Time now);
  // Events for each container of spec.<list> starting: Pulling, Pulled,
  // Created, Started.
  void RecordContainerStarts(const api::Object& pod, const char* list,
                             absl::Time now);
  // Creates the index-th node, or writes its first status; false when a
  // write lost a race and must be tried again.
  bool EnsureNode(const ResourceInfo& nodes, int index, absl::Time now);
  bool WriteNodeStatus(const ResourceInfo& nodes, const api::Object& node,
                       const std::string& host_ip, absl::Time now);
  std::string NodeName(int index) const;
  std::string HostIp(int index) const;
  // The InternalIP of the Node named `name` (the first node's address when
  // it has none, or is not one of ours).
  std::string HostIpOf(std::string_view name) const;
  // What the pods on each node request, kept per event: the scheduler's
  // view of what is free. `placed_`: the node and requests of every pod on
  // a node that has not finished.
  void Account(const std::string& key, const api::Object* pod);
  void Place(const std::string& key, const std::string& node,
             const Resources& requests);

  const NodeSimulatorOptions options_;
  uint32_t next_ip_ = 0;
  // The last Event name suffix used (UnixNanos), kept increasing so that
  // names stay unique within one pass.
  int64_t last_event_nanos_ = 0;
  // When each deployment's current generation was first seen.
  struct Seen {
    std::string uid;
    int64_t generation = 0;
    absl::Time at;
  };
  std::unordered_map<std::string, Seen> deployments_seen_;
  // Keys of the pods no node took (PodScheduled False): a write of a node,
  // or a pod leaving one, queues them.
  absl::flat_hash_set<std::string> unschedulable_;
  absl::flat_hash_map<std::string, std::pair<std::string, Resources>> placed_;
  absl::flat_hash_map<std::string, Resources> used_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_NODE_SIMULATOR_H_
