// Small helpers over RapidJSON values shared by Object and ObjectBuilder:
// string views of values, error statuses, writing JSON text, member edits,
// and the repair of lone UTF-16 surrogates RapidJSON 1.1.0 lets through.
#ifndef KCR_API_INTERNAL_JSON_VALUE_H_
#define KCR_API_INTERNAL_JSON_VALUE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace object_internal {

using rapidjson::Value;

std::string_view StringOf(const Value& v);

std::string Quote(std::string_view key);

absl::Status Invalid(std::string_view what);

// True when `json` may hold a \uD800-\uDFFF escape (a UTF-16 surrogate).
bool MayHoldSurrogateEscape(std::string_view json);

// RapidJSON 1.1.0 decodes a lone low surrogate escape ("\uDC00") into the
// three bytes ED B0 80, which are not UTF-8, so the object could not be
// written out and read back. Replace each with U+FFFD (EF BF BD, also three
// bytes), as Go's encoding/json does. Only surrogates can produce ED A0..BF
// here: other bytes were validated or are ASCII.
void ReplaceLoneSurrogates(Value& root);

std::string WriteJson(const Value& v);

Value MakeString(std::string_view s, rapidjson::MemoryPoolAllocator<>& a);

// Sets object member `key` (replacing in place to keep the order).
void SetMember(Value& object, std::string_view key, Value&& value,
               rapidjson::MemoryPoolAllocator<>& a);

void EraseMember(Value& object, std::string_view key);

const Value* MetadataOf(const Value& root);

}  // namespace object_internal
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_INTERNAL_JSON_VALUE_H_
