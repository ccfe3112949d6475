#include "api/internal/json_value.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "api/json_pointer.h"
#include "base/string_view.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace api {
namespace object_internal {

using json_pointer::FindKey;

std::string_view StringOf(const Value& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

std::string Quote(std::string_view key) {
  return absl::CHexEscape(ToAbsl(key));
}

absl::Status Invalid(std::string_view what) {
  return absl::InvalidArgumentError(ToAbsl(what));
}

bool MayHoldSurrogateEscape(std::string_view json) {
  for (size_t i = json.find("\\u"); i != std::string_view::npos;
       i = json.find("\\u", i + 1)) {
    if (i + 2 < json.size() && (json[i + 2] == 'd' || json[i + 2] == 'D')) {
      return true;
    }
  }
  return false;
}

void ReplaceLoneSurrogates(Value& root) {
  auto fix = [](Value& s) {
    // Strings of the scratch tree live in the writable in-situ buffer or
    // inside the value itself.
    char* p = const_cast<char*>(s.GetString());
    const size_t n = s.GetStringLength();
    for (size_t i = 0; i + 2 < n; ++i) {
      if (static_cast<unsigned char>(p[i]) == 0xED &&
          (static_cast<unsigned char>(p[i + 1]) & 0xE0) == 0xA0) {
        p[i] = '\xEF';
        p[i + 1] = '\xBF';
        p[i + 2] = '\xBD';
        i += 2;
      }
    }
  };
  std::vector<Value*> stack = {&root};
  while (!stack.empty()) {
    Value* v = stack.back();
    stack.pop_back();
    if (v->IsString()) {
      fix(*v);
    } else if (v->IsObject()) {
      for (auto& m : v->GetObject()) {
        fix(m.name);
        stack.push_back(&m.value);
      }
    } else if (v->IsArray()) {
      for (auto& e : v->GetArray()) stack.push_back(&e);
    }
  }
}

std::string WriteJson(const Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

Value MakeString(std::string_view s, rapidjson::MemoryPoolAllocator<>& a) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

void SetMember(Value& object, std::string_view key, Value&& value,
               rapidjson::MemoryPoolAllocator<>& a) {
  auto it = FindKey(object, key);
  if (it != object.MemberEnd()) {
    it->value = value;
  } else {
    object.AddMember(MakeString(key, a), value, a);
  }
}

void EraseMember(Value& object, std::string_view key) {
  auto it = FindKey(object, key);
  if (it != object.MemberEnd()) object.EraseMember(it);
}

const Value* MetadataOf(const Value& root) {
  auto it = root.FindMember("metadata");
  return it == root.MemberEnd() ? nullptr : &it->value;
}

}  // namespace object_internal
}  // namespace api
}  // namespace kcr
