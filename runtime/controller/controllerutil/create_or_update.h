// CreateOrUpdate and CreateOrPatch, as controller-runtime's controllerutil:
// make the object the server has match what a mutate function says,
// creating it when it does not exist, and report what was done.
#ifndef KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_CREATE_OR_UPDATE_H_
#define KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_CREATE_OR_UPDATE_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "base/context.h"
#include "runtime/client/rest_client.h"
#include "runtime/controller/controllerutil/mutate.h"

namespace kcr::controller::controllerutil {

// controllerutil.OperationResult.
enum class OperationResult {
  kUnchanged,          // "unchanged": nothing written
  kCreated,            // "created"
  kUpdated,            // "updated": the object (not its status)
  kUpdatedStatus,      // "updatedStatus": the object and its status
  kUpdatedStatusOnly,  // "updatedStatusOnly": only its status
};
std::string_view OperationResultName(OperationResult result);

struct WriteResult {
  OperationResult result = OperationResult::kUnchanged;
  // The object as the server has it afterwards.
  api::ObjectPtr object;
};

// Gets the object named as `object` (its name, and its namespace or
// resource.namespace_) from `resource`. When it exists, applies `mutate` to
// a copy and PUTs it if that changed anything (kUpdated; kUnchanged writes
// nothing). When it does not, applies `mutate` to a copy of `object` (which
// supplies apiVersion and kind, and may carry more) and creates it
// (kCreated). The PUT carries the resourceVersion read, so a concurrent
// change gives a Conflict error (retry at the reconcile level). `mutate`
// must not change the name or namespace (InvalidArgument).
absl::StatusOr<WriteResult> CreateOrUpdate(const Context& ctx,
                                           client::RestClient* client,
                                           const client::Resource& resource,
                                           const api::Object& object,
                                           const MutateFunc& mutate);

// As CreateOrUpdate, but writes changes as JSON merge patches computed
// between the object read and the mutated copy: one to the object for
// everything but status (kUpdated), one to its status subresource for
// status (kUpdatedStatusOnly, or kUpdatedStatus when both changed). As in
// controller-runtime, the patches carry no resourceVersion: they change
// only the fields the mutate function changed, whoever wrote the rest.
absl::StatusOr<WriteResult> CreateOrPatch(const Context& ctx,
                                          client::RestClient* client,
                                          const client::Resource& resource,
                                          const api::Object& object,
                                          const MutateFunc& mutate);

}  // namespace kcr::controller::controllerutil

#endif  // KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_CREATE_OR_UPDATE_H_
