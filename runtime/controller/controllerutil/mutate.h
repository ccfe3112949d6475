// MutateFunc: how the write helpers (UpdateStatus, CreateOrUpdate,
// CreateOrPatch) let the caller edit an object: it gets a mutable copy of
// what the server has and edits it in place. It may be called more than
// once (again after a conflict), each time on a fresh copy, so it must
// compute the desired state from the copy and its own inputs only.
#ifndef KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_MUTATE_H_
#define KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_MUTATE_H_

#include <functional>

#include "absl/status/status.h"
#include "api/object_builder.h"

namespace kcr::controller::controllerutil {

// An error from the function ends the helper with that error, having
// written nothing more.
using MutateFunc = std::function<absl::Status(api::ObjectBuilder& object)>;

}  // namespace kcr::controller::controllerutil

#endif  // KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_MUTATE_H_
