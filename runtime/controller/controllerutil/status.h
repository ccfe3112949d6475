// UpdateStatus: read-modify-write of an object's status subresource with
// conflict retries, as client-go's retry.RetryOnConflict around a Get and
// an UpdateStatus: the way every reconciler reports what it saw.
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

// What a reconciler calls with the object it read from its cache: applies
// `mutate` to a copy of `cached` first, and sends nothing when that leaves
// it as it was (a reconcile that changes nothing writes nothing, so the
// status write's own watch event ends the loop). Otherwise it sends that
// copy, and when its resourceVersion is stale (the cache was behind), does
// the UpdateStatus above, in `cached`'s namespace. Returns `cached` itself when
// nothing was written, else the object as the server has it afterwards;
// NotFound when the object is gone; `mutate`'s error as it returned it.
//
//   KCR_RETURN_IF_ERROR(UpdateStatus(ctx, client, ResourceFor<Nginx>(),
//       nginx, [&](api::ObjectBuilder& o) {
//         return o.SetInt("/status/readyReplicas", ready);
//       }).status());
absl::StatusOr<api::ObjectPtr> UpdateStatus(const Context& ctx,
                                            client::RestClient* client,
                                            const client::Resource& resource,
                                            const api::ObjectPtr& cached,
                                            const MutateFunc& mutate,
                                            const RetryOptions& retry = {});

}  // namespace kcr::controller::controllerutil

#endif  // KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_STATUS_H_
