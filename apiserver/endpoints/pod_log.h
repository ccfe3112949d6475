// pods/log: what `kubectl logs` reads. No container runs on the local API
// server, so a container's log is the simulated one (node_simulator.h): the
// lines it prints when it starts — two plausible lines, or the pod's
// kcr.io/sim-log annotation, line by line — and, once it has terminated,
// its termination message (status ...terminated.message, which the
// simulated node takes from kcr.io/sim-message) as the last line. A load
// pod's log thus ends with the one-line JSON summary its runner wrote.
// Lines are stamped with the container's startedAt and finishedAt.
//
// GET /api/v1/namespaces/<ns>/pods/<name>/log answers as kube-apiserver
// and the kubelet do: PodLogOptions validated first (422), NotFound for a
// missing pod, 400 BadRequest for a missing or unknown container, an empty
// 200 for a pod not yet on a node, the kubelet's 400 for a container that
// has not started ("container \"c\" in pod \"p\" is waiting to start:
// ContainerCreating") and for `previous` (containers never restart here);
// otherwise text/plain, after sinceSeconds/sinceTime, tailLines,
// timestamps and limitBytes. With follow the response streams until the
// container terminates, the pod goes away or the client leaves.
//
// Stateless functions; thread-safe.
#ifndef KCR_APISERVER_ENDPOINTS_POD_LOG_H_
#define KCR_APISERVER_ENDPOINTS_POD_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "apiserver/endpoints/http_server.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

// kube's validateContainer for pods/log, exec, attach: the container a
// request names (it must be one of the pod's), or the pod's only one; a
// 400 BadRequest otherwise.
absl::StatusOr<std::string> ResolveContainer(const api::Object& pod,
                                             const std::string& container);

// Literal log text for every container of a pod (one line per line).
inline constexpr char kSimLogAnnotation[] = "kcr.io/sim-log";

struct LogLine {
  absl::Time time;
  std::string text;  // without the newline
};

// The lines `container` of `pod` has printed by now, oldest first; empty
// when it has not started. Later calls only ever append lines.
std::vector<LogLine> SimulatedContainerLog(const api::Object& pod,
                                           std::string_view container);

// PodLogOptions (core/v1) from the query.
struct PodLogOptions {
  std::string container;
  bool follow = false;
  bool previous = false;
  bool timestamps = false;
  std::optional<int64_t> since_seconds;
  std::optional<absl::Time> since_time;
  std::optional<int64_t> tail_lines;
  std::optional<int64_t> limit_bytes;
};

// Parses and validates the query: 400 for a value that does not parse, 422
// (PodLogOptions "<pod>" is invalid) for one kube-apiserver refuses.
absl::StatusOr<PodLogOptions> ParsePodLogOptions(const HttpRequest& request,
                                                 std::string_view pod_name);

// Renders lines as the kubelet writes them: "<text>\n", or with timestamps
// "2025-01-02T03:04:05.000000000Z <text>\n".
std::string FormatLogLine(const LogLine& line, bool timestamps);

// Serves a request for pods/log of `ns`/`name`; `pods` is the pods
// resource. Answers every method but GET with 405.
void ServePodLog(Registry* registry, const ResourceInfo& pods,
                 const std::string& ns, const std::string& name,
                 const HttpRequest& request, HttpExchange* exchange,
                 const Clock* clock);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_POD_LOG_H_
