#include "runtime/controller/metrics.h"

namespace kcr::controller {

std::string_view ReconcileOutcomeName(ReconcileOutcome outcome) {
  switch (outcome) {
    case ReconcileOutcome::kSuccess:
      return "success";
    case ReconcileOutcome::kError:
      return "error";
    case ReconcileOutcome::kRequeue:
      return "requeue";
    case ReconcileOutcome::kRequeueAfter:
      return "requeue_after";
  }
  return "unknown";
}

}  // namespace kcr::controller
