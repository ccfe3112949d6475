// The copyrator controller: for each CopyratorRule (flant.com/v1, see
// controllers/copyrator/copyrator_types.h), copies every ConfigMap or Secret
// (ruleType) of the source namespace(s) that matches the rule's selector into
// every other Active namespace, and keeps the copies in step (copy_plan.h says
// what a copy holds and how it is marked).
//
// One reconcile per rule (key: the rule's namespace/name). Watches of
// ConfigMaps, Secrets and Namespaces map each change to the rules it can
// concern: the rule a copy names, the rules whose sources (or a source's
// target name) it is, and every rule for a namespace. The reconcile reads
// only the informers' caches on the way there:
//   - a new or changed source, or a new namespace: copies are created or
//     updated; a source deleted or no longer matching: its copies go;
//   - Terminating namespaces get no copies;
//   - an object at a target name that is not this rule's copy (a foreign
//     object, or another rule's copy) is never written: a Warning Event
//     "Conflict" on the rule and a Ready=False condition listing the
//     targets in conflict report it;
//   - a rule being deleted holds the finalizer copyrator.flant.com/finalizer
//     until its copies are gone (listed from the API server, not the
//     cache, so that none made just before is missed);
//   - status.copies (copies in place), status.observedGeneration and a
//     Ready condition;
//   - the counter kcr_copyrator_warnings_total{reason} in the Manager's
//     registry counts the Warning Events (InvalidSpec, Conflict).
// AlreadyExists and Conflict from a write mean the cache was behind: the
// rule is requeued and the next reconcile sees the object. Only names are
// ever logged, never the data of what is copied.
#ifndef KCR_CONTROLLERS_COPYRATOR_COPYRATOR_CONTROLLER_H_
#define KCR_CONTROLLERS_COPYRATOR_COPYRATOR_CONTROLLER_H_

#include "absl/status/status.h"
#include "runtime/controller/manager.h"

namespace kcr::copyrator {

// The controller's name (logs, metrics' `controller` label), and the
// component its Events come from.
inline constexpr char kCopyratorControllerName[] = "copyrator";
inline constexpr char kCopyratorEventComponent[] = "copyrator-controller";

// Event reasons (and the reasons of the Ready condition they go with).
inline constexpr char kEventInvalidSpec[] = "InvalidSpec";
inline constexpr char kEventConflict[] = "Conflict";

// The condition the rule's status reports.
inline constexpr char kReadyCondition[] = "Ready";

struct CopyratorOptions {
  // Rules reconciled at once.
  int workers = 1;
};

// Adds the copyrator controller to `mgr`. It needs the Manager's cache to
// span every namespace: under a cache limited to one namespace it sees,
// and copies into, only that one.
absl::Status AddCopyratorController(controller::Manager& mgr,
                                    const CopyratorOptions& options = {});

}  // namespace kcr::copyrator

#endif  // KCR_CONTROLLERS_COPYRATOR_COPYRATOR_CONTROLLER_H_
