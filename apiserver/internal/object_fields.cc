#include "apiserver/internal/object_fields.h"

#include <utility>

#include "api/object_builder.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {

const rapidjson::Value* Member(const rapidjson::Value& object,
                               const char* key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(key);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string StringAt(const api::ObjectBuilder& object, const char* pointer) {
  const rapidjson::Value* v = object.Find(pointer);
  if (v == nullptr || !v->IsString()) return "";
  return std::string(v->GetString(), v->GetStringLength());
}

std::vector<std::string> StringsAt(const api::ObjectBuilder& object,
                                   const char* pointer) {
  std::vector<std::string> out;
  const rapidjson::Value* f = object.Find(pointer);
  if (f == nullptr || !f->IsArray()) return out;
  for (const auto& v : f->GetArray()) {
    if (v.IsString()) out.emplace_back(v.GetString(), v.GetStringLength());
  }
  return out;
}

std::string Quote(std::string_view s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return std::string(buf.GetString(), buf.GetSize());
}

api::FieldError FieldErr(api::FieldError::Type type, std::string field,
                         std::string value, std::string detail) {
  api::FieldError e;
  e.type = type;
  e.field = std::move(field);
  e.value = std::move(value);
  e.detail = std::move(detail);
  return e;
}

}  // namespace apiserver
}  // namespace kcr
