#include "apiserver/registry/builtin_schema.h"

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "apiserver/registry/builtin_types.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;
using Kind = GoType::Kind;

// The GoTypes of builtin_types.h's rows, built once and kept for the
// whole program: the types point into each other.
struct Tables {
  std::vector<GoType> types;
  std::vector<BuiltinResource> resources;
  absl::flat_hash_map<std::string, const GoType*> by_openapi_name;
};

const Tables& GeneratedTables() {
  static const Tables* const tables = [] {
    namespace bt = builtin_types;
    auto* t = new Tables();
    t->types.resize(bt::kNumTypes);
    for (int i = 0; i < bt::kNumTypes; ++i) {
      const bt::TypeRow& row = bt::kTypes[i];
      GoType& type = t->types[i];
      type.kind = row.kind;
      type.name = row.name;
      type.openapi_name = row.openapi_name;
      type.description = row.description;
      if (row.elem >= 0) type.elem = &t->types[row.elem];
      type.fields.reserve(row.num_fields);
      for (int f = row.first_field; f < row.first_field + row.num_fields; ++f) {
        const bt::FieldRow& field = bt::kFields[f];
        type.fields.push_back(GoField{field.json_name, &t->types[field.type],
                                      field.required, field.description});
      }
      if (row.openapi_name[0] != '\0') {
        t->by_openapi_name.emplace(row.openapi_name, &type);
      }
    }
    t->resources.reserve(bt::kNumResources);
    for (int i = 0; i < bt::kNumResources; ++i) {
      const bt::ResourceRow& row = bt::kResources[i];
      t->resources.push_back(BuiltinResource{row.group, row.version, row.plural,
                                             row.kind, row.namespaced,
                                             &t->types[row.type]});
    }
    return t;
  }();
  return *tables;
}

// Orders versions as kube prefers them: GA over beta over alpha, then the
// higher major, then the higher minor ("v2" > "v1" > "v1beta2" >
// "v1beta1" > "v1alpha1").
int VersionPriority(std::string_view version) {
  int major = 0, minor = 0, level = 3;
  size_t i = 1;
  while (i < version.size() && absl::ascii_isdigit(version[i])) {
    major = major * 10 + (version[i++] - '0');
  }
  if (version.substr(i, 4) == "beta") {
    level = 2;
    i += 4;
  } else if (version.substr(i, 5) == "alpha") {
    level = 1;
    i += 5;
  }
  while (i < version.size() && absl::ascii_isdigit(version[i])) {
    minor = minor * 10 + (version[i++] - '0');
  }
  return level * 1000000 + major * 1000 + minor;
}

// ---- Decoding ----

std::string JsonKind(const Value& v) {
  if (v.IsString()) return "string";
  if (v.IsNumber()) return "number";
  if (v.IsBool()) return "bool";
  if (v.IsArray()) return "array";
  return "object";
}

// The number as it was most likely written: integers whole, other numbers
// in the shortest form that reads back the same.
std::string NumberText(const Value& v) {
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  double d = v.GetDouble();
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  return buf;
}

// resource.ParseQuantity's checks, enough to refuse what it refuses.
const char* QuantityError(std::string_view s) {
  static constexpr char kFormat[] =
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  const absl::string_view trimmed =
      absl::StripAsciiWhitespace(absl::string_view(s.data(), s.size()));
  s = std::string_view(trimmed.data(), trimmed.size());
  if (s.empty()) return kFormat;
  size_t i = 0;
  if (s[i] == '+' || s[i] == '-') ++i;
  size_t digits_start = i;
  int dots = 0;
  while (i < s.size() && (absl::ascii_isdigit(s[i]) || s[i] == '.')) {
    if (s[i] == '.') ++dots;
    ++i;
  }
  if (i == digits_start) return kFormat;
  std::string_view suffix = s.substr(i);
  size_t j = 0;
  while (j < suffix.size() &&
         std::string_view("eEinumkKMGTP").find(suffix[j]) !=
             std::string_view::npos) {
    ++j;
  }
  if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) ++j;
  while (j < suffix.size() && absl::ascii_isdigit(suffix[j])) ++j;
  if (j != suffix.size()) return kFormat;
  if (dots > 1 || (i - digits_start) == static_cast<size_t>(dots)) {
    return "unable to parse numeric part of quantity";
  }
  static constexpr std::string_view kSuffixes[] = {
      "",  "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n",
      "u", "m",  "k",  "M",  "G",  "T",  "P",  "E"};
  for (std::string_view known : kSuffixes) {
    if (suffix == known) return nullptr;
  }
  // A decimal exponent: e or E, an optional sign, digits.
  if (suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    size_t k = 1;
    if (suffix[k] == '+' || suffix[k] == '-') ++k;
    if (k < suffix.size()) {
      bool all_digits = true;
      for (size_t m = k; m < suffix.size(); ++m) {
        all_digits = all_digits && absl::ascii_isdigit(suffix[m]);
      }
      if (all_digits) return nullptr;
    }
  }
  return "unable to parse quantity's suffix";
}

std::string Unqualified(const std::string& name) {
  size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

// Where a Decoder is in the document: a link to the caller's Step, so
// that the walk allocates nothing; the strings Go's errors name are built
// only when there is an error or an unknown field to report.
struct Step {
  enum class Kind { kRoot, kField, kMapKey, kIndex };
  const Step* parent = nullptr;
  Kind kind = Kind::kRoot;
  // kField, kMapKey: the member's name.
  std::string_view key;
  // kIndex: the element's index.
  rapidjson::SizeType index = 0;
  // kField: the struct the field belongs to.
  const GoType* in_struct = nullptr;
};

// The strict decoder's path: dotted member names, [i] for list elements.
std::string PathOf(const Step& at) {
  std::vector<const Step*> steps;
  for (const Step* s = &at; s != nullptr; s = s->parent) steps.push_back(s);
  std::string path;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    const Step& s = **it;
    switch (s.kind) {
      case Step::Kind::kRoot:
        break;
      case Step::Kind::kField:
      case Step::Kind::kMapKey:
        path = path.empty() ? std::string(s.key) : Cat(path, ".", s.key);
        break;
      case Step::Kind::kIndex:
        path = Cat(path, "[", static_cast<int>(s.index), "]");
        break;
    }
  }
  return path;
}

// Go's error context: the innermost struct, and the dotted field names
// from the root (no list indexes, no map keys).
std::string GoStructOf(const Step& at) {
  for (const Step* s = &at; s != nullptr; s = s->parent) {
    if (s->kind == Step::Kind::kField) return Unqualified(s->in_struct->name);
  }
  return "";
}

std::string GoFieldOf(const Step& at) {
  std::vector<std::string_view> keys;
  for (const Step* s = &at; s != nullptr; s = s->parent) {
    if (s->kind == Step::Kind::kField) keys.push_back(s->key);
  }
  std::string field;
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
    field = field.empty() ? std::string(*it) : Cat(field, ".", *it);
  }
  return field;
}

class Decoder {
 public:
  Decoder(bool patch, DecodeReport* report) : patch_(patch), report_(report) {}

  void Walk(const GoType& t, const Value& v, const Step& at) {
    if (v.IsNull()) return;
    switch (t.kind) {
      case Kind::kString:
        if (!v.IsString()) TypeError(JsonKind(v), at, t);
        return;
      case Kind::kBool:
        if (!v.IsBool()) TypeError(JsonKind(v), at, t);
        return;
      case Kind::kInt32:
      case Kind::kInt64:
        if (!v.IsNumber()) {
          TypeError(JsonKind(v), at, t);
        } else if (!FitsInt(v, t.kind == Kind::kInt32)) {
          TypeError(Cat("number ", NumberText(v)), at, t);
        }
        return;
      case Kind::kFloat64:
        if (!v.IsNumber()) TypeError(JsonKind(v), at, t);
        return;
      case Kind::kBytes: {
        if (!v.IsString()) {
          TypeError(JsonKind(v), at, t);
          return;
        }
        int64_t bad = 0;
        if (DecodeBase64Length(
                std::string_view(v.GetString(), v.GetStringLength()), &bad) <
            0) {
          Fail(Cat("illegal base64 data at input byte ", bad));
        }
        return;
      }
      case Kind::kQuantity: {
        if (v.IsNumber()) {
          if (const char* e = QuantityError(NumberText(v))) Fail(e);
        } else if (v.IsString()) {
          if (const char* e = QuantityError(
                  std::string_view(v.GetString(), v.GetStringLength()))) {
            Fail(e);
          }
        } else {
          Fail(QuantityError(""));
        }
        return;
      }
      case Kind::kIntOrString:
        if (v.IsString()) return;
        if (!v.IsNumber()) {
          Fail(Cat("json: cannot unmarshal ", JsonKind(v),
                   " into Go value of type int32"));
        } else if (!FitsInt(v, true)) {
          Fail(Cat("json: cannot unmarshal number ", NumberText(v),
                   " into Go value of type int32"));
        }
        return;
      case Kind::kTime:
        if (!v.IsString()) {
          Fail(Cat("json: cannot unmarshal ", JsonKind(v),
                   " into Go value of type string"));
        }
        return;
      case Kind::kAny:
        return;
      case Kind::kStruct: {
        if (!v.IsObject()) {
          TypeError(JsonKind(v), at, t);
          return;
        }
        for (const auto& m : v.GetObject()) {
          const std::string_view key(m.name.GetString(),
                                     m.name.GetStringLength());
          if (patch_ && !key.empty() && key[0] == '$') continue;
          const Step member{&at, Step::Kind::kField, key, 0, &t};
          const GoType* field = t.Field(key);
          if (field == nullptr) {
            report_->unknown_fields.push_back(PathOf(member));
            continue;
          }
          Walk(*field, m.value, member);
        }
        return;
      }
      case Kind::kMap:
        if (!v.IsObject()) {
          TypeError(JsonKind(v), at, t);
          return;
        }
        for (const auto& m : v.GetObject()) {
          const std::string_view key(m.name.GetString(),
                                     m.name.GetStringLength());
          if (patch_ && !key.empty() && key[0] == '$') continue;
          Walk(*t.elem, m.value, Step{&at, Step::Kind::kMapKey, key});
        }
        return;
      case Kind::kSlice:
        if (!v.IsArray()) {
          TypeError(JsonKind(v), at, t);
          return;
        }
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
          Walk(*t.elem, v[i], Step{&at, Step::Kind::kIndex, {}, i});
        }
        return;
    }
  }

 private:
  static bool FitsInt(const Value& v, bool int32) {
    if (!v.IsInt64()) return false;
    if (!int32) return true;
    int64_t n = v.GetInt64();
    return n >= std::numeric_limits<int32_t>::min() &&
           n <= std::numeric_limits<int32_t>::max();
  }

  void TypeError(const std::string& value, const Step& at, const GoType& t) {
    if (!report_->error.empty()) return;  // only the first is kept
    const std::string go_struct = GoStructOf(at);
    if (go_struct.empty()) {
      Fail(Cat("json: cannot unmarshal ", value, " into Go value of type ",
               t.name));
    } else {
      Fail(Cat("json: cannot unmarshal ", value, " into Go struct field ",
               go_struct, ".", GoFieldOf(at), " of type ", t.name));
    }
  }

  // Go's decoder keeps the first error it meets.
  void Fail(std::string message) {
    if (report_->error.empty()) report_->error = std::move(message);
  }

  const bool patch_;
  DecodeReport* const report_;
};

void Drop(const GoType& t, Value* v) {
  switch (t.kind) {
    case Kind::kStruct:
      if (!v->IsObject()) return;
      for (auto it = v->MemberBegin(); it != v->MemberEnd();) {
        const GoType* field = t.Field(
            std::string_view(it->name.GetString(), it->name.GetStringLength()));
        if (field == nullptr) {
          it = v->EraseMember(it);
        } else {
          Drop(*field, &it->value);
          ++it;
        }
      }
      return;
    case Kind::kMap:
      if (!v->IsObject()) return;
      for (auto& m : v->GetObject()) Drop(*t.elem, &m.value);
      return;
    case Kind::kSlice:
      if (!v->IsArray()) return;
      for (auto& e : v->GetArray()) Drop(*t.elem, &e);
      return;
    default:
      return;
  }
}

bool IsBase64Char(char c) {
  return absl::ascii_isalnum(c) || c == '+' || c == '/';
}

}  // namespace

const GoType* GoType::Field(std::string_view json_name) const {
  for (const GoField& f : fields) {
    if (f.name == json_name) return f.type;
  }
  return nullptr;
}

const std::vector<BuiltinResource>& BuiltinResources() {
  return GeneratedTables().resources;
}

const GoType* BuiltinKindType(std::string_view group, std::string_view version,
                              std::string_view kind) {
  for (const BuiltinResource& r : BuiltinResources()) {
    if (r.group == group && r.version == version && r.kind == kind) {
      return r.type;
    }
  }
  return nullptr;
}

const GoType* BuiltinKindType(std::string_view group, std::string_view kind) {
  const BuiltinResource* best = nullptr;
  for (const BuiltinResource& r : BuiltinResources()) {
    if (r.group != group || r.kind != kind) continue;
    if (best == nullptr ||
        VersionPriority(r.version) > VersionPriority(best->version)) {
      best = &r;
    }
  }
  return best == nullptr ? nullptr : best->type;
}

const GoType* BuiltinDefinition(std::string_view openapi_name) {
  const auto& by_name = GeneratedTables().by_openapi_name;
  auto it = by_name.find(std::string(openapi_name));
  return it == by_name.end() ? nullptr : it->second;
}

DecodeReport CheckDecode(const GoType& type, const Value& value, bool patch) {
  DecodeReport report;
  Decoder(patch, &report).Walk(type, value, Step());
  return report;
}

void DropUnknownFields(const GoType& type, Value* value) { Drop(type, value); }

int64_t DecodeBase64Length(std::string_view s, int64_t* bad_offset) {
  // Go's decodeQuantum, quantum after quantum: '\r' and '\n' are skipped,
  // padding is required, and nothing but newlines may follow it.
  const int64_t len = static_cast<int64_t>(s.size());
  auto skip_newlines = [&](int64_t si) {
    while (si < len && (s[si] == '\n' || s[si] == '\r')) ++si;
    return si;
  };
  int64_t si = 0, n = 0;
  while (si < len) {
    int dlen = 4;
    for (int j = 0; j < 4; ++j) {
      if (si == len) {
        if (j == 0) return n;
        *bad_offset = si - j;
        return -1;
      }
      const char in = s[si++];
      if (IsBase64Char(in)) continue;
      if (in == '\n' || in == '\r') {
        --j;
        continue;
      }
      if (in != '=' || j < 2) {
        *bad_offset = si - 1;
        return -1;
      }
      if (j == 2) {
        si = skip_newlines(si);
        if (si == len) {
          *bad_offset = len;
          return -1;
        }
        if (s[si] != '=') {
          *bad_offset = si - 1;
          return -1;
        }
        ++si;
      }
      si = skip_newlines(si);
      if (si < len) {
        *bad_offset = si;
        return -1;
      }
      dlen = j;
      break;
    }
    n += dlen - 1;
  }
  return n;
}

}  // namespace apiserver
}  // namespace kcr
