// Small readers over an object's JSON that the registry, its strategies and
// the handler share: a member by key, a string at a JSON pointer, a list of
// strings, a string quoted as kube-apiserver quotes values in messages, and
// a field error.
#ifndef KCR_APISERVER_INTERNAL_OBJECT_FIELDS_H_
#define KCR_APISERVER_INTERNAL_OBJECT_FIELDS_H_

#include <string>
#include <string_view>
#include <vector>

#include "api/errors/errors.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// Member `key` of `object`; null when absent or when `object` is not an
// object.
const rapidjson::Value* Member(const rapidjson::Value& object, const char* key);

// The string at `pointer`; empty when absent or not a string.
std::string StringAt(const api::ObjectBuilder& object, const char* pointer);

// The strings of the array at `pointer` ("/metadata/finalizers"); other
// elements are skipped.
std::vector<std::string> StringsAt(const api::ObjectBuilder& object,
                                   const char* pointer);

// `s` as a JSON string literal, quotes included (Go's %q for the texts
// kube-apiserver quotes).
std::string Quote(std::string_view s);

api::FieldError FieldErr(api::FieldError::Type type, std::string field,
                         std::string value, std::string detail);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_INTERNAL_OBJECT_FIELDS_H_
