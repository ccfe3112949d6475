// API errors: how a failed request to a Kubernetes API server becomes an
// absl::Status, and the predicates client-go's k8s.io/apimachinery/pkg/api/
// errors offers on it (IsNotFound, IsConflict, ...).
//
// The server answers a failed request with a `Status` object
//   {"kind":"Status","status":"Failure","reason":"NotFound","code":404,
//    "message":"configmaps \"x\" not found","details":{...}}
// ToStatus keeps all of it: the absl::Status carries the server's message,
// an absl code chosen from the HTTP code and reason (table below), and a
// payload with the reason, HTTP code and details that GetApiStatus reads
// back. A response whose body is not a Status (a proxy's HTML page, an
// empty body) gets the reason client-go would synthesize from the HTTP
// code, and the body's start as the message.
//
//   reason (HTTP code)                     absl code
//   BadRequest (400)                       kInvalidArgument
//   Unauthorized (401)                     kUnauthenticated
//   Forbidden (403)                        kPermissionDenied
//   NotFound (404)                         kNotFound
//   MethodNotAllowed (405)                 kUnimplemented
//   NotAcceptable (406), Unsupported-      kInvalidArgument
//     MediaType (415), RequestEntity-
//     TooLarge (413)
//   AlreadyExists (409)                    kAlreadyExists
//   Conflict (409)                         kAborted
//   Expired, Gone (410)                    kFailedPrecondition
//   Invalid (422)                          kInvalidArgument
//   TooManyRequests (429)                  kResourceExhausted
//   ServerTimeout (500), Timeout (504)     kDeadlineExceeded
//   InternalError (500), other 5xx         kInternal
//   ServiceUnavailable (503)               kUnavailable
//   anything else                          kUnknown
//
// Transport failures (connection refused, TLS verification, a cut stream)
// never reach ToStatus: the client reports them as kUnavailable with the
// cause, and carry no API payload (ReasonForError is empty).
#ifndef KCR_RUNTIME_CLIENT_API_ERRORS_H_
#define KCR_RUNTIME_CLIENT_API_ERRORS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "rapidjson/document.h"

namespace kcr::client {

// One entry of Status.details.causes.
struct StatusCause {
  std::string reason;  // e.g. "FieldValueRequired", "FieldManagerConflict"
  std::string message;
  std::string field;  // e.g. "spec.replicas", ".data.a"
};

// The fields of a Kubernetes Status object that describe a failure.
struct ApiStatus {
  int32_t code = 0;     // HTTP status code
  std::string reason;   // "NotFound", "Conflict", ...; may be empty
  std::string message;
  // details: for NotFound/AlreadyExists/Conflict `kind` is the resource
  // plural; for Invalid it is the Kind.
  std::string name;
  std::string group;
  std::string kind;
  std::string uid;
  int32_t retry_after_seconds = 0;  // 0 when absent
  std::vector<StatusCause> causes;
};

// The status for an HTTP response with a non-2xx code. `body` is the
// response body (a Status object, or anything else). `retry_after` is the
// value of the Retry-After header ("" when absent); it fills
// retry_after_seconds when the body does not.
absl::Status ToStatus(int http_code, std::string_view body,
                      std::string_view retry_after = "");

// The status for a Status object met elsewhere (the object of a watch ERROR
// event). A Status with "status":"Success" or code 2xx gives OkStatus().
absl::Status StatusFromObject(const rapidjson::Value& status_object);

// Builds a status from its parts (used by tests and fakes to produce the
// errors a server would).
absl::Status MakeApiError(const ApiStatus& api_status);

// The API fields carried by `status`, or nullopt for statuses that did not
// come from an API server response (transport errors, local validation).
std::optional<ApiStatus> GetApiStatus(const absl::Status& status);

// The server's reason ("" when `status` carries none).
std::string ReasonForError(const absl::Status& status);

// Predicates, as client-go's (k8s.io/apimachinery/pkg/api/errors). Call
// them qualified (client::IsNotFound(s)): absl has an IsNotFound and an
// IsAlreadyExists of its own for absl codes, which argument-dependent lookup
// would also find. Each is true if the server's reason matches or, when
// the server gave no reason, the HTTP code does.
bool IsNotFound(const absl::Status& status);          // NotFound / 404
bool IsAlreadyExists(const absl::Status& status);     // AlreadyExists
bool IsConflict(const absl::Status& status);          // Conflict
bool IsInvalid(const absl::Status& status);           // Invalid / 422
bool IsBadRequest(const absl::Status& status);        // BadRequest / 400
bool IsUnauthorized(const absl::Status& status);      // Unauthorized / 401
bool IsForbidden(const absl::Status& status);         // Forbidden / 403
bool IsMethodNotSupported(const absl::Status& status);  // 405
bool IsGone(const absl::Status& status);              // Gone
// Expired or Gone (both 410): the resourceVersion or continue token is too
// old. What a reflector checks before re-listing.
bool IsResourceExpired(const absl::Status& status);
bool IsTooManyRequests(const absl::Status& status);   // TooManyRequests / 429
bool IsServerTimeout(const absl::Status& status);     // ServerTimeout
bool IsTimeout(const absl::Status& status);           // Timeout / 504
bool IsInternalError(const absl::Status& status);     // InternalError / 500
bool IsServiceUnavailable(const absl::Status& status);  // 503

// Seconds the server asked the client to wait (details.retryAfterSeconds
// or Retry-After) for 429 and 5xx errors; nullopt otherwise.
std::optional<int> SuggestsClientDelay(const absl::Status& status);

// The reason client-go gives a response of `http_code` without a Status
// body ("NotFound" for 404, "InternalError" for 500, ...; "" if none).
std::string_view ReasonForHttpCode(int http_code);

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_API_ERRORS_H_
