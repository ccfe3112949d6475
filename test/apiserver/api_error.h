// ApiError: a Kubernetes `Status` failure, as kube-apiserver writes it
// (apimachinery's pkg/api/errors), and its round trip through absl::Status.
//
// Every operation of the local API server (Storage, Registry, the HTTP
// handler) reports failures as absl::Status. A failure that must reach the
// client as a particular Kubernetes Status carries the Status JSON as a
// payload (ToStatus); FromStatus recovers it, and maps a plain absl::Status
// without payload to the nearest Kubernetes reason (NotFound -> 404, ...,
// anything else -> 500 InternalError). So in-process callers can use
// KCR_RETURN_IF_ERROR and still test `ApiError::FromStatus(s).reason`.
//
// Messages follow apimachinery exactly, e.g.
//   NotFound:       configmaps "cm1" not found
//                   deployments.apps "x" not found
//   AlreadyExists:  configmaps "cm1" already exists
//   Conflict:       Operation cannot be fulfilled on configmaps "cm1": the
//                   object has been modified; please apply your changes to
//                   the latest version and try again
//   Invalid:        ConfigMap "x" is invalid: metadata.name: Required value
// details.kind is the plural resource for NotFound/AlreadyExists/Conflict/
// Forbidden and the Kind for Invalid, as upstream.
//
// Value type; thread-compatible.
#ifndef KCR_TEST_APISERVER_API_ERROR_H_
#define KCR_TEST_APISERVER_API_ERROR_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include <string_view>
#include "api/schema/field_error.h"

namespace kcr {
namespace apiserver {

// A group and a resource (plural), e.g. {"apps", "deployments"}.
struct GroupResource {
  std::string group;
  std::string resource;
  // "deployments.apps", or "configmaps" for the core group.
  std::string Qualified() const;
};

// A group and a kind, e.g. {"apps", "Deployment"}.
struct GroupKind {
  std::string group;
  std::string kind;
  // "Deployment.apps", or "ConfigMap" for the core group.
  std::string Qualified() const;
};

// One entry of details.causes.
struct StatusCause {
  std::string reason;  // e.g. "FieldValueRequired"
  std::string message;
  std::string field;
};

struct ApiError {
  int code = 500;
  std::string reason;  // "NotFound", ...; empty for an unknown reason
  std::string message;
  // details; omitted from JSON when all are empty.
  std::string name;
  std::string group;
  std::string kind;
  std::string uid;
  std::vector<StatusCause> causes;
  std::optional<int> retry_after_seconds;

  // The Status object as compact JSON (kind, apiVersion, metadata, status,
  // message, reason, details, code).
  std::string ToJson() const;
  // An absl::Status carrying this error (see the file comment).
  absl::Status ToStatus() const;
  // The ApiError carried by `status` (which must not be OK), or the one its
  // code maps to.
  static ApiError FromStatus(const absl::Status& status);

  // Constructors for the reasons kube-apiserver uses.
  static ApiError NotFound(const GroupResource& gr, std::string_view name);
  // 404 for a path that matches no route.
  static ApiError PathNotFound();
  static ApiError AlreadyExists(const GroupResource& gr,
                                std::string_view name);
  // 409 Conflict: `Operation cannot be fulfilled on <gr> "<name>": <why>`.
  static ApiError Conflict(const GroupResource& gr, std::string_view name,
                           std::string_view why);
  // The stale-resourceVersion conflict.
  static ApiError StaleConflict(const GroupResource& gr,
                                std::string_view name);
  // 422 Invalid with one cause per field error.
  static ApiError Invalid(const GroupKind& gk, std::string_view name,
                          const std::vector<api::FieldError>& errors);
  static ApiError BadRequest(std::string_view message);
  static ApiError Unauthorized();
  // `<gr> "<name>" is forbidden: <why>` (or `<gr> is forbidden: <why>`
  // when name is empty).
  static ApiError Forbidden(const GroupResource& gr, std::string_view name,
                            std::string_view why);
  static ApiError MethodNotSupported(const GroupResource& gr,
                                     std::string_view action);
  static ApiError NotAcceptable(std::string_view message);
  static ApiError Expired(std::string_view message);
  static ApiError TooManyRequests(std::string_view message,
                                  int retry_after_seconds);
  static ApiError UnsupportedMediaType(std::string_view message);
  static ApiError RequestEntityTooLarge(std::string_view message);
  static ApiError InternalError(std::string_view message);
  static ApiError ServiceUnavailable(std::string_view message);
};

// apimachinery's cause type for a field error ("FieldValueRequired", ...).
std::string FieldErrorReason(api::FieldError::Type type);
// field.Error.ErrorBody(): the message without the field path.
std::string FieldErrorBody(const api::FieldError& error);

// Convenience predicates on a Status produced by this package.
bool IsNotFoundError(const absl::Status& status);
bool IsAlreadyExistsError(const absl::Status& status);
bool IsConflictError(const absl::Status& status);
bool IsInvalidError(const absl::Status& status);
bool IsExpiredError(const absl::Status& status);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_TEST_APISERVER_API_ERROR_H_
