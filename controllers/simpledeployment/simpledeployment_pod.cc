#include "controllers/simpledeployment/simpledeployment_pod.h"

#include <map>

#include "absl/status/status.h"
#include "api/types/pod.h"
#include "base/status_macros.h"
#include "base/str_cat.h"
#include "runtime/controller/controllerutil/owner.h"

namespace kcr::simpledeployment {

std::string PodScript(int64_t sleepytime) {
  return Cat("echo \"I'm so very useful!\"\nsleep ", sleepytime, "\n");
}

absl::StatusOr<api::ObjectPtr> BuildPod(const api::Object& owner,
                                        int64_t sleepytime,
                                        const PodOptions& options) {
  if (sleepytime < 0) {
    return absl::InvalidArgumentError(
        Cat("sleepytime ", sleepytime, " is negative"));
  }
  if (owner.namespace_().empty() || owner.uid().empty()) {
    return absl::InvalidArgumentError(
        Cat("SimpleDeployment ", owner.Key(), " has no namespace or uid"));
  }
  api::PodContainer c;
  c.name = kContainerName;
  c.image = options.image;
  c.command = {"sh", "-x", "-c"};
  c.args = {PodScript(sleepytime)};
  api::PodBuilder pod(owner.namespace_(), "");
  // kopf.adopt: the owner's labels, under the pod's own.
  std::map<std::string, std::string> labels = owner.labels().ToMap();
  labels[kOwnerUidLabel] = std::string(owner.uid());
  pod.SetGenerateName(Cat(owner.name(), "-"))
      .SetLabels(labels)
      .SetContainer(c)
      .SetRestartPolicy("Never");
  KCR_RETURN_IF_ERROR(
      controller::controllerutil::SetControllerReference(owner, pod.object()));
  return pod.Build();
}

}  // namespace kcr::simpledeployment
