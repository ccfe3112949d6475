// Kubernetes timestamps: metav1.Time is RFC 3339 in UTC with whole seconds
// ("2026-11-22T10:00:00Z"); metav1.MicroTime (Lease, events.k8s.io) has
// six fractional digits ("2026-11-22T10:00:00.123456Z").
#ifndef KCR_API_TYPES_TIME_H_
#define KCR_API_TYPES_TIME_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kcr {
namespace api {

// metav1.Time: seconds precision, UTC, "Z".
std::string FormatRfc3339(absl::Time t);
// metav1.MicroTime: microseconds, UTC, "Z".
std::string FormatRfc3339Micro(absl::Time t);
// Parses any RFC 3339 time (with or without fractional seconds, any
// offset). InvalidArgument on anything else.
absl::StatusOr<absl::Time> ParseTime(std::string_view text);

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_TIME_H_
