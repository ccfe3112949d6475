// UpdateStatus: read-modify-write of an object's status subresource with
// conflict retries, as client-go's retry.RetryOnConflict around a Get and
// an UpdateStatus (the usual way a reconciler reports what it saw).
#ifndef KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_STATUS_H_
#define KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_STATUS_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "base/context.h"
#include "runtime/client/rest_client.h"
#include "runtime/controller/controllerutil/mutate.h"
#include "runtime/controller/controllerutil/retry.h"

namespace kcr::controller::controllerutil {

// Gets `name` from `resource` (give its namespace), applies `mutate` to a
// copy and PUTs the copy to /status; on a conflict, does it all again (up
// to retry.backoff.steps times). Writes nothing when `mutate` leaves the
// object as it was. Returns the object as the server has it afterwards.
// Only the status of the copy is stored; the server keeps everything else.
//
//   auto updated = UpdateStatus(ctx, client, nginxes.InNamespace(ns), name,
//       [&](api::ObjectBuilder& o) {
//         return SetStatusCondition(o, ready, clock->Now()).status();
//       });  // conditions.h
absl::StatusOr<api::ObjectPtr> UpdateStatus(const Context& ctx,
                                            client::RestClient* client,
                                            const client::Resource& resource,
                                            std::string_view name,
                                            const MutateFunc& mutate,
                                            const RetryOptions& retry = {});

}  // namespace kcr::controller::controllerutil

#endif  // KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_STATUS_H_
