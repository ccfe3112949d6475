// The SimpleDeployment operator, written the kopf way (runtime/handlers):
// the tutorial's first operator, handler for handler.
//
//   create_fn      on create: makes the SimpleDeployment's pod (busybox,
//                  echo, then sleep spec.sleepytime seconds; see
//                  simpledeployment_pod.h) and returns {"children":
//                  [<pod uid>]}, which the engine keeps under
//                  status.create_fn (the Children printer column). A
//                  retry finds the pod an earlier try made (its owner's
//                  uid label) and makes no second one.
//   sleepytime_fn  on a change of spec.sleepytime (not on create: create_fn
//                  made the pod): deletes the SimpleDeployment's pods and
//                  makes a new one; returns the new children, and writes
//                  them to status.create_fn.children too so that the
//                  Children column stays true.
//   delete_fn      on delete: logs; the pod goes with its owner (the
//                  garbage collector follows its owner reference). Being a
//                  delete handler, it holds the object with the operator's
//                  finalizer until it has run, as kopf's does.
//
// An invalid spec.sleepytime (which the API server's schema refuses, so
// only an object written past it) fails the handler for good
// (Outcome::Permanent, a Warning Event); a failed API call is retried with
// the handler's backoff.
//
//   handlers::Registry registry;
//   simpledeployment::RegisterSimpleDeploymentHandlers(registry, {});
//   KCR_RETURN_IF_ERROR(handlers::AddToManager(registry, mgr));
#ifndef KCR_CONTROLLERS_SIMPLEDEPLOYMENT_SIMPLEDEPLOYMENT_HANDLERS_H_
#define KCR_CONTROLLERS_SIMPLEDEPLOYMENT_SIMPLEDEPLOYMENT_HANDLERS_H_

#include "absl/time/time.h"
#include "controllers/simpledeployment/simpledeployment_pod.h"
#include "runtime/handlers/registry.h"

namespace kcr::simpledeployment {

// The handlers' ids: their progress records, status.<id> and logs.
inline constexpr char kCreateHandlerId[] = "create_fn";
inline constexpr char kSleepytimeHandlerId[] = "sleepytime_fn";
inline constexpr char kDeleteHandlerId[] = "delete_fn";
// The field sleepytime_fn watches.
inline constexpr char kSleepytimeField[] = "spec.sleepytime";

struct SimpleDeploymentOptions {
  PodOptions pod;
  // Before retrying a failed API call (unset: the operator's default,
  // kopf's 60 s).
  std::optional<absl::Duration> backoff;
};

// Registers create_fn, sleepytime_fn and delete_fn for
// simpledeployments.example.org/v1 on `registry`.
void RegisterSimpleDeploymentHandlers(handlers::Registry& registry,
                                      SimpleDeploymentOptions options = {});

}  // namespace kcr::simpledeployment

#endif  // KCR_CONTROLLERS_SIMPLEDEPLOYMENT_SIMPLEDEPLOYMENT_HANDLERS_H_
