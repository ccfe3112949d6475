// JSON helpers shared by the schema, the CRD types, the patch algorithms,
// the REST client and the API server: parsing that cannot overflow the
// stack, a nesting-depth bound, and deep equality with JSON's notion of
// equal numbers.
//
// RapidJSON's recursive parser, Value::Accept (serialisation), CopyFrom and
// operator== all recurse once per nesting level, so a hostile 100000-deep
// "[[[[" would overflow the stack. Every JSON reader of kcr parses with the
// iterative parser and refuses values nested deeper than kMaxJsonDepth
// (api/json_limits.h, the limit every JSON reader shares) before calling
// any recursive RapidJSON routine.
#ifndef KCR_API_JSON_JSON_UTIL_H_
#define KCR_API_JSON_JSON_UTIL_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/json_limits.h"
#include "rapidjson/document.h"

namespace kcr {
namespace json {

// Nesting depth of `value`: 0 for a scalar, 1 for [] or {}, 2 for [[]], ...
// Iterative: safe on any input. Stops counting once `limit` is exceeded and
// then returns limit + 1.
int JsonDepth(const rapidjson::Value& value, int limit = api::kMaxJsonDepth);

// Parses one JSON document (RFC 8259; UTF-8 validated; trailing
// non-whitespace is an error) into `*doc` with the iterative parser, which
// never recurses, then checks the depth before anything recursive can see
// the tree. Numbers are read to the nearest double, as Object::Parse and
// Go read them. This is how every JSON from the network is read (request
// bodies on the local API server; list, error and watch bodies in the REST
// client): never RapidJSON's recursive Parse. `max_depth` is above
// kMaxJsonDepth only for envelopes around objects (a list's items are two
// levels down, a watch event's object one). InvalidArgument names the byte
// offset and RapidJSON's reason, or says the document nests deeper than
// `max_depth`.
absl::Status ParseJson(std::string_view text, rapidjson::Document* doc,
                       int max_depth = api::kMaxJsonDepth);

// Go's encoding/json (and so kube-apiserver) does not refuse a string that
// is not valid UTF-8: it reads every byte outside a valid sequence as
// U+FFFD. When `text` holds such bytes, sets `*out` to `text` with each of
// them replaced by U+FFFD (EF BF BD) and returns true; otherwise returns
// false and leaves `*out` alone, so valid text is never copied. Valid
// means Go's utf8.DecodeRune: shortest form, no surrogates, at most
// U+10FFFF.
bool ReplaceInvalidUtf8(std::string_view text, std::string* out);

// The length of the longest prefix of `text` that is valid UTF-8 (as
// above): text.size() when all of it is.
size_t ValidUtf8Prefix(std::string_view text);

// Compact JSON text of `value`. InvalidArgument when it nests deeper than
// kMaxJsonDepth or holds a number JSON cannot represent (NaN, infinity).
absl::StatusOr<std::string> JsonToString(const rapidjson::Value& value);

// The string member `name` of `object`, or "" when `object` is not an
// object or has no member `name` holding a string.
std::string StringMember(const rapidjson::Value& object, std::string_view name);

// Deep equality as JSON values: objects compare as unordered maps, arrays
// element by element, numbers by value (1 == 1.0; integers exactly).
// Iterative: safe on any input.
bool JsonDeepEqual(const rapidjson::Value& a, const rapidjson::Value& b);

// The JSON type of `v` as error messages name it: "null", "boolean",
// "object", "array", "string" or "number".
const char* JsonTypeName(const rapidjson::Value& v);

}  // namespace json
}  // namespace kcr

#endif  // KCR_API_JSON_JSON_UTIL_H_
