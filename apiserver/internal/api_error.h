// The local API server's errors: api::StatusError (api/errors/errors.h),
// the same model the REST client reads them back with, under the name the
// server's code uses.
//
// Every operation of the server (Storage, Registry, the HTTP handler)
// reports failures as absl::Status. One that must reach the client as a
// particular Kubernetes Status carries it (ApiError::NotFound(...)
// .ToStatus()); the handler answers ApiError::FromStatus(status), which is
// that Status, or for a plain absl::Status the reason of its code (and 500
// InternalError for the rest). So in-process callers can use
// KCR_RETURN_IF_ERROR and still test api::IsNotFound(s).
#ifndef KCR_APISERVER_INTERNAL_API_ERROR_H_
#define KCR_APISERVER_INTERNAL_API_ERROR_H_

#include "api/errors/errors.h"
#include "api/meta/group_version.h"

namespace kcr {
namespace apiserver {

using ApiError = api::StatusError;
using api::GroupKind;
using api::GroupResource;
using api::StatusCause;

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_INTERNAL_API_ERROR_H_
