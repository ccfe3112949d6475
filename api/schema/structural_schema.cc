#include "api/schema/structural_schema.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "api/json/json_util.h"
#include "re2/re2.h"

namespace kcr {
namespace api {
namespace schema_internal {

struct Node {
  std::string type;  // empty: untyped (int-or-string or preserve-unknown)
  bool nullable = false;
  bool int_or_string = false;
  bool preserve_unknown = false;
  std::vector<std::pair<std::string, std::unique_ptr<Node>>> properties;
  std::vector<std::string> required;
  std::unique_ptr<Node> items;
  std::unique_ptr<Node> additional;  // additionalProperties as a schema
  bool additional_true = false;      // additionalProperties: true
  bool additional_false = false;     // additionalProperties: false
  std::unique_ptr<rapidjson::Document> enum_values;  // a JSON array
  std::unique_ptr<rapidjson::Document> default_value;
  std::optional<double> minimum;
  std::optional<double> maximum;
  bool exclusive_minimum = false;
  bool exclusive_maximum = false;
  std::optional<uint64_t> min_length, max_length;
  std::optional<uint64_t> min_items, max_items;
  std::optional<uint64_t> min_properties, max_properties;
  std::string pattern_source;
  // Compiled once with the schema; RE2 matches in time linear in the input
  // without recursion, so a long string cannot exhaust a small stack.
  std::unique_ptr<RE2> pattern;

  const Node* FindProperty(absl::string_view name) const {
    for (const auto& [key, child] : properties) {
      if (key == name) return child.get();
    }
    return nullptr;
  }
};

}  // namespace schema_internal

namespace {

using schema_internal::Node;

absl::string_view View(const rapidjson::Value& s) {
  return absl::string_view(s.GetString(), s.GetStringLength());
}

// How a value of the schema itself reads in an error: JSON text for
// scalars (long strings cut), the type's name for objects and arrays.
std::string Shown(const rapidjson::Value& v) {
  if (v.IsObject()) return "\"object\"";
  if (v.IsArray()) return "\"array\"";
  if (v.IsString() && v.GetStringLength() > 64) {
    // Cut at a character boundary, never inside a UTF-8 sequence.
    rapidjson::SizeType n = 64;
    while (n > 0 &&
           (static_cast<unsigned char>(v.GetString()[n]) & 0xC0) == 0x80) {
      --n;
    }
    rapidjson::Value cut(v.GetString(), n);
    absl::StatusOr<std::string> s = json::JsonToString(cut);
    return s.ok() ? absl::StrCat(*s, "...") : "\"\"";
  }
  absl::StatusOr<std::string> s = json::JsonToString(v);
  return s.ok() ? *s : "\"\"";
}

// Go's regexp error text ("error parsing regexp: missing closing ): `(`"),
// so a CRD with a bad pattern reads as kube-apiserver would report it. RE2
// and Go's regexp/syntax share their syntax and refuse patterns for the
// same reasons; only the wording of each reason differs.
std::string RegexpError(const RE2& re) {
  const char* what = nullptr;
  switch (re.error_code()) {
    case RE2::ErrorBadEscape:
      what = "invalid escape sequence";
      break;
    case RE2::ErrorBadCharClass:
      what = "invalid character class";
      break;
    case RE2::ErrorBadCharRange:
      what = "invalid character class range";
      break;
    case RE2::ErrorMissingBracket:
      what = "missing closing ]";
      break;
    case RE2::ErrorMissingParen:
      what = "missing closing )";
      break;
    case RE2::ErrorUnexpectedParen:
      what = "unexpected )";
      break;
    case RE2::ErrorTrailingBackslash:
      what = "trailing backslash at end of expression";
      break;
    case RE2::ErrorRepeatArgument:
      what = "missing argument to repetition operator";
      break;
    case RE2::ErrorRepeatSize:
      what = "invalid repeat count";
      break;
    case RE2::ErrorRepeatOp:
      what = "invalid nested repetition operator";
      break;
    case RE2::ErrorBadPerlOp:
      what = "invalid or unsupported Perl syntax";
      break;
    case RE2::ErrorBadUTF8:
      what = "invalid UTF-8";
      break;
    case RE2::ErrorBadNamedCapture:
      what = "invalid named capture";
      break;
    case RE2::ErrorPatternTooLarge:
      what = "expression too large";
      break;
    default:
      return absl::StrCat("error parsing regexp: ", re.error());
  }
  if (re.error_arg().empty()) {
    return absl::StrCat("error parsing regexp: ", what);
  }
  return absl::StrCat("error parsing regexp: ", what, ": `", re.error_arg(),
                      "`");
}

// Compiles one schema tree, remembering the first thing wrong with it as a
// field error (paths in a CRD's notation: openAPIV3Schema.properties[a]).
class Compiler {
 public:
  absl::StatusOr<std::unique_ptr<Node>> Compile(const rapidjson::Value& s,
                                                const std::string& path,
                                                int depth);
  const FieldError& failure() const { return failure_; }

 private:
  absl::Status Fail(
      FieldError::Type type, std::string path, std::string value,
      std::string detail,
      absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
    failure_ = {type, std::move(path), std::move(value), std::move(detail)};
    return absl::Status(code, failure_.ToString());
  }
  absl::Status Invalid(std::string path, const rapidjson::Value& value,
                       std::string detail) {
    return Fail(FieldError::Type::kInvalid, std::move(path), Shown(value),
                std::move(detail));
  }
  absl::StatusOr<std::optional<uint64_t>> NonNegative(const rapidjson::Value& s,
                                                      const char* key,
                                                      const std::string& path);
  absl::StatusOr<bool> Flag(const rapidjson::Value& s, const char* key,
                            const std::string& path);
  absl::StatusOr<std::optional<double>> Bound(const rapidjson::Value& s,
                                              const char* key,
                                              const std::string& path);

  FieldError failure_;
};

absl::StatusOr<std::optional<uint64_t>> Compiler::NonNegative(
    const rapidjson::Value& s, const char* key, const std::string& path) {
  auto it = s.FindMember(key);
  if (it == s.MemberEnd()) return std::optional<uint64_t>();
  if (!it->value.IsUint64()) {
    return Invalid(absl::StrCat(path, ".", key), it->value,
                   "must be a non-negative integer");
  }
  return std::optional<uint64_t>(it->value.GetUint64());
}

absl::StatusOr<bool> Compiler::Flag(const rapidjson::Value& s, const char* key,
                                    const std::string& path) {
  auto it = s.FindMember(key);
  if (it == s.MemberEnd()) return false;
  if (!it->value.IsBool()) {
    return Invalid(absl::StrCat(path, ".", key), it->value,
                   "must be a boolean");
  }
  return it->value.GetBool();
}

absl::StatusOr<std::optional<double>> Compiler::Bound(const rapidjson::Value& s,
                                                      const char* key,
                                                      const std::string& path) {
  auto it = s.FindMember(key);
  if (it == s.MemberEnd()) return std::optional<double>();
  if (!it->value.IsNumber()) {
    return Invalid(absl::StrCat(path, ".", key), it->value, "must be a number");
  }
  return std::optional<double>(it->value.GetDouble());
}

std::unique_ptr<rapidjson::Document> CopyOf(const rapidjson::Value& v) {
  auto doc = std::make_unique<rapidjson::Document>();
  doc->CopyFrom(v, doc->GetAllocator());
  return doc;
}

absl::StatusOr<std::unique_ptr<Node>> Compiler::Compile(
    const rapidjson::Value& s, const std::string& path, int depth) {
  if (depth > StructuralSchema::kMaxSchemaDepth) {
    return Fail(FieldError::Type::kForbidden, path, "",
                absl::StrCat("schema nests deeper than ",
                             StructuralSchema::kMaxSchemaDepth, " levels"));
  }
  if (!s.IsObject()) return Invalid(path, s, "must be an object");
  for (const char* unsupported : {"allOf", "oneOf", "not", "$ref"}) {
    if (s.HasMember(unsupported)) {
      return Fail(FieldError::Type::kForbidden,
                  absl::StrCat(path, ".", unsupported), "", "not supported",
                  absl::StatusCode::kUnimplemented);
    }
  }
  auto node = std::make_unique<Node>();
  auto flag = Flag(s, "nullable", path);
  if (!flag.ok()) return flag.status();
  node->nullable = *flag;
  flag = Flag(s, "x-kubernetes-int-or-string", path);
  if (!flag.ok()) return flag.status();
  node->int_or_string = *flag;
  flag = Flag(s, "x-kubernetes-preserve-unknown-fields", path);
  if (!flag.ok()) return flag.status();
  node->preserve_unknown = *flag;
  if (s.HasMember("anyOf") && !node->int_or_string) {
    return Fail(FieldError::Type::kForbidden, absl::StrCat(path, ".anyOf"), "",
                "not supported", absl::StatusCode::kUnimplemented);
  }

  if (auto it = s.FindMember("type"); it != s.MemberEnd()) {
    if (!it->value.IsString()) {
      return Invalid(absl::StrCat(path, ".type"), it->value,
                     "must be a string");
    }
    node->type = std::string(View(it->value));
    if (node->type != "object" && node->type != "array" &&
        node->type != "string" && node->type != "integer" &&
        node->type != "number" && node->type != "boolean") {
      return Fail(FieldError::Type::kNotSupported, absl::StrCat(path, ".type"),
                  Shown(it->value),
                  "supported values: \"array\", \"boolean\", \"integer\", "
                  "\"number\", \"object\", \"string\"");
    }
  }

  if (auto it = s.FindMember("properties"); it != s.MemberEnd()) {
    if (!it->value.IsObject()) {
      return Invalid(absl::StrCat(path, ".properties"), it->value,
                     "must be an object");
    }
    for (const auto& m : it->value.GetObject()) {
      std::string name(View(m.name));
      auto child = Compile(
          m.value, absl::StrCat(path, ".properties[", name, "]"), depth + 1);
      if (!child.ok()) return child.status();
      node->properties.emplace_back(std::move(name), std::move(*child));
    }
  }
  if (auto it = s.FindMember("required"); it != s.MemberEnd()) {
    if (!it->value.IsArray()) {
      return Invalid(absl::StrCat(path, ".required"), it->value,
                     "must be a list of strings");
    }
    for (const auto& r : it->value.GetArray()) {
      if (!r.IsString()) {
        return Invalid(absl::StrCat(path, ".required"), r,
                       "must be a list of strings");
      }
      node->required.emplace_back(View(r));
    }
  }
  if (auto it = s.FindMember("items"); it != s.MemberEnd()) {
    if (!it->value.IsObject()) {
      return Invalid(absl::StrCat(path, ".items"), it->value,
                     "must be a schema object");
    }
    auto items = Compile(it->value, absl::StrCat(path, ".items"), depth + 1);
    if (!items.ok()) return items.status();
    node->items = std::move(*items);
  }
  if (auto it = s.FindMember("additionalProperties"); it != s.MemberEnd()) {
    if (it->value.IsBool()) {
      node->additional_true = it->value.GetBool();
      node->additional_false = !it->value.GetBool();
    } else {
      auto add = Compile(it->value, absl::StrCat(path, ".additionalProperties"),
                         depth + 1);
      if (!add.ok()) return add.status();
      node->additional = std::move(*add);
    }
  }
  if (auto it = s.FindMember("enum"); it != s.MemberEnd()) {
    if (!it->value.IsArray()) {
      return Invalid(absl::StrCat(path, ".enum"), it->value, "must be a list");
    }
    node->enum_values = CopyOf(it->value);
  }
  if (auto it = s.FindMember("default"); it != s.MemberEnd()) {
    node->default_value = CopyOf(it->value);
  }
  auto bound = Bound(s, "minimum", path);
  if (!bound.ok()) return bound.status();
  node->minimum = *bound;
  bound = Bound(s, "maximum", path);
  if (!bound.ok()) return bound.status();
  node->maximum = *bound;
  flag = Flag(s, "exclusiveMinimum", path);
  if (!flag.ok()) return flag.status();
  node->exclusive_minimum = *flag;
  flag = Flag(s, "exclusiveMaximum", path);
  if (!flag.ok()) return flag.status();
  node->exclusive_maximum = *flag;

  struct {
    const char* key;
    std::optional<uint64_t>* out;
  } counts[] = {{"minLength", &node->min_length},
                {"maxLength", &node->max_length},
                {"minItems", &node->min_items},
                {"maxItems", &node->max_items},
                {"minProperties", &node->min_properties},
                {"maxProperties", &node->max_properties}};
  for (auto& c : counts) {
    auto n = NonNegative(s, c.key, path);
    if (!n.ok()) return n.status();
    *c.out = *n;
  }

  if (auto it = s.FindMember("pattern"); it != s.MemberEnd()) {
    if (!it->value.IsString()) {
      return Invalid(absl::StrCat(path, ".pattern"), it->value,
                     "must be a string");
    }
    node->pattern_source = std::string(View(it->value));
    RE2::Options options;
    // A bad pattern is reported to the caller, not logged.
    options.set_log_errors(false);
    auto re = std::make_unique<RE2>(node->pattern_source, options);
    if (!re->ok()) {
      return Invalid(absl::StrCat(path, ".pattern"), it->value,
                     absl::StrCat("must be a valid regular expression, but "
                                  "isn't: ",
                                  RegexpError(*re)));
    }
    node->pattern = std::move(re);
  }
  return node;
}

// Paths and values in apimachinery's notation.
std::string Child(const std::string& path, absl::string_view name) {
  if (path.empty()) return std::string(name);
  return absl::StrCat(path, ".", name);
}

std::string InBody(const std::string& path) {
  if (path.empty()) return "body";
  return absl::StrCat(path, " in body");
}

std::string Render(const rapidjson::Value& v) {
  absl::StatusOr<std::string> s = json::JsonToString(v);
  return s.ok() ? *s : "<unprintable>";
}

std::string FormatNumber(double d) {
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(d));
  }
  return absl::StrCat(d);
}

bool IsInteger(const rapidjson::Value& v) {
  if (v.IsInt64() || v.IsUint64()) return true;
  if (!v.IsDouble()) return false;
  double d = v.GetDouble();
  return std::isfinite(d) && d == std::floor(d);
}

// As JSON names types, with whole numbers as "integer" (OpenAPI's type).
const char* TypeName(const rapidjson::Value& v) {
  if (v.IsNumber() && IsInteger(v)) return "integer";
  return json::JsonTypeName(v);
}

bool HasType(const rapidjson::Value& v, const std::string& type) {
  if (type == "object") return v.IsObject();
  if (type == "array") return v.IsArray();
  if (type == "string") return v.IsString();
  if (type == "integer") return v.IsNumber() && IsInteger(v);
  if (type == "number") return v.IsNumber();
  if (type == "boolean") return v.IsBool();
  return true;
}

size_t CodePoints(const rapidjson::Value& s) {
  size_t n = 0;
  const char* p = s.GetString();
  for (size_t i = 0; i < s.GetStringLength(); ++i) {
    if ((static_cast<unsigned char>(p[i]) & 0xC0) != 0x80) ++n;
  }
  return n;
}

bool IsRootKeep(absl::string_view name) {
  return name == "apiVersion" || name == "kind" || name == "metadata";
}

bool IsObjectMetaField(absl::string_view name) {
  static constexpr absl::string_view kFields[] = {"name",
                                                  "generateName",
                                                  "namespace",
                                                  "selfLink",
                                                  "uid",
                                                  "resourceVersion",
                                                  "generation",
                                                  "creationTimestamp",
                                                  "deletionTimestamp",
                                                  "deletionGracePeriodSeconds",
                                                  "labels",
                                                  "annotations",
                                                  "ownerReferences",
                                                  "finalizers",
                                                  "managedFields"};
  for (absl::string_view f : kFields) {
    if (f == name) return true;
  }
  return false;
}

void TypeError(const std::string& path, const char* want,
               const rapidjson::Value& v, std::vector<FieldError>* errors) {
  std::string actual = TypeName(v);
  errors->push_back({FieldError::Type::kInvalid, path,
                     absl::StrCat("\"", actual, "\""),
                     absl::StrCat(InBody(path), " must be of type ", want,
                                  ": \"", actual, "\"")});
}

void Check(const Node& n, const rapidjson::Value& v, const std::string& path,
           bool root, std::vector<FieldError>* errors) {
  if (v.IsNull()) {
    if (n.nullable) return;
    if (n.type.empty() && !n.int_or_string) return;
  }
  if (n.int_or_string) {
    if (!(v.IsString() || (v.IsNumber() && IsInteger(v)))) {
      TypeError(path, "integer,string", v, errors);
      return;
    }
  } else if (!n.type.empty() && !HasType(v, n.type)) {
    TypeError(path, n.type.c_str(), v, errors);
    return;
  }

  if (n.enum_values) {
    bool found = false;
    for (const auto& e : n.enum_values->GetArray()) {
      if (json::JsonDeepEqual(e, v)) {
        found = true;
        break;
      }
    }
    if (!found) {
      std::vector<std::string> supported;
      for (const auto& e : n.enum_values->GetArray()) {
        supported.push_back(Render(e));
      }
      errors->push_back(
          {FieldError::Type::kNotSupported, path, Render(v),
           absl::StrCat("supported values: ", absl::StrJoin(supported, ", "))});
    }
  }

  if (v.IsNumber()) {
    double d = v.GetDouble();
    if (n.minimum &&
        (n.exclusive_minimum ? !(d > *n.minimum) : !(d >= *n.minimum))) {
      errors->push_back({FieldError::Type::kInvalid, path, Render(v),
                         absl::StrCat(InBody(path), " should be greater than ",
                                      n.exclusive_minimum ? "" : "or equal to ",
                                      FormatNumber(*n.minimum))});
    }
    if (n.maximum &&
        (n.exclusive_maximum ? !(d < *n.maximum) : !(d <= *n.maximum))) {
      errors->push_back({FieldError::Type::kInvalid, path, Render(v),
                         absl::StrCat(InBody(path), " should be less than ",
                                      n.exclusive_maximum ? "" : "or equal to ",
                                      FormatNumber(*n.maximum))});
    }
  }

  if (v.IsString()) {
    size_t len = CodePoints(v);
    if (n.min_length && len < *n.min_length) {
      errors->push_back({FieldError::Type::kInvalid, path, Render(v),
                         absl::StrCat(InBody(path), " should be at least ",
                                      *n.min_length, " chars long")});
    }
    if (n.max_length && len > *n.max_length) {
      errors->push_back({FieldError::Type::kInvalid, path, Render(v),
                         absl::StrCat(InBody(path), " should be at most ",
                                      *n.max_length, " chars long")});
    }
    if (n.pattern != nullptr &&
        !RE2::PartialMatch(re2::StringPiece(v.GetString(), v.GetStringLength()),
                           *n.pattern)) {
      errors->push_back({FieldError::Type::kInvalid, path, Render(v),
                         absl::StrCat(InBody(path), " should match '",
                                      n.pattern_source, "'")});
    }
  }

  if (v.IsArray()) {
    size_t size = v.Size();
    if (n.min_items && size < *n.min_items) {
      errors->push_back({FieldError::Type::kInvalid, path, absl::StrCat(size),
                         absl::StrCat(InBody(path), " should have at least ",
                                      *n.min_items, " items")});
    }
    if (n.max_items && size > *n.max_items) {
      errors->push_back(
          {FieldError::Type::kTooMany, path, absl::StrCat(size),
           absl::StrCat("must have at most ", *n.max_items, " items")});
    }
    if (n.items) {
      for (rapidjson::SizeType i = 0; i < size; ++i) {
        Check(*n.items, v[i], absl::StrCat(path, "[", i, "]"), false, errors);
      }
    }
  }

  if (v.IsObject()) {
    size_t size = v.MemberCount();
    if (n.min_properties && size < *n.min_properties) {
      errors->push_back({FieldError::Type::kInvalid, path, absl::StrCat(size),
                         absl::StrCat(InBody(path), " should have at least ",
                                      *n.min_properties, " properties")});
    }
    if (n.max_properties && size > *n.max_properties) {
      errors->push_back({FieldError::Type::kTooMany, path, absl::StrCat(size),
                         absl::StrCat("must have at most ", *n.max_properties,
                                      " properties")});
    }
    for (const std::string& name : n.required) {
      if (!v.HasMember(name.c_str())) {
        errors->push_back(
            {FieldError::Type::kRequired, Child(path, name), "", ""});
      }
    }
    for (const auto& [name, child] : n.properties) {
      auto it = v.FindMember(name.c_str());
      if (it == v.MemberEnd()) continue;
      Check(*child, it->value, Child(path, name), false, errors);
    }
    for (const auto& m : v.GetObject()) {
      absl::string_view name = View(m.name);
      if (n.FindProperty(name) != nullptr) continue;
      if (root && IsRootKeep(name)) {
        if (name == "metadata" && !m.value.IsObject()) {
          TypeError("metadata", "object", m.value, errors);
        }
        continue;
      }
      if (n.additional) {
        Check(*n.additional, m.value, Child(path, name), false, errors);
      } else if (n.additional_false && !n.preserve_unknown) {
        std::string child = Child(path, name);
        errors->push_back(
            {FieldError::Type::kForbidden, child, "",
             absl::StrCat(InBody(child), " is a forbidden property")});
      }
    }
  }
}

void PruneNode(const Node& n, rapidjson::Value* v, bool root) {
  if (v->IsArray()) {
    if (n.items) {
      for (auto& e : v->GetArray()) PruneNode(*n.items, &e, false);
    }
    return;
  }
  if (!v->IsObject()) return;
  // Untyped nodes only occur with preserve-unknown-fields or
  // int-or-string, and typed non-object nodes keep a wrong-typed object for
  // Validate to report.
  if (!n.type.empty() && n.type != "object") return;
  for (auto it = v->MemberBegin(); it != v->MemberEnd();) {
    absl::string_view name = View(it->name);
    if (root && (name == "apiVersion" || name == "kind")) {
      ++it;
      continue;
    }
    if (root && name == "metadata") {
      if (it->value.IsObject()) {
        for (auto m = it->value.MemberBegin(); m != it->value.MemberEnd();) {
          if (IsObjectMetaField(View(m->name))) {
            ++m;
          } else {
            m = it->value.EraseMember(m);
          }
        }
      }
      ++it;
      continue;
    }
    if (const Node* child = n.FindProperty(name)) {
      PruneNode(*child, &it->value, false);
      ++it;
    } else if (n.additional) {
      PruneNode(*n.additional, &it->value, false);
      ++it;
    } else if (n.preserve_unknown || n.additional_true) {
      ++it;
    } else {
      it = v->EraseMember(it);
    }
  }
}

void DefaultNode(const Node& n, rapidjson::Value* v,
                 rapidjson::Value::AllocatorType& allocator) {
  if (v->IsArray()) {
    if (n.items) {
      for (auto& e : v->GetArray()) DefaultNode(*n.items, &e, allocator);
    }
    return;
  }
  if (!v->IsObject()) return;
  for (const auto& [name, child] : n.properties) {
    auto it = v->FindMember(name.c_str());
    if (it != v->MemberEnd() && it->value.IsNull() && !child->nullable) {
      v->EraseMember(it);
      it = v->MemberEnd();
    }
    if (it == v->MemberEnd()) {
      if (!child->default_value) continue;
      rapidjson::Value key(name.c_str(),
                           static_cast<rapidjson::SizeType>(name.size()),
                           allocator);
      rapidjson::Value value(*child->default_value, allocator);
      v->AddMember(key, value, allocator);
      it = v->FindMember(name.c_str());
    }
    DefaultNode(*child, &it->value, allocator);
  }
  if (n.additional) {
    for (auto& m : v->GetObject()) {
      if (n.FindProperty(View(m.name)) == nullptr) {
        DefaultNode(*n.additional, &m.value, allocator);
      }
    }
  }
}

}  // namespace

StructuralSchema::StructuralSchema(std::unique_ptr<Node> root)
    : root_(std::move(root)) {}

StructuralSchema::~StructuralSchema() = default;

absl::StatusOr<std::unique_ptr<StructuralSchema>> StructuralSchema::Create(
    const rapidjson::Value& openapi_v3_schema, FieldError* error) {
  Compiler compiler;
  auto root = compiler.Compile(openapi_v3_schema, "openAPIV3Schema", 0);
  if (!root.ok()) {
    if (error != nullptr) *error = compiler.failure();
    return root.status();
  }
  return std::unique_ptr<StructuralSchema>(
      new StructuralSchema(std::move(*root)));
}

std::vector<FieldError> StructuralSchema::Validate(
    const rapidjson::Value& object) const {
  std::vector<FieldError> errors;
  Check(*root_, object, "", true, &errors);
  return errors;
}

void StructuralSchema::Prune(rapidjson::Value* object,
                             rapidjson::Value::AllocatorType& allocator) const {
  PruneNode(*root_, object, true);
}

void StructuralSchema::ApplyDefaults(
    rapidjson::Value* object,
    rapidjson::Value::AllocatorType& allocator) const {
  DefaultNode(*root_, object, allocator);
}

std::vector<FieldError> StructuralSchema::Admit(
    rapidjson::Value* object,
    rapidjson::Value::AllocatorType& allocator) const {
  Prune(object, allocator);
  ApplyDefaults(object, allocator);
  return Validate(*object);
}

}  // namespace api
}  // namespace kcr
