// The events a controller's watches deliver to predicates and event
// handlers (controller-runtime's pkg/event), made from an informer's
// notifications. Objects are the cache's: shared and immutable.
#ifndef KCR_RUNTIME_CONTROLLER_EVENT_H_
#define KCR_RUNTIME_CONTROLLER_EVENT_H_

#include "api/object.h"

namespace kcr::controller {

// An object appeared (first list, or created).
struct CreateEvent {
  api::ObjectPtr object;
  // It came from the informer's initial list.
  bool is_in_initial_list = false;
};

// An object changed (or a resync delivered it again, old == new).
struct UpdateEvent {
  api::ObjectPtr object_old;
  api::ObjectPtr object_new;
};

// An object went away; `object` is its last known state.
struct DeleteEvent {
  api::ObjectPtr object;
  // The deletion was noticed by a relist, and `object` may be stale
  // (client-go's DeletedFinalStateUnknown tombstone).
  bool delete_state_unknown = false;
};

// Something outside the cluster asks for the object to be reconciled.
struct GenericEvent {
  api::ObjectPtr object;
};

}  // namespace kcr::controller

#endif  // KCR_RUNTIME_CONTROLLER_EVENT_H_
