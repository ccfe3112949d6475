// WithRetry: when the REST client sends a request again, as client-go's
// rest.WithRetry. One object per call; it counts that call's retries.
//
//   - 429, and 5xx answers that carry Retry-After: retried after the
//     Retry-After seconds (default_retry_after for a 429 without one), up
//     to max_retry_after_retries times;
//   - other 5xx answers and transport errors: retried, for idempotent
//     requests only, with exponential backoff (initial_backoff doubling up
//     to max_backoff), up to max_backoff_retries times; never a transport
//     error that retrying cannot fix (a failed TLS verification).
// Not thread-safe: one call, one thread.
#ifndef KCR_RUNTIME_CLIENT_WITH_RETRY_H_
#define KCR_RUNTIME_CLIENT_WITH_RETRY_H_

#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace kcr::client {

// The defaults are client-go's (ClientOptions carries them).
struct RetryOptions {
  int max_retry_after_retries = 10;
  int max_backoff_retries = 4;
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(5);
  absl::Duration default_retry_after = absl::Seconds(1);
};

class WithRetry {
 public:
  explicit WithRetry(const RetryOptions& options)
      : options_(options), backoff_(options.initial_backoff) {}

  // After an attempt that got no answer (`error`): how long to wait before
  // the next attempt, or nullopt when the error is the call's result.
  // `permanent`: retrying cannot fix it.
  std::optional<absl::Duration> AfterTransportError(const absl::Status& error,
                                                    bool idempotent,
                                                    bool permanent);

  // After an answer with HTTP status `code` and Retry-After header value
  // `retry_after` ("" when absent): how long to wait before the next
  // attempt, or nullopt when the answer is the call's result.
  std::optional<absl::Duration> AfterResponse(int code,
                                              std::string_view retry_after,
                                              bool idempotent);

 private:
  // The next backoff wait, doubling the one after it.
  absl::Duration NextBackoff();

  const RetryOptions options_;
  int retry_after_retries_ = 0;
  int backoff_retries_ = 0;
  absl::Duration backoff_;
};

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_WITH_RETRY_H_
