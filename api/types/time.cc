#include "api/types/time.h"

#include "absl/strings/str_cat.h"
#include "base/string_view.h"

namespace kcr {
namespace api {

std::string FormatRfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

std::string FormatRfc3339Micro(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

absl::StatusOr<absl::Time> ParseTime(std::string_view text) {
  absl::Time t;
  std::string error;
  const absl::string_view input = ToAbsl(text);
  if (!absl::ParseTime(absl::RFC3339_full, input, &t, &error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid RFC 3339 time \"", input, "\": ", error));
  }
  return t;
}

}  // namespace api
}  // namespace kcr
