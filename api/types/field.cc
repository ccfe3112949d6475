#include "api/types/field.h"

#include <limits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace field {

const rapidjson::Value* Member(const rapidjson::Value* object,
                               std::string_view key) {
  if (object == nullptr || !object->IsObject()) return nullptr;
  rapidjson::Value name(rapidjson::StringRef(
      key.data(), static_cast<rapidjson::SizeType>(key.size())));
  auto it = object->FindMember(name);
  return it == object->MemberEnd() ? nullptr : &it->value;
}

std::string_view String(const rapidjson::Value* object, std::string_view key) {
  const rapidjson::Value* v = Member(object, key);
  return v != nullptr && v->IsString() ? View(*v) : std::string_view();
}

std::optional<int64_t> Int64(const rapidjson::Value* object,
                             std::string_view key) {
  const rapidjson::Value* v = Member(object, key);
  if (v == nullptr || !v->IsInt64()) return std::nullopt;
  return v->GetInt64();
}

std::optional<int32_t> Int32(const rapidjson::Value* object,
                             std::string_view key) {
  const rapidjson::Value* v = Member(object, key);
  if (v == nullptr || !v->IsInt()) return std::nullopt;
  return v->GetInt();
}

bool Bool(const rapidjson::Value* object, std::string_view key, bool absent) {
  const rapidjson::Value* v = Member(object, key);
  return v != nullptr && v->IsBool() ? v->GetBool() : absent;
}

const rapidjson::Value* Object(const rapidjson::Value* object,
                               std::string_view key) {
  const rapidjson::Value* v = Member(object, key);
  return v != nullptr && v->IsObject() ? v : nullptr;
}

const rapidjson::Value* Array(const rapidjson::Value* object,
                              std::string_view key) {
  const rapidjson::Value* v = Member(object, key);
  return v != nullptr && v->IsArray() ? v : nullptr;
}

size_t IndexByName(const rapidjson::Value* list, std::string_view name) {
  if (list == nullptr || !list->IsArray()) return 0;
  size_t i = 0;
  for (; i < list->Size(); ++i) {
    if (String(&(*list)[static_cast<rapidjson::SizeType>(i)], "name") == name) {
      break;
    }
  }
  return i;
}

absl::Status CheckStringMap(const rapidjson::Value* map,
                            std::string_view path) {
  const absl::string_view p = ToAbsl(path);
  if (map == nullptr || map->IsNull()) return absl::OkStatus();
  if (!map->IsObject()) {
    return absl::InvalidArgumentError(absl::StrCat(p, " is not an object"));
  }
  for (const auto& m : map->GetObject()) {
    if (!m.value.IsString()) {
      return absl::InvalidArgumentError(
          absl::StrCat(p, ".",
                       absl::CHexEscape(absl::string_view(
                           m.name.GetString(), m.name.GetStringLength())),
                       " is not a string"));
    }
  }
  return absl::OkStatus();
}

}  // namespace field
}  // namespace api
}  // namespace kcr
