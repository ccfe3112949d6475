#include "api/jsonpath/jsonpath.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/jsonpath/internal/evaluator.h"
#include "api/jsonpath/internal/node.h"
#include "api/jsonpath/internal/parser.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace jsonpath {

using internal::LiteralPool;
using internal::Segment;
using internal::SortedMemberValues;
using internal::Str;
using Value = rapidjson::Value;

struct JsonPath::Impl {
  LiteralPool pool;
  std::vector<Segment> segments;
};

namespace {

// ---------------------------------------------------------------------------
// Printing.

// The shortest decimal digits that read back as `v` (v finite, > 0), and the
// decimal exponent: v = 0.d1d2d3... x 10^point.
void ShortestDigits(double v, std::string* digits, int* point) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*e", precision - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  // buf is "d.ddde[+-]XX".
  const char* e = std::strchr(buf, 'e');
  digits->clear();
  for (const char* p = buf; p < e; ++p) {
    if (*p != '.') digits->push_back(*p);
  }
  while (digits->size() > 1 && digits->back() == '0') digits->pop_back();
  *point = std::atoi(e + 1) + 1;
}

std::string FixedNotation(const std::string& digits, int point) {
  std::string out;
  if (point <= 0) {
    out = "0.";
    out.append(static_cast<size_t>(-point), '0');
    out += digits;
  } else if (static_cast<size_t>(point) >= digits.size()) {
    out = digits;
    out.append(static_cast<size_t>(point) - digits.size(), '0');
  } else {
    out = digits.substr(0, static_cast<size_t>(point));
    out += '.';
    out += digits.substr(static_cast<size_t>(point));
  }
  return out;
}

std::string ExponentNotation(const std::string& digits, int point,
                             bool two_digit_exponent) {
  std::string out(1, digits[0]);
  if (digits.size() > 1) {
    out += '.';
    out += digits.substr(1);
  }
  const int exp = point - 1;
  out += 'e';
  out += exp < 0 ? '-' : '+';
  const int mag = exp < 0 ? -exp : exp;
  if (two_digit_exponent && mag < 10) out += '0';
  out += std::to_string(mag);
  return out;
}

void AppendJsonString(absl::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out->append("\\\"");
        continue;
      case '\\':
        out->append("\\\\");
        continue;
      case '\n':
        out->append("\\n");
        continue;
      case '\r':
        out->append("\\r");
        continue;
      case '\t':
        out->append("\\t");
        continue;
      default:
        break;
    }
    if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 0xF]);
      continue;
    }
    // U+2028 and U+2029 are escaped by Go's encoder.
    if (c == 0xE2 && i + 2 < s.size() &&
        static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
         static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      out->append(static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028"
                                                               : "\\u2029");
      i += 2;
      continue;
    }
    out->push_back(static_cast<char>(c));
  }
  out->push_back('"');
}

void AppendJsonScalar(const Value& v, std::string* out) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      out->append("null");
      return;
    case rapidjson::kTrueType:
      out->append("true");
      return;
    case rapidjson::kFalseType:
      out->append("false");
      return;
    case rapidjson::kStringType:
      AppendJsonString(Str(v), out);
      return;
    case rapidjson::kNumberType:
      if (v.IsInt64()) {
        out->append(std::to_string(v.GetInt64()));
      } else {
        out->append(FormatGoJsonFloat(v.GetDouble()));
      }
      return;
    default:
      return;
  }
}

// Go's json.Marshal of a decoded value, with an explicit stack.
std::string GoJson(const Value& root) {
  struct Frame {
    const Value* container;
    std::vector<const Value::Member*> members;  // objects, sorted
    size_t next = 0;
  };
  std::string out;
  std::vector<Frame> stack;
  const auto open = [&](const Value& v) {
    if (v.IsObject()) {
      Frame f{&v, {}, 0};
      for (const auto& m : v.GetObject()) f.members.push_back(&m);
      std::stable_sort(f.members.begin(), f.members.end(),
                       [](const Value::Member* a, const Value::Member* b) {
                         return Str(a->name) < Str(b->name);
                       });
      // A repeated key keeps its last value, as in a Go map.
      std::vector<const Value::Member*> unique;
      for (size_t i = 0; i < f.members.size(); ++i) {
        if (i + 1 < f.members.size() &&
            Str(f.members[i]->name) == Str(f.members[i + 1]->name)) {
          continue;
        }
        unique.push_back(f.members[i]);
      }
      f.members = std::move(unique);
      out.push_back('{');
      stack.push_back(std::move(f));
    } else if (v.IsArray()) {
      out.push_back('[');
      stack.push_back(Frame{&v, {}, 0});
    } else {
      AppendJsonScalar(v, &out);
    }
  };
  open(root);
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.container->IsObject()) {
      if (f.next == f.members.size()) {
        out.push_back('}');
        stack.pop_back();
        continue;
      }
      if (f.next > 0) out.push_back(',');
      const Value::Member* m = f.members[f.next++];
      AppendJsonString(Str(m->name), &out);
      out.push_back(':');
      open(m->value);  // may invalidate f
    } else {
      if (f.next == f.container->Size()) {
        out.push_back(']');
        stack.pop_back();
        continue;
      }
      if (f.next > 0) out.push_back(',');
      const Value& e =
          f.container->GetArray()[static_cast<rapidjson::SizeType>(f.next++)];
      open(e);
    }
  }
  return out;
}

}  // namespace

std::string FormatGoFloat(double value) {
  if (value == 0) return std::signbit(value) ? "-0" : "0";
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  std::string digits;
  int point;
  ShortestDigits(std::fabs(value), &digits, &point);
  const int exp = point - 1;
  std::string body;
  // %v is 'g' with the shortest precision: exponent form when the exponent
  // is below -4 or at least the precision, which counts as 6 here.
  if (exp < -4 || exp >= 6) {
    body = ExponentNotation(digits, point, /*two_digit_exponent=*/true);
  } else {
    body = FixedNotation(digits, point);
  }
  return value < 0 ? "-" + body : body;
}

std::string FormatGoJsonFloat(double value) {
  if (value == 0) return std::signbit(value) ? "-0" : "0";
  if (!std::isfinite(value)) return "null";
  std::string digits;
  int point;
  const double abs = std::fabs(value);
  ShortestDigits(abs, &digits, &point);
  std::string body;
  if (abs < 1e-6 || abs >= 1e21) {
    body = ExponentNotation(digits, point, /*two_digit_exponent=*/false);
  } else {
    body = FixedNotation(digits, point);
  }
  return value < 0 ? "-" + body : body;
}

absl::StatusOr<JsonPath> JsonPath::Parse(std::string_view text) {
  if (text.size() > kMaxTemplateBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "jsonpath template longer than ", kMaxTemplateBytes, " bytes"));
  }
  auto impl = std::make_shared<Impl>();
  absl::Status s =
      internal::ParseTemplate(ToAbsl(text), &impl->pool, &impl->segments);
  if (!s.ok()) return s;
  return JsonPath(std::move(impl));
}

absl::StatusOr<JsonPath> JsonPath::ParseExpression(std::string_view expr) {
  return Parse(absl::StrCat("{", ToAbsl(expr), "}"));
}

absl::StatusOr<Results> JsonPath::FindResults(
    const rapidjson::Value& data, const EvalOptions& options) const {
  Results results;
  absl::Status s = internal::Evaluate(impl_->segments, data, options, &results);
  if (!s.ok()) return s;
  return results;
}

absl::StatusOr<std::string> JsonPath::Execute(
    const rapidjson::Value& data, const EvalOptions& options) const {
  absl::StatusOr<Results> results = FindResults(data, options);
  if (!results.ok()) return results.status();
  std::string out;
  for (const auto& list : *results) out += PrintResults(list);
  return out;
}

std::string JsonPath::PrintResults(
    absl::Span<const rapidjson::Value* const> values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out.push_back(' ');
    out += PrintValue(*values[i]);
  }
  return out;
}

std::string JsonPath::PrintValue(const rapidjson::Value& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      return "<nil>";
    case rapidjson::kTrueType:
      return "true";
    case rapidjson::kFalseType:
      return "false";
    case rapidjson::kStringType:
      return std::string(Str(value));
    case rapidjson::kNumberType:
      if (value.IsInt64()) return std::to_string(value.GetInt64());
      return FormatGoFloat(value.GetDouble());
    case rapidjson::kObjectType:
    case rapidjson::kArrayType:
      return GoJson(value);
  }
  return "";
}

}  // namespace jsonpath
}  // namespace api
}  // namespace kcr
