// Type-safe reads of JSON fields for the typed views: a field that is
// absent or has the wrong type reads as absent, never as a crash.
#ifndef KCR_API_TYPES_FIELD_H_
#define KCR_API_TYPES_FIELD_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace field {

// Member `key` of `object`; null when `object` is null or not an object,
// or the member is absent.
const rapidjson::Value* Member(const rapidjson::Value* object,
                               std::string_view key);
// The string member `key`; "" when absent or not a string.
std::string_view String(const rapidjson::Value* object, std::string_view key);
// The integer member `key`; nullopt when absent, not an integer, or (for
// Int32) out of int32 range.
std::optional<int64_t> Int64(const rapidjson::Value* object,
                             std::string_view key);
std::optional<int32_t> Int32(const rapidjson::Value* object,
                             std::string_view key);
// The boolean member `key`, or `absent` when absent or not a boolean.
bool Bool(const rapidjson::Value* object, std::string_view key,
          bool absent = false);
// The object / array member `key`; null when absent or of another type.
const rapidjson::Value* Object(const rapidjson::Value* object,
                               std::string_view key);
const rapidjson::Value* Array(const rapidjson::Value* object,
                              std::string_view key);

// Index of the first element of the array `list` whose string member
// "name" is `name`; list->Size() when none is, and 0 when `list` is null or
// not an array.
size_t IndexByName(const rapidjson::Value* list, std::string_view name);

// OK when `map` is null, JSON null, or an object whose values are all
// strings; otherwise InvalidArgument naming `path` and the bad key.
absl::Status CheckStringMap(const rapidjson::Value* map, std::string_view path);

// `s` as std::string_view.
inline std::string_view View(const rapidjson::Value& s) {
  return std::string_view(s.GetString(), s.GetStringLength());
}

// A string value holding a copy of `s`, allocated from `a`.
inline rapidjson::Value Str(std::string_view s,
                            rapidjson::MemoryPoolAllocator<>& a) {
  return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()),
                          a);
}

}  // namespace field
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_FIELD_H_
