#include "api/selector/field_selector.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/selector/internal/quote.h"
#include "base/string_view.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace api {
namespace {

using selector_internal::Quote;

std::string RenderTerm(const FieldRequirement& r) {
  return absl::StrCat(r.field, r.op == FieldOperator::kEquals ? "=" : "!=",
                      EscapeFieldValue(r.value));
}

bool Holds(const FieldRequirement& r, const std::optional<std::string>& have) {
  const bool equal = have.has_value() && *have == r.value;
  return r.op == FieldOperator::kEquals ? equal : !equal;
}

}  // namespace

std::string EscapeFieldValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == ',' || c == '=') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

absl::StatusOr<std::string> UnescapeFieldValue(std::string_view escaped) {
  std::string out;
  out.reserve(escaped.size());
  bool in_escape = false;
  for (char c : escaped) {
    if (in_escape) {
      if (c != '\\' && c != ',' && c != '=') {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid escape sequence: ",
                         Quote(absl::StrCat("\\", std::string(1, c)))));
      }
      out.push_back(c);
      in_escape = false;
      continue;
    }
    if (c == '\\') {
      in_escape = true;
    } else if (c == ',' || c == '=') {
      return absl::InvalidArgumentError(absl::StrCat(
          "unescaped character in value: '", std::string(1, c), "'"));
    } else {
      out.push_back(c);
    }
  }
  if (in_escape) {
    return absl::InvalidArgumentError("invalid escape sequence: \"\\\\\"");
  }
  return out;
}

namespace {

// Whether the dotted `path` names a non-null member of `object`.
bool FieldPresent(const rapidjson::Value& object, std::string_view path) {
  const rapidjson::Value* v = &object;
  for (absl::string_view part : absl::StrSplit(ToAbsl(path), '.')) {
    if (!v->IsObject() ||
        part.size() > std::numeric_limits<rapidjson::SizeType>::max()) {
      return false;
    }
    rapidjson::Value name(rapidjson::StringRef(
        part.data(), static_cast<rapidjson::SizeType>(part.size())));
    auto it = v->FindMember(name);
    if (it == v->MemberEnd()) return false;
    v = &it->value;
  }
  return !v->IsNull();
}

}  // namespace

std::optional<std::string> FieldValueAt(const rapidjson::Value& object,
                                        std::string_view path) {
  const rapidjson::Value* v = &object;
  for (absl::string_view part : absl::StrSplit(ToAbsl(path), '.')) {
    if (!v->IsObject() ||
        part.size() > std::numeric_limits<rapidjson::SizeType>::max()) {
      return std::string();
    }
    rapidjson::Value name(rapidjson::StringRef(
        part.data(), static_cast<rapidjson::SizeType>(part.size())));
    auto it = v->FindMember(name);
    if (it == v->MemberEnd()) return std::string();
    v = &it->value;
  }
  if (v->IsString()) return std::string(v->GetString(), v->GetStringLength());
  if (v->IsNull()) return std::string();
  if (v->IsObject() || v->IsArray()) return std::nullopt;
  // A scalar: Accept does not recurse.
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  if (!v->Accept(writer)) return std::string();  // NaN/Inf cannot be written
  return std::string(buffer.GetString(), buffer.GetSize());
}

FieldSelector::FieldSelector(std::vector<FieldRequirement> requirements)
    : requirements_(std::move(requirements)) {
  std::vector<std::pair<std::string, FieldRequirement>> keyed;
  keyed.reserve(requirements_.size());
  for (FieldRequirement& r : requirements_) {
    std::string term = RenderTerm(r);
    keyed.emplace_back(std::move(term), std::move(r));
  }
  std::sort(keyed.begin(), keyed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < keyed.size(); ++i) {
    requirements_[i] = std::move(keyed[i].second);
  }
}

absl::StatusOr<FieldSelector> FieldSelector::Parse(std::string_view selector) {
  std::vector<FieldRequirement> requirements;
  size_t start = 0;
  bool in_escape = false;
  // Walks one past the end so the last term is handled like the others.
  for (size_t i = 0; i <= selector.size(); ++i) {
    if (i < selector.size()) {
      const char c = selector[i];
      if (in_escape) {
        in_escape = false;
        continue;
      }
      if (c == '\\') {
        in_escape = true;
        continue;
      }
      if (c != ',') continue;
    }
    const std::string_view term = selector.substr(start, i - start);
    const size_t term_pos = start;
    start = i + 1;
    if (term.empty()) continue;
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid field selector: at ", term_pos, " ",
                       Quote(term), ": ", what));
    };
    // The field takes no escapes: the first operator splits the term.
    size_t op_pos = std::string_view::npos;
    size_t op_len = 0;
    FieldRequirement r;
    for (size_t j = 0; j < term.size(); ++j) {
      if (term[j] == '!' && j + 1 < term.size() && term[j + 1] == '=') {
        op_pos = j;
        op_len = 2;
        r.op = FieldOperator::kNotEquals;
        break;
      }
      if (term[j] == '=') {
        op_pos = j;
        op_len = (j + 1 < term.size() && term[j + 1] == '=') ? 2 : 1;
        r.op = FieldOperator::kEquals;
        break;
      }
    }
    if (op_pos == std::string_view::npos) {
      return error("expected '=', '==' or '!='");
    }
    if (op_pos == 0) return error("expected a field name before the operator");
    r.field = std::string(term.substr(0, op_pos));
    absl::StatusOr<std::string> value =
        UnescapeFieldValue(term.substr(op_pos + op_len));
    if (!value.ok()) return error(value.status().message());
    r.value = *std::move(value);
    requirements.push_back(std::move(r));
  }
  return FieldSelector(std::move(requirements));
}

FieldSelector FieldSelector::OneTermEqual(std::string_view field,
                                          std::string_view value) {
  return FieldSelector({FieldRequirement{
      std::string(field), FieldOperator::kEquals, std::string(value)}});
}

FieldSelector FieldSelector::FromSet(
    const absl::flat_hash_map<std::string, std::string>& set) {
  std::vector<FieldRequirement> requirements;
  requirements.reserve(set.size());
  for (const auto& [field, value] : set) {
    requirements.push_back({field, FieldOperator::kEquals, value});
  }
  return FieldSelector(std::move(requirements));
}

FieldSelector FieldSelector::Resolved(
    std::string_view field, std::string_view path,
    std::optional<std::string> if_absent) const {
  FieldSelector out = *this;
  for (FieldRequirement& r : out.requirements_) {
    if (r.field != field) continue;
    r.path = std::string(path);
    r.if_absent = if_absent;
  }
  return out;
}

bool FieldSelector::Matches(const rapidjson::Value& object) const {
  for (const FieldRequirement& r : requirements_) {
    const std::string_view path = r.path.empty() ? r.field : r.path;
    std::optional<std::string> value = FieldValueAt(object, path);
    if (r.if_absent.has_value() && value.has_value() && value->empty() &&
        !FieldPresent(object, path)) {
      value = r.if_absent;
    }
    if (!Holds(r, value)) return false;
  }
  return true;
}

bool FieldSelector::Matches(
    const absl::flat_hash_map<std::string, std::string>& fields) const {
  for (const FieldRequirement& r : requirements_) {
    auto it = fields.find(r.field);
    if (!Holds(r, it == fields.end() ? std::string() : it->second)) {
      return false;
    }
  }
  return true;
}

std::optional<std::string> FieldSelector::RequiresExactMatch(
    std::string_view field) const {
  for (const FieldRequirement& r : requirements_) {
    if (r.field == field && r.op == FieldOperator::kEquals) return r.value;
  }
  return std::nullopt;
}

std::string FieldSelector::ToString() const {
  std::string out;
  for (size_t i = 0; i < requirements_.size(); ++i) {
    if (i > 0) out.push_back(',');
    absl::StrAppend(&out, RenderTerm(requirements_[i]));
  }
  return out;
}

}  // namespace api
}  // namespace kcr
