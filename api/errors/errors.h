// API errors: a failed request's Kubernetes `Status` object (metav1.Status)
// as an absl::Status, and back, on both sides of the wire — the local API
// server builds its error bodies here, the REST client reads them back here
// — with the constructors and predicates of apimachinery's pkg/api/errors.
//
// A failure Status looks like
//   {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
//    "message":"configmaps \"x\" not found","reason":"NotFound",
//    "details":{"name":"x","kind":"configmaps"},"code":404}
// StatusError holds its fields. StatusError::ToStatus() gives an
// absl::Status whose message is the Status message, whose absl code comes
// from the reason and HTTP code (the one table below), and which carries the
// Status object itself as a payload: GetStatusError() reads it back, and
// every predicate (IsNotFound, IsConflict, ...) looks only at that payload,
// as apimachinery's look only at an APIStatus. A status without the payload
// (a transport error, local validation, a cancelled context) is never an
// API error: IsNotFound(absl::NotFoundError("x")) is false.
//
// The one mapping of reasons and HTTP codes to absl codes. A known reason
// decides; an unknown or empty reason falls back to the HTTP code; any
// other 5xx is kInternal and anything else kUnknown.
//
//   reason                 HTTP  absl code           why that code
//   BadRequest             400   kInvalidArgument
//   Unauthorized           401   kUnauthenticated
//   Forbidden              403   kPermissionDenied
//   NotFound               404   kNotFound
//   MethodNotAllowed       405   kUnimplemented      the server does not
//   NotAcceptable          406   kUnimplemented        support this verb or
//   UnsupportedMediaType   415   kUnimplemented        media type at all
//   AlreadyExists          409   kAlreadyExists
//   Conflict               409   kAborted            retry at a higher level
//                                                      (re-read, re-apply)
//   Expired, Gone          410   kOutOfRange         the resourceVersion or
//                                                      continue token is past
//                                                      the history the server
//                                                      keeps; a newer one works
//   RequestEntityTooLarge  413   kInvalidArgument    the same request never
//                                                      succeeds; not a quota
//   Invalid                422   kInvalidArgument
//   TooManyRequests        429   kResourceExhausted
//   InternalError          500   kInternal
//   ServerTimeout          500   kDeadlineExceeded
//   ServiceUnavailable     503   kUnavailable
//   Timeout                504   kDeadlineExceeded
//
// Going the other way, StatusError::FromStatus() gives a status without
// payload the reason of its absl code: kInvalidArgument BadRequest,
// kUnauthenticated, kPermissionDenied, kNotFound, kAlreadyExists,
// kAborted Conflict, kOutOfRange Expired, kUnavailable, kDeadlineExceeded
// Timeout; every other code (shared by several reasons, or none) becomes
// 500 InternalError, as kube-apiserver answers any error it does not know.
//
// Value types and pure functions: thread-compatible.
#ifndef KCR_API_ERRORS_ERRORS_H_
#define KCR_API_ERRORS_ERRORS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "api/meta/group_version.h"
#include "api/schema/field_error.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {

// One entry of details.causes (metav1.StatusCause).
struct StatusCause {
  std::string reason;  // the cause type, e.g. "FieldValueRequired"
  std::string message;
  std::string field;  // e.g. "spec.replicas"

  friend bool operator==(const StatusCause& a, const StatusCause& b) {
    return a.reason == b.reason && a.message == b.message && a.field == b.field;
  }
};

// A failure Status, as apimachinery's errors.StatusError.
struct StatusError {
  int32_t code = 500;  // HTTP status code
  std::string reason;  // "NotFound", ...; empty when the server named none
  std::string message;
  // details: for NotFound, AlreadyExists, Conflict and Forbidden `kind` is
  // the resource (plural), for Invalid the Kind. All empty: no details.
  std::string name;
  std::string group;
  std::string kind;
  std::string uid;
  std::vector<StatusCause> causes;
  std::optional<int32_t> retry_after_seconds;
  // Whether the Status has a details member even when every field above is
  // empty: apimachinery's constructors that set Details (NotFound,
  // AlreadyExists, Conflict, Invalid, Forbidden, MethodNotSupported,
  // InternalError, the generic 404 for an unknown path, ...) write
  // "details":{} then, and clients read it unguarded (kubectl debug reads
  // details.name of every NotFound).
  bool has_details = false;
  // metadata.continue: the fresh token of a 410 for an expired continue
  // token, with which the client can go on reading (inconsistently).
  std::string continue_token;

  // The Status object as compact JSON, member for member as kube-apiserver
  // writes it (kind, apiVersion, metadata, status, message, reason, details,
  // code; empty members left out).
  std::string ToJson() const;

  // An absl::Status carrying this error (see the file comment); the message
  // is `message`, or `reason` when the message is empty.
  absl::Status ToStatus() const;

  // The error `status` (not OK) carries, or, for a status without one, the
  // error its absl code maps to (file comment). What a server answers.
  static StatusError FromStatus(const absl::Status& status);

  // The error a Status object describes (a watch ERROR event's object, a
  // response body). nullopt if `object` is not a JSON object.
  static std::optional<StatusError> FromObject(const rapidjson::Value& object);

  // Constructors with kube-apiserver's reasons and messages
  // (apimachinery's NewNotFound, NewAlreadyExists, ...).
  //   configmaps "x" not found; deployments.apps "x" not found
  static StatusError NotFound(const GroupResource& resource,
                              std::string_view name);
  // 404 for a path that matches no route.
  static StatusError PathNotFound();
  //   configmaps "x" already exists
  static StatusError AlreadyExists(const GroupResource& resource,
                                   std::string_view name);
  //   Operation cannot be fulfilled on configmaps "x": <why>
  static StatusError Conflict(const GroupResource& resource,
                              std::string_view name, std::string_view why);
  // The conflict of a stale resourceVersion: "... the object has been
  // modified; please apply your changes to the latest version and try again".
  static StatusError StaleConflict(const GroupResource& resource,
                                   std::string_view name);
  // 422, one cause per field error:
  //   ConfigMap "x" is invalid: metadata.name: Required value
  static StatusError Invalid(const GroupKind& kind, std::string_view name,
                             const std::vector<FieldError>& errors);
  static StatusError BadRequest(std::string_view message);
  static StatusError Unauthorized();
  //   configmaps "x" is forbidden: <why>  (or configmaps is forbidden: <why>
  //   without a name)
  static StatusError Forbidden(const GroupResource& resource,
                               std::string_view name, std::string_view why);
  //   <action> is not supported on resources of kind "<resource>"
  static StatusError MethodNotSupported(const GroupResource& resource,
                                        std::string_view action);
  static StatusError NotAcceptable(std::string_view message);
  static StatusError Expired(std::string_view message);
  static StatusError TooManyRequests(std::string_view message,
                                     int retry_after_seconds);
  static StatusError UnsupportedMediaType(std::string_view message);
  static StatusError RequestEntityTooLarge(std::string_view message);
  //   Internal error occurred: <message>  (and <message> as a cause)
  static StatusError InternalError(std::string_view message);
  static StatusError ServiceUnavailable(std::string_view message);
};

// The error `status` carries, or nullopt for a status that did not come
// from an API server's Status (see the file comment).
std::optional<StatusError> GetStatusError(const absl::Status& status);

// The status for a Status object met on the wire (a watch ERROR event):
// OK for "status":"Success" or a 2xx code; otherwise its error, with code
// 500 when it names none and its reason as message when it has none.
absl::Status StatusFromObject(const rapidjson::Value& status_object);

// The absl code of an error with `http_code` and `reason` (the table in the
// file comment).
absl::StatusCode AbslCodeFor(int http_code, std::string_view reason);

// The reason of an answer with `http_code` that carried no Status object,
// as client-go's NewGenericServerResponse names it: "NotFound" for 404,
// "Conflict" for 409, "Expired" for 410, "InternalError" for any 5xx
// without a reason of its own, ... "" for codes without one.
std::string_view ReasonForHttpCode(int http_code);

// The server's reason ("" when `status` carries none).
std::string ReasonForError(const absl::Status& status);

// Predicates, as apimachinery's. Call them qualified (api::IsNotFound(s)):
// absl has an IsNotFound and an IsAlreadyExists of its own, for absl codes,
// which argument-dependent lookup would also find. Each is true when the
// server's reason matches or, when the reason is not one apimachinery knows,
// when the HTTP code does; IsTooManyRequests and IsRequestEntityTooLarge
// look at the code whatever the reason, and IsAlreadyExists,
// IsResourceExpired and IsServerTimeout only at the reason, as upstream.
bool IsNotFound(const absl::Status& status);  // 404
bool IsAlreadyExists(const absl::Status& status);
bool IsConflict(const absl::Status& status);            // 409
bool IsInvalid(const absl::Status& status);             // 422
bool IsBadRequest(const absl::Status& status);          // 400
bool IsUnauthorized(const absl::Status& status);        // 401
bool IsForbidden(const absl::Status& status);           // 403
bool IsMethodNotSupported(const absl::Status& status);  // 405
bool IsNotAcceptable(const absl::Status& status);       // 406
bool IsGone(const absl::Status& status);                // 410
// Expired: a resourceVersion or continue token too old for the server's
// history. A reflector checks IsResourceExpired || IsGone before it
// re-lists (older servers answer Gone).
bool IsResourceExpired(const absl::Status& status);
bool IsRequestEntityTooLarge(const absl::Status& status);  // 413
bool IsUnsupportedMediaType(const absl::Status& status);   // 415
bool IsTooManyRequests(const absl::Status& status);        // 429
bool IsInternalError(const absl::Status& status);          // 500
bool IsServerTimeout(const absl::Status& status);
bool IsServiceUnavailable(const absl::Status& status);  // 503
bool IsTimeout(const absl::Status& status);             // 504

// The seconds the server asked the client to wait before retrying
// (details.retryAfterSeconds), as apimachinery's SuggestsClientDelay: set
// for a ServerTimeout (even 0) and for any error with a positive value.
std::optional<int> SuggestsClientDelay(const absl::Status& status);

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_ERRORS_ERRORS_H_
