#include "api/json_pointer.h"

namespace kcr {
namespace api {
namespace json_pointer {

bool NextToken(std::string_view* rest, std::string* buffer,
               std::string_view* token) {
  if (rest->empty() || (*rest)[0] != '/') return false;
  rest->remove_prefix(1);
  size_t end = rest->find('/');
  std::string_view raw = rest->substr(0, end);
  rest->remove_prefix(end == std::string_view::npos ? rest->size() : end);
  if (raw.find('~') == std::string_view::npos) {
    *token = raw;
    return true;
  }
  buffer->clear();
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '~') {
      buffer->push_back(raw[i]);
      continue;
    }
    if (i + 1 >= raw.size()) return false;
    if (raw[i + 1] == '0') {
      buffer->push_back('~');
    } else if (raw[i + 1] == '1') {
      buffer->push_back('/');
    } else {
      return false;
    }
    ++i;
  }
  *token = *buffer;
  return true;
}

bool ParseIndex(std::string_view token, size_t* index) {
  if (token.empty() || token.size() > 9) return false;
  if (token.size() > 1 && token[0] == '0') return false;
  size_t n = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  *index = n;
  return true;
}

Value::ConstMemberIterator FindKey(const Value& object, std::string_view key) {
  Value name(rapidjson::StringRef(
      key.data(), static_cast<rapidjson::SizeType>(key.size())));
  return object.FindMember(name);
}

Value::MemberIterator FindKey(Value& object, std::string_view key) {
  Value name(rapidjson::StringRef(
      key.data(), static_cast<rapidjson::SizeType>(key.size())));
  return object.FindMember(name);
}

const Value* FindPointer(const Value& root, std::string_view pointer) {
  const Value* v = &root;
  std::string buffer;
  std::string_view token;
  while (!pointer.empty()) {
    if (!NextToken(&pointer, &buffer, &token)) return nullptr;
    if (v->IsObject()) {
      auto it = FindKey(*v, token);
      if (it == v->MemberEnd()) return nullptr;
      v = &it->value;
    } else if (v->IsArray()) {
      size_t index;
      if (!ParseIndex(token, &index) || index >= v->Size()) return nullptr;
      v = &(*v)[static_cast<rapidjson::SizeType>(index)];
    } else {
      return nullptr;
    }
  }
  return v;
}

std::string EscapeToken(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace json_pointer
}  // namespace api
}  // namespace kcr
