// The pod a SimpleDeployment runs, as the tutorial's create handler builds
// it: busybox, a shell that echoes "I'm so very useful!" and then sleeps
// spec.sleepytime seconds, never restarted, and adopted by its
// SimpleDeployment the way kopf.adopt adopts a child (a controller owner
// reference, the owner's namespace, generateName "<owner name>-", the
// owner's labels where the pod has none of that key).
#ifndef KCR_CONTROLLERS_SIMPLEDEPLOYMENT_SIMPLEDEPLOYMENT_POD_H_
#define KCR_CONTROLLERS_SIMPLEDEPLOYMENT_SIMPLEDEPLOYMENT_POD_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "api/object.h"

namespace kcr::simpledeployment {

// The pod's one container.
inline constexpr char kContainerName[] = "the-only-one";
// On every pod: the uid of the SimpleDeployment that made it, so that its
// pods are listed by one label selector (its name may be longer than a
// label value may be, and a new object of the same name is not the same
// owner).
inline constexpr char kOwnerUidLabel[] = "simpledeployment.example.org/uid";

struct PodOptions {
  std::string image = "busybox";
};

// What the container runs: `sh -x -c` with this script.
std::string PodScript(int64_t sleepytime);

// The pod for `owner` (a SimpleDeployment with apiVersion, kind, name,
// namespace and uid) sleeping `sleepytime` seconds. InvalidArgument when
// `owner` cannot own it (no uid, no namespace) or `sleepytime` is
// negative.
absl::StatusOr<api::ObjectPtr> BuildPod(const api::Object& owner,
                                        int64_t sleepytime,
                                        const PodOptions& options = {});

}  // namespace kcr::simpledeployment

#endif  // KCR_CONTROLLERS_SIMPLEDEPLOYMENT_SIMPLEDEPLOYMENT_POD_H_
