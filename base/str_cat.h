// Cat and CatAppend: string concatenation that takes std::string_view.
//
// Debian's abseil 20220623 is built with its own absl::string_view, a type
// distinct from std::string_view, so absl::StrCat does not accept the
// std::string_view that api::Object and kcr's other public headers hand
// out. Cat does, along with absl::string_view, std::string, C strings,
// chars and integers (written in decimal, as std::to_string writes them).
// bool is not an integer here: it converts to a char, as it would for
// std::string::push_back.
//
//   std::string key = kcr::Cat(obj.namespace_(), "/", obj.name());
//   kcr::CatAppend(&path, "/namespaces/", ns, "/", resource);
//
// No floating point: say how it should look with absl::StrFormat.
#ifndef KCR_BASE_STR_CAT_H_
#define KCR_BASE_STR_CAT_H_

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/string_view.h"

namespace kcr {
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

// The arguments, in order, in one new string.
template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (str_internal::Append(&out, args), ...);
  return out;
}

// Appends the arguments, in order, to `*out`. An argument must not view
// `*out` itself (appending may reallocate it).
template <typename... Args>
void CatAppend(std::string* out, const Args&... args) {
  static_cast<void>(out);  // unused when there is nothing to append
  (str_internal::Append(out, args), ...);
}

}  // namespace kcr

#endif  // KCR_BASE_STR_CAT_H_
