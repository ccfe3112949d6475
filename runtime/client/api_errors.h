// API errors on the client: how a failed HTTP answer becomes an
// absl::Status. The error model itself (StatusError, the code table, the
// predicates api::IsNotFound, api::IsConflict, ...) is api/errors/errors.h,
// shared with the local API server.
//
// Transport failures (connection refused, TLS verification, a cut stream)
// never come here: the client reports them as kUnavailable with the cause,
// without an API error (api::GetStatusError is empty), and a cancelled
// context as kCancelled or kDeadlineExceeded.
#ifndef KCR_RUNTIME_CLIENT_API_ERRORS_H_
#define KCR_RUNTIME_CLIENT_API_ERRORS_H_

#include <string_view>

#include "absl/status/status.h"

namespace kcr::client {

// The status for an HTTP answer with a non-2xx code. `body` is the answer's
// body: a Status object keeps everything it says (a code of 0 becomes
// `http_code`); anything else (a proxy's HTML page, an empty body) gets the
// reason client-go gives `http_code` (api::ReasonForHttpCode) and the
// body's start as the message. `retry_after` is the Retry-After header
// ("" when absent); it fills retryAfterSeconds when the body has none.
absl::Status StatusFromResponse(int http_code, std::string_view body,
                                std::string_view retry_after = "");

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_API_ERRORS_H_
