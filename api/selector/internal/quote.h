// The quoted form of a selector token in error messages.
#ifndef KCR_API_SELECTOR_INTERNAL_QUOTE_H_
#define KCR_API_SELECTOR_INTERNAL_QUOTE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace selector_internal {

// Quoted, escaped and shortened text of a token: the input may be
// arbitrary bytes, and only its first 64 are shown.
inline std::string Quote(std::string_view text) {
  constexpr size_t kMaxShown = 64;
  if (text.size() > kMaxShown) {
    return absl::StrCat(
        "\"", absl::CHexEscape(ToAbsl(text.substr(0, kMaxShown))), "...\"");
  }
  return absl::StrCat("\"", absl::CHexEscape(ToAbsl(text)), "\"");
}

}  // namespace selector_internal
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_SELECTOR_INTERNAL_QUOTE_H_
