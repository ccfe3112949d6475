// String concatenation over std::string_view. Debian's abseil is built with
// its own absl::string_view (not an alias of std::string_view), so
// absl::StrCat does not accept the std::string_view that api::Object hands
// out; Cat does, along with strings, C strings, chars and integers.
#ifndef KCR_APISERVER_INTERNAL_STR_UTIL_H_
#define KCR_APISERVER_INTERNAL_STR_UTIL_H_

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/string_view.h"
#include "base/string_view.h"

namespace kcr {
namespace apiserver {
namespace str_internal {

inline void Append(std::string* out, std::string_view s) { out->append(s); }
inline void Append(std::string* out, const char* s) { out->append(s); }
inline void Append(std::string* out, absl::string_view s) {
  out->append(s.data(), s.size());
}
inline void Append(std::string* out, const std::string& s) { out->append(s); }
inline void Append(std::string* out, char c) { out->push_back(c); }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T> &&
                                                  !std::is_same_v<T, char> &&
                                                  !std::is_same_v<T, bool>>>
void Append(std::string* out, T v) {
  out->append(std::to_string(v));
}

}  // namespace str_internal

template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (str_internal::Append(&out, args), ...);
  return out;
}

template <typename... Args>
void CatAppend(std::string* out, const Args&... args) {
  (str_internal::Append(out, args), ...);
}

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_INTERNAL_STR_UTIL_H_
