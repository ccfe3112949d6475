// Finalizers on the API server: add or remove one of an object's
// metadata.finalizers, safely against concurrent writers.
//
// Each write is a JSON merge patch of metadata.finalizers carrying the
// object's metadata.resourceVersion, so the server refuses it (409) when
// someone else changed the object since it was read; the helper then reads
// the object again, re-checks, and retries with RetryOnConflict's backoff.
// Nothing is written when the finalizer is already there (or already
// gone). Unlike controller-runtime's in-memory AddFinalizer, these write:
// a reconciler calls them before (add) and after (remove) its cleanup.
#ifndef KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_FINALIZER_H_
#define KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_FINALIZER_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "base/context.h"
#include "runtime/client/rest_client.h"
#include "runtime/controller/controllerutil/retry.h"

namespace kcr::controller::controllerutil {

// Whether `object` lists `finalizer`.
bool ContainsFinalizer(const api::Object& object, std::string_view finalizer);

// Makes `object` (as last read, e.g. from the cache) list `finalizer` on
// the server, and returns the object as the server has it afterwards —
// `object` itself when it already listed it. `resource` is the object's
// collection (its namespace defaults to the object's). Errors are the
// client's (NotFound when the object is gone; Conflict when every retry
// met another writer).
absl::StatusOr<api::ObjectPtr> AddFinalizer(const Context& ctx,
                                            client::RestClient* client,
                                            const client::Resource& resource,
                                            api::ObjectPtr object,
                                            std::string_view finalizer,
                                            const RetryOptions& retry = {});

// As AddFinalizer, removing `finalizer`. An object being deleted goes away
// when its last finalizer is removed: the result is then the server's last
// answer (with deletionTimestamp set).
absl::StatusOr<api::ObjectPtr> RemoveFinalizer(const Context& ctx,
                                               client::RestClient* client,
                                               const client::Resource& resource,
                                               api::ObjectPtr object,
                                               std::string_view finalizer,
                                               const RetryOptions& retry = {});

}  // namespace kcr::controller::controllerutil

#endif  // KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_FINALIZER_H_
