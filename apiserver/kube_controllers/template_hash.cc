#include "apiserver/kube_controllers/template_hash.h"

#include <algorithm>
#include <vector>

#include "absl/status/statusor.h"
#include "api/json/json_util.h"
#include "api/types/field.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {

void AppendCanonicalJson(const rapidjson::Value& v, std::string* out) {
  if (v.IsObject()) {
    std::vector<const rapidjson::Value::Member*> members;
    for (const auto& m : v.GetObject()) members.push_back(&m);
    std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
      return api::field::View(a->name) < api::field::View(b->name);
    });
    out->push_back('{');
    for (size_t i = 0; i < members.size(); ++i) {
      if (i > 0) out->push_back(',');
      AppendCanonicalJson(members[i]->name, out);
      out->push_back(':');
      AppendCanonicalJson(members[i]->value, out);
    }
    out->push_back('}');
  } else if (v.IsArray()) {
    out->push_back('[');
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      if (i > 0) out->push_back(',');
      AppendCanonicalJson(v[i], out);
    }
    out->push_back(']');
  } else {
    absl::StatusOr<std::string> s = json::JsonToString(v);
    if (s.ok()) out->append(*s);
  }
}

std::string SafeEncodedHash(std::string_view text,
                            std::optional<int64_t> collision_count) {
  uint32_t h = 2166136261u;
  const auto add = [&h](std::string_view bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 16777619u;
    }
  };
  add(text);
  if (collision_count.has_value()) add(Cat(*collision_count));
  static constexpr char kAlphanums[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out = Cat(h);
  for (char& c : out) {
    c = kAlphanums[static_cast<unsigned char>(c) % (sizeof(kAlphanums) - 1)];
  }
  return out;
}

}  // namespace apiserver
}  // namespace kcr
