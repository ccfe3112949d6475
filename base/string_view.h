// Conversions between std::string_view and absl::string_view.
//
// Debian's abseil 20220623 is built with its own absl::string_view, a type
// distinct from std::string_view, and neither converts to the other. kcr's
// public headers speak std::string_view; a .cc file that hands such a view
// to an abseil function (absl::StrSplit, absl::SimpleAtoi, absl::StrCat...)
// or takes one back converts it here. Both conversions copy a pointer and a
// length: the result views the same bytes and lives no longer than they do.
// Use them inside .cc files, never in a public header.
#ifndef KCR_BASE_STRING_VIEW_H_
#define KCR_BASE_STRING_VIEW_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace kcr {

inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

inline std::string_view ToStd(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

}  // namespace kcr

#endif  // KCR_BASE_STRING_VIEW_H_
