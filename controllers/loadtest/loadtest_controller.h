// The loadtest controller: runs a LoadTest (example.org/v1) as
// spec.replicas load pods and reports the run in the LoadTest's status.
//
// A run belongs to one metadata.generation (status.observedGeneration):
//   1. status.state `pending`, observedGeneration = the generation;
//   2. one pod per replica, `<name>-r<generation>-<index>`, controlled by
//      the LoadTest (controller ownerReference), restartPolicy Never,
//      labelled kLoadTestLabel = the LoadTest's name and kGenerationLabel
//      = the generation, running /usr/local/bin/loadtest-runner from
//      LoadTestOptions::image with the flags cmd/loadtest-runner takes
//      (--method, --service-name, --service-port, --path, --repeat);
//   3. `executing`, with status.children = the pods' names;
//   4. `failed` as soon as one pod Failed (status.message names it), or
//      `finished` once every pod Succeeded; status.result aggregates the
//      summaries the runners left as termination messages (run_result.h);
//      while executing, it holds the pods that ended so far, and
//      status.message names a pod that cannot start (ImagePullBackOff...).
// Both end a run: nothing changes until the spec does. A spec change (a
// new generation) deletes the pods of earlier runs (pods of another
// generation are never counted) and starts a new run. A LoadTest being
// deleted keeps the finalizer kFinalizer until its pods are gone (the
// garbage collector would remove them too; the finalizer makes deletion
// wait for it).
//
// A named spec.test.servicePort is resolved to the port of that name in
// the Service spec.test.serviceName (one GET when a run starts); while
// it cannot be, the run stays `pending` with a message and is retried.
// Annotations of the LoadTest starting with kSimAnnotationPrefix are
// copied onto its pods: the local API server's simulated node reads them
// to decide a pod's outcome and termination message.
#ifndef KCR_CONTROLLERS_LOADTEST_LOADTEST_CONTROLLER_H_
#define KCR_CONTROLLERS_LOADTEST_LOADTEST_CONTROLLER_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "runtime/controller/manager.h"

namespace kcr::loadtest {

struct LoadTestOptions {
  // The load pods' image; it must hold kRunnerPath.
  std::string image = "kcr/controller-manager:latest";
  // Concurrent reconciles.
  int workers = 1;
  // How often a run waiting for its Service's named port, or a deletion
  // waiting for pods to go, looks again (besides the watch events that
  // wake it).
  absl::Duration retry_wait = absl::Seconds(10);
};

// The controller's name (logs, metrics' `controller` label), and the
// component its Events come from.
inline constexpr char kLoadTestControllerName[] = "loadtest";
inline constexpr char kLoadTestEventComponent[] = "loadtest-controller";

// Event reasons.
inline constexpr char kEventInvalidLoadTest[] = "InvalidLoadTest";
inline constexpr char kEventInvalidSpec[] = "InvalidSpec";
inline constexpr char kEventRestarting[] = "Restarting";
inline constexpr char kEventServicePortUnresolved[] = "ServicePortUnresolved";
inline constexpr char kEventFailedCreate[] = "FailedCreate";
inline constexpr char kEventCreatedPods[] = "CreatedPods";
inline constexpr char kEventExecuting[] = "Executing";
inline constexpr char kEventFinished[] = "Finished";
inline constexpr char kEventFailed[] = "Failed";
inline constexpr char kEventDeletingPods[] = "DeletingPods";

inline constexpr char kFinalizer[] = "kcr.io/loadtest-pods";
inline constexpr char kLoadTestLabel[] = "kcr.io/loadtest";
inline constexpr char kGenerationLabel[] = "kcr.io/loadtest-generation";
inline constexpr char kSimAnnotationPrefix[] = "kcr.io/sim-";
inline constexpr char kRunnerPath[] = "/usr/local/bin/loadtest-runner";
inline constexpr char kContainerName[] = "loadtest-runner";

// Adds the loadtest controller (named kLoadTestControllerName) to `mgr`, and
// the LoadTest kind to mgr's RESTMapper. Its pod informer holds only pods
// labelled kLoadTestLabel.
absl::Status AddLoadTestController(controller::Manager& mgr,
                                   const LoadTestOptions& options);

}  // namespace kcr::loadtest

#endif  // KCR_CONTROLLERS_LOADTEST_LOADTEST_CONTROLLER_H_
