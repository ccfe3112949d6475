#include "runtime/client/with_retry.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "base/string_view.h"
#include "glog/logging.h"

namespace kcr::client {
namespace {

// The seconds of a Retry-After header, or -1 when absent or not a
// non-negative integer.
int RetryAfterSeconds(std::string_view retry_after) {
  int s = 0;
  if (!retry_after.empty() &&
      absl::SimpleAtoi(absl::StripAsciiWhitespace(ToAbsl(retry_after)), &s) &&
      s >= 0) {
    return s;
  }
  return -1;
}

}  // namespace

absl::Duration WithRetry::NextBackoff() {
  const absl::Duration wait = backoff_;
  backoff_ = std::min(backoff_ * 2, options_.max_backoff);
  return wait;
}

std::optional<absl::Duration> WithRetry::AfterTransportError(
    const absl::Status& error, bool idempotent, bool permanent) {
  if (!idempotent || permanent ||
      backoff_retries_ >= options_.max_backoff_retries) {
    return std::nullopt;
  }
  ++backoff_retries_;
  VLOG(2) << "retrying after transport error attempt=" << backoff_retries_
          << " " << error;
  return NextBackoff();
}

std::optional<absl::Duration> WithRetry::AfterResponse(
    int code, std::string_view retry_after, bool idempotent) {
  const int retry_after_seconds = RetryAfterSeconds(retry_after);
  if ((code == 429 || (code >= 500 && retry_after_seconds >= 0)) &&
      retry_after_retries_ < options_.max_retry_after_retries) {
    ++retry_after_retries_;
    const absl::Duration delay = retry_after_seconds >= 0
                                     ? absl::Seconds(retry_after_seconds)
                                     : options_.default_retry_after;
    VLOG(2) << "got " << code << ", retrying after " << delay
            << " attempt=" << retry_after_retries_;
    return delay;
  }
  if (code >= 500 && idempotent &&
      backoff_retries_ < options_.max_backoff_retries) {
    ++backoff_retries_;
    VLOG(2) << "got " << code << ", retrying attempt=" << backoff_retries_;
    return NextBackoff();
  }
  return std::nullopt;
}

}  // namespace kcr::client
