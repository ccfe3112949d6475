// RFC 6901 JSON pointers ("/metadata/labels/app", "/spec/containers/0")
// over RapidJSON values: splitting a pointer into unescaped reference
// tokens, array index tokens, member lookup by key, and resolving a pointer
// against a tree. Stateless functions; safe from any thread.
#ifndef KCR_API_JSON_POINTER_H_
#define KCR_API_JSON_POINTER_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace json_pointer {

using rapidjson::Value;

// RFC 6901: splits off the next reference token of `*rest` (which starts
// with '/') and unescapes it into `*token`. False when malformed.
bool NextToken(std::string_view* rest, std::string* buffer,
               std::string_view* token);

// RFC 6901: escapes `key` as one reference token ('~' -> "~0",
// '/' -> "~1").
std::string EscapeToken(std::string_view key);

// An array index token: digits without a leading zero.
bool ParseIndex(std::string_view token, size_t* index);

Value::ConstMemberIterator FindKey(const Value& object, std::string_view key);

Value::MemberIterator FindKey(Value& object, std::string_view key);

const Value* FindPointer(const Value& root, std::string_view pointer);

}  // namespace json_pointer
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_JSON_POINTER_H_
