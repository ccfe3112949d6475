// Percent-decoding of URL paths and query strings (RFC 3986), as Go's
// net/url reads a request target on the server side.
#ifndef KCR_API_META_PERCENT_DECODE_H_
#define KCR_API_META_PERCENT_DECODE_H_

#include <string>
#include <string_view>

namespace kcr {
namespace api {

// `s` with every "%XY" (two hex digits, either case) replaced by the byte
// it names, and with '+' read as a space when `plus_is_space` (query keys
// and values, application/x-www-form-urlencoded). A '%' not followed by two
// hex digits is kept as it is: never an error.
std::string PercentDecode(std::string_view s, bool plus_is_space);

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_META_PERCENT_DECODE_H_
