#include "api/selector/label_selector.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <tuple>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/selector/internal/quote.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace {

using selector_internal::Quote;

constexpr size_t kMaxNameLength = 63;
constexpr size_t kMaxPrefixLength = 253;
constexpr size_t kMaxValueLength = 63;

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? : the shape shared by label names
// and non-empty label values.
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool IsLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// RFC 1123 subdomain: dot-separated labels of [a-z0-9-] that start and end
// with an alphanumeric.
bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxPrefixLength) return false;
  for (absl::string_view label : absl::StrSplit(ToAbsl(s), '.')) {
    if (label.empty() || !IsLowerAlnum(label.front()) ||
        !IsLowerAlnum(label.back())) {
      return false;
    }
    for (char c : label) {
      if (!IsLowerAlnum(c) && c != '-') return false;
    }
  }
  return true;
}

// Go's strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no
// surrounding space, in range.
bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  bool negative = false;
  if (s.front() == '+' || s.front() == '-') {
    negative = s.front() == '-';
    s.remove_prefix(1);
    if (s.empty()) return false;
  }
  uint64_t limit =
      negative ? static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1
               : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (limit - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

// ---- Lexer -----------------------------------------------------------------

enum class Tok {
  kEnd,
  kIdentifier,
  kIn,
  kNotIn,
  kNot,           // !
  kEquals,        // =
  kDoubleEquals,  // ==
  kNotEquals,     // !=
  kGreater,       // >
  kLess,          // <
  kOpenPar,
  kClosePar,
  kComma,
};

struct Token {
  Tok tok;
  std::string_view text;
  size_t pos;
};

bool IsWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool IsSpecial(char c) {
  switch (c) {
    case '=':
    case '!':
    case '(':
    case ')':
    case ',':
    case '>':
    case '<':
      return true;
    default:
      return false;
  }
}

// Splits the input like apimachinery's Lexer: runs of special symbols
// become the longest operator they start with ("==", "!=", or one
// character), everything else up to whitespace or a special symbol is an
// identifier, or the keyword "in" / "notin".
std::vector<Token> Lex(std::string_view s) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (true) {
    while (i < s.size() && IsWhitespace(s[i])) ++i;
    if (i >= s.size()) {
      tokens.push_back({Tok::kEnd, std::string_view(), s.size()});
      return tokens;
    }
    const size_t start = i;
    const char c = s[i];
    if (IsSpecial(c)) {
      const bool twice = i + 1 < s.size() && s[i + 1] == '=';
      Tok t = Tok::kEnd;
      size_t len = 1;
      switch (c) {
        case '=':
          t = twice ? Tok::kDoubleEquals : Tok::kEquals;
          len = twice ? 2 : 1;
          break;
        case '!':
          t = twice ? Tok::kNotEquals : Tok::kNot;
          len = twice ? 2 : 1;
          break;
        case '(':
          t = Tok::kOpenPar;
          break;
        case ')':
          t = Tok::kClosePar;
          break;
        case ',':
          t = Tok::kComma;
          break;
        case '>':
          t = Tok::kGreater;
          break;
        default:  // '<'
          t = Tok::kLess;
          break;
      }
      tokens.push_back({t, s.substr(start, len), start});
      i += len;
      continue;
    }
    while (i < s.size() && !IsWhitespace(s[i]) && !IsSpecial(s[i])) ++i;
    std::string_view text = s.substr(start, i - start);
    Tok t = Tok::kIdentifier;
    if (text == "in") t = Tok::kIn;
    if (text == "notin") t = Tok::kNotIn;
    tokens.push_back({t, text, start});
  }
}

// ---- Parser ----------------------------------------------------------------

class Parser {
 public:
  explicit Parser(std::string_view input) : tokens_(Lex(input)) {}

  absl::StatusOr<std::vector<LabelRequirement>> Parse() {
    std::vector<LabelRequirement> requirements;
    if (Peek().tok == Tok::kEnd) return requirements;
    while (true) {
      const Token& first = Peek();
      if (!IsIdentifier(first) && first.tok != Tok::kNot) {
        return Error(first, "expected '!', identifier or end of string");
      }
      absl::StatusOr<LabelRequirement> r = ParseRequirement();
      if (!r.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "unable to parse requirement: ", r.status().message()));
      }
      requirements.push_back(*std::move(r));
      const Token& next = Next();
      if (next.tok == Tok::kEnd) return requirements;
      if (next.tok != Tok::kComma) {
        return Error(next, "expected ',' or end of string");
      }
      const Token& after = Peek();
      if (!IsIdentifier(after) && after.tok != Tok::kNot) {
        return Error(after, "expected '!' or identifier after ','");
      }
    }
  }

 private:
  // In key and value positions the keywords are ordinary identifiers, so
  // "in in (in)" is a valid selector.
  static bool IsIdentifier(const Token& t) {
    return t.tok == Tok::kIdentifier || t.tok == Tok::kIn ||
           t.tok == Tok::kNotIn;
  }

  const Token& Peek() const { return tokens_[pos_]; }
  // Never moves past the end token.
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (t.tok != Tok::kEnd) ++pos_;
    return t;
  }

  static absl::Status Error(const Token& t, absl::string_view what) {
    if (t.tok == Tok::kEnd) {
      return absl::InvalidArgumentError(
          absl::StrCat("at ", t.pos, " (end of string): ", what));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("at ", t.pos, " ", Quote(t.text), ": ", what));
  }

  absl::StatusOr<LabelRequirement> ParseRequirement() {
    bool negated = false;
    if (Peek().tok == Tok::kNot) {
      negated = true;
      Next();
    }
    const Token& key = Next();
    if (!IsIdentifier(key)) return Error(key, "expected identifier");
    if (absl::Status s = ValidateLabelKey(key.text); !s.ok()) {
      return Error(key, s.message());
    }
    if (negated) {
      return LabelRequirement::Create(key.text, SelectorOperator::kDoesNotExist,
                                      {});
    }
    if (Peek().tok == Tok::kEnd || Peek().tok == Tok::kComma) {
      return LabelRequirement::Create(key.text, SelectorOperator::kExists, {});
    }
    const Token& op_token = Next();
    SelectorOperator op;
    switch (op_token.tok) {
      case Tok::kIn:
        op = SelectorOperator::kIn;
        break;
      case Tok::kNotIn:
        op = SelectorOperator::kNotIn;
        break;
      case Tok::kEquals:
        op = SelectorOperator::kEquals;
        break;
      case Tok::kDoubleEquals:
        op = SelectorOperator::kDoubleEquals;
        break;
      case Tok::kNotEquals:
        op = SelectorOperator::kNotEquals;
        break;
      case Tok::kGreater:
        op = SelectorOperator::kGreaterThan;
        break;
      case Tok::kLess:
        op = SelectorOperator::kLessThan;
        break;
      default:
        return Error(
            op_token,
            "expected one of '!=', '=', '==', '>', '<', 'in', 'notin'");
    }
    std::vector<const Token*> value_tokens;
    std::vector<std::string> values;
    if (op == SelectorOperator::kIn || op == SelectorOperator::kNotIn) {
      const Token& open = Next();
      if (open.tok != Tok::kOpenPar) return Error(open, "expected '('");
      // Items between commas may be empty: "()" and "(a,,b)" hold "".
      while (true) {
        if (IsIdentifier(Peek())) {
          value_tokens.push_back(&Next());
          values.emplace_back(value_tokens.back()->text);
        } else {
          values.emplace_back();
        }
        const Token& sep = Next();
        if (sep.tok == Tok::kClosePar) break;
        if (sep.tok != Tok::kComma) {
          return Error(sep, "expected ',', ')' or identifier");
        }
      }
    } else if (Peek().tok == Tok::kEnd || Peek().tok == Tok::kComma) {
      values.emplace_back();
    } else {
      const Token& value = Next();
      if (!IsIdentifier(value)) return Error(value, "expected identifier");
      value_tokens.push_back(&value);
      values.emplace_back(value.text);
    }
    // Point an invalid value at its own token.
    for (const Token* t : value_tokens) {
      if (absl::Status s = ValidateLabelValue(t->text); !s.ok()) {
        return Error(*t, s.message());
      }
    }
    if (op == SelectorOperator::kGreaterThan ||
        op == SelectorOperator::kLessThan) {
      int64_t unused;
      if (!ParseInt64(values[0], &unused)) {
        return Error(value_tokens.empty() ? op_token : *value_tokens[0],
                     "for '>', '<' operators, the value must be an integer");
      }
    }
    return LabelRequirement::Create(key.text, op, std::move(values));
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

bool RequirementLess(const LabelRequirement& a, const LabelRequirement& b) {
  if (a.key() != b.key()) return a.key() < b.key();
  std::string_view oa = SelectorOperatorName(a.op());
  std::string_view ob = SelectorOperatorName(b.op());
  if (oa != ob) return oa < ob;
  return a.values() < b.values();
}

absl::Status FieldError(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid label selector: ", field, ": ", what));
}

}  // namespace

std::optional<std::string_view> MapLabels::Get(std::string_view key) const {
  auto it = map_.find(ToAbsl(key));
  if (it == map_.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::optional<std::string_view> JsonLabels::Get(std::string_view key) const {
  if (labels_ == nullptr || !labels_->IsObject()) return std::nullopt;
  if (key.size() > std::numeric_limits<rapidjson::SizeType>::max()) {
    return std::nullopt;
  }
  rapidjson::Value name(rapidjson::StringRef(
      key.data(), static_cast<rapidjson::SizeType>(key.size())));
  auto it = labels_->FindMember(name);
  if (it == labels_->MemberEnd() || !it->value.IsString()) return std::nullopt;
  return std::string_view(it->value.GetString(), it->value.GetStringLength());
}

std::string_view SelectorOperatorName(SelectorOperator op) {
  switch (op) {
    case SelectorOperator::kDoesNotExist:
      return "!";
    case SelectorOperator::kEquals:
      return "=";
    case SelectorOperator::kDoubleEquals:
      return "==";
    case SelectorOperator::kIn:
      return "in";
    case SelectorOperator::kNotEquals:
      return "!=";
    case SelectorOperator::kNotIn:
      return "notin";
    case SelectorOperator::kExists:
      return "exists";
    case SelectorOperator::kGreaterThan:
      return "gt";
    case SelectorOperator::kLessThan:
      return "lt";
  }
  return "";
}

absl::Status ValidateLabelKey(std::string_view key) {
  std::string_view name = key;
  const size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (name.find('/') != std::string_view::npos) {
      return absl::InvalidArgumentError(
          "invalid label key: a qualified name must consist of an optional "
          "DNS subdomain prefix and '/' followed by a name");
    }
    if (prefix.empty()) {
      return absl::InvalidArgumentError(
          "invalid label key: prefix part must be non-empty");
    }
    if (prefix.size() > kMaxPrefixLength) {
      return absl::InvalidArgumentError(
          "invalid label key: prefix part must be no more than 253 "
          "characters");
    }
    if (!IsDns1123Subdomain(prefix)) {
      return absl::InvalidArgumentError(
          "invalid label key: prefix part must be a lowercase RFC 1123 "
          "subdomain");
    }
  }
  if (name.empty()) {
    return absl::InvalidArgumentError(
        "invalid label key: name part must be non-empty");
  }
  if (name.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(
        "invalid label key: name part must be no more than 63 characters");
  }
  if (!IsQualifiedNamePart(name)) {
    return absl::InvalidArgumentError(
        "invalid label key: name part must consist of alphanumeric "
        "characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character");
  }
  return absl::OkStatus();
}

absl::Status ValidateLabelValue(std::string_view value) {
  if (value.empty()) return absl::OkStatus();
  if (value.size() > kMaxValueLength) {
    return absl::InvalidArgumentError(
        "invalid label value: must be no more than 63 characters");
  }
  if (!IsQualifiedNamePart(value)) {
    return absl::InvalidArgumentError(
        "invalid label value: must be empty or consist of alphanumeric "
        "characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character");
  }
  return absl::OkStatus();
}

absl::StatusOr<LabelRequirement> LabelRequirement::Create(
    std::string_view key, SelectorOperator op,
    std::vector<std::string> values) {
  if (absl::Status s = ValidateLabelKey(key); !s.ok()) return s;
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  switch (op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn:
      if (values.empty()) {
        return absl::InvalidArgumentError(
            "for 'in', 'notin' operators, values set can't be empty");
      }
      break;
    case SelectorOperator::kEquals:
    case SelectorOperator::kDoubleEquals:
    case SelectorOperator::kNotEquals:
      if (values.size() != 1) {
        return absl::InvalidArgumentError(
            "exact-match compatibility requires one single value");
      }
      break;
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      if (!values.empty()) {
        return absl::InvalidArgumentError(
            "values set must be empty for exists and does not exist");
      }
      break;
    case SelectorOperator::kGreaterThan:
    case SelectorOperator::kLessThan: {
      int64_t unused;
      if (values.size() != 1 || !ParseInt64(values[0], &unused)) {
        return absl::InvalidArgumentError(
            "for 'gt', 'lt' operators, exactly one integer value is required");
      }
      break;
    }
  }
  for (const std::string& v : values) {
    if (absl::Status s = ValidateLabelValue(v); !s.ok()) return s;
  }
  return LabelRequirement(std::string(key), op, std::move(values));
}

bool LabelRequirement::Matches(const Labels& labels) const {
  const std::optional<std::string_view> value = labels.Get(key_);
  auto has_value = [&] {
    return std::binary_search(values_.begin(), values_.end(), *value);
  };
  switch (op_) {
    case SelectorOperator::kIn:
    case SelectorOperator::kEquals:
    case SelectorOperator::kDoubleEquals:
      return value.has_value() && has_value();
    case SelectorOperator::kNotIn:
    case SelectorOperator::kNotEquals:
      return !value.has_value() || !has_value();
    case SelectorOperator::kExists:
      return value.has_value();
    case SelectorOperator::kDoesNotExist:
      return !value.has_value();
    case SelectorOperator::kGreaterThan:
    case SelectorOperator::kLessThan: {
      if (!value.has_value() || values_.size() != 1) return false;
      int64_t have, want;
      if (!ParseInt64(*value, &have) || !ParseInt64(values_[0], &want)) {
        return false;
      }
      return op_ == SelectorOperator::kGreaterThan ? have > want : have < want;
    }
  }
  return false;
}

std::string LabelRequirement::ToString() const {
  switch (op_) {
    case SelectorOperator::kDoesNotExist:
      return absl::StrCat("!", key_);
    case SelectorOperator::kExists:
      return key_;
    case SelectorOperator::kIn:
      return absl::StrCat(key_, " in (", absl::StrJoin(values_, ","), ")");
    case SelectorOperator::kNotIn:
      return absl::StrCat(key_, " notin (", absl::StrJoin(values_, ","), ")");
    case SelectorOperator::kEquals:
      return absl::StrCat(key_, "=", values_[0]);
    case SelectorOperator::kDoubleEquals:
      return absl::StrCat(key_, "==", values_[0]);
    case SelectorOperator::kNotEquals:
      return absl::StrCat(key_, "!=", values_[0]);
    case SelectorOperator::kGreaterThan:
      return absl::StrCat(key_, ">", values_[0]);
    case SelectorOperator::kLessThan:
      return absl::StrCat(key_, "<", values_[0]);
  }
  return key_;
}

LabelSelector::LabelSelector(std::vector<LabelRequirement> requirements)
    : requirements_(std::move(requirements)) {
  std::sort(requirements_.begin(), requirements_.end(), RequirementLess);
}

absl::StatusOr<LabelSelector> LabelSelector::Parse(std::string_view selector) {
  Parser parser(selector);
  absl::StatusOr<std::vector<LabelRequirement>> requirements = parser.Parse();
  if (!requirements.ok()) return requirements.status();
  return LabelSelector(*std::move(requirements));
}

absl::StatusOr<LabelSelector> LabelSelector::FromLabelSelector(
    const rapidjson::Value& label_selector) {
  if (label_selector.IsNull()) return Nothing();
  if (!label_selector.IsObject()) {
    return FieldError("selector", "must be an object");
  }
  std::vector<LabelRequirement> requirements;
  auto match_labels = label_selector.FindMember("matchLabels");
  if (match_labels != label_selector.MemberEnd() &&
      !match_labels->value.IsNull()) {
    if (!match_labels->value.IsObject()) {
      return FieldError("matchLabels", "must be an object of strings");
    }
    for (const auto& m : match_labels->value.GetObject()) {
      std::string_view key(m.name.GetString(), m.name.GetStringLength());
      const std::string field = absl::StrCat("matchLabels[", ToAbsl(key), "]");
      if (!m.value.IsString()) return FieldError(field, "must be a string");
      absl::StatusOr<LabelRequirement> r = LabelRequirement::Create(
          key, SelectorOperator::kEquals,
          {std::string(m.value.GetString(), m.value.GetStringLength())});
      if (!r.ok()) return FieldError(field, r.status().message());
      requirements.push_back(*std::move(r));
    }
  }
  auto match_expressions = label_selector.FindMember("matchExpressions");
  if (match_expressions != label_selector.MemberEnd() &&
      !match_expressions->value.IsNull()) {
    if (!match_expressions->value.IsArray()) {
      return FieldError("matchExpressions", "must be an array");
    }
    rapidjson::SizeType i = 0;
    for (const auto& e : match_expressions->value.GetArray()) {
      const std::string field = absl::StrCat("matchExpressions[", i++, "]");
      if (!e.IsObject()) return FieldError(field, "must be an object");
      auto key = e.FindMember("key");
      if (key == e.MemberEnd() || !key->value.IsString()) {
        return FieldError(field, "key must be a string");
      }
      auto op_member = e.FindMember("operator");
      if (op_member == e.MemberEnd() || !op_member->value.IsString()) {
        return FieldError(field, "operator must be a string");
      }
      std::string_view op_name(op_member->value.GetString(),
                               op_member->value.GetStringLength());
      SelectorOperator op;
      if (op_name == "In") {
        op = SelectorOperator::kIn;
      } else if (op_name == "NotIn") {
        op = SelectorOperator::kNotIn;
      } else if (op_name == "Exists") {
        op = SelectorOperator::kExists;
      } else if (op_name == "DoesNotExist") {
        op = SelectorOperator::kDoesNotExist;
      } else {
        return FieldError(field, absl::StrCat(Quote(op_name),
                                              " is not a valid label selector "
                                              "operator"));
      }
      std::vector<std::string> values;
      auto values_member = e.FindMember("values");
      if (values_member != e.MemberEnd() && !values_member->value.IsNull()) {
        if (!values_member->value.IsArray()) {
          return FieldError(field, "values must be an array of strings");
        }
        for (const auto& v : values_member->value.GetArray()) {
          if (!v.IsString()) {
            return FieldError(field, "values must be an array of strings");
          }
          values.emplace_back(v.GetString(), v.GetStringLength());
        }
      }
      absl::StatusOr<LabelRequirement> r = LabelRequirement::Create(
          std::string_view(key->value.GetString(),
                           key->value.GetStringLength()),
          op, std::move(values));
      if (!r.ok()) return FieldError(field, r.status().message());
      requirements.push_back(*std::move(r));
    }
  }
  return LabelSelector(std::move(requirements));
}

LabelSelector LabelSelector::SelectorFromSet(const LabelMap& set) {
  std::vector<LabelRequirement> requirements;
  requirements.reserve(set.size());
  for (const auto& [key, value] : set) {
    requirements.push_back(
        LabelRequirement(key, SelectorOperator::kEquals, {value}));
  }
  return LabelSelector(std::move(requirements));
}

absl::StatusOr<LabelSelector> LabelSelector::ValidatedSelectorFromSet(
    const LabelMap& set) {
  std::vector<LabelRequirement> requirements;
  requirements.reserve(set.size());
  for (const auto& [key, value] : set) {
    absl::StatusOr<LabelRequirement> r =
        LabelRequirement::Create(key, SelectorOperator::kEquals, {value});
    if (!r.ok()) {
      return FieldError(absl::StrCat("[", key, "]"), r.status().message());
    }
    requirements.push_back(*std::move(r));
  }
  return LabelSelector(std::move(requirements));
}

LabelSelector LabelSelector::Nothing() {
  LabelSelector s;
  s.nothing_ = true;
  return s;
}

LabelSelector LabelSelector::Add(LabelRequirement requirement) const {
  std::vector<LabelRequirement> requirements = requirements_;
  requirements.push_back(std::move(requirement));
  LabelSelector s(std::move(requirements));
  s.nothing_ = nothing_;
  return s;
}

bool LabelSelector::Matches(const Labels& labels) const {
  if (nothing_) return false;
  for (const LabelRequirement& r : requirements_) {
    if (!r.Matches(labels)) return false;
  }
  return true;
}

bool LabelSelector::Matches(const LabelMap& labels) const {
  return Matches(MapLabels(labels));
}

bool LabelSelector::Matches(const rapidjson::Value* labels) const {
  return Matches(JsonLabels(labels));
}

std::optional<std::string> LabelSelector::RequiresExactMatch(
    std::string_view key) const {
  for (const LabelRequirement& r : requirements_) {
    if (r.key() != key) continue;
    switch (r.op()) {
      case SelectorOperator::kEquals:
      case SelectorOperator::kDoubleEquals:
      case SelectorOperator::kIn:
        if (r.values().size() == 1) return r.values()[0];
        break;
      default:
        break;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::string LabelSelector::ToString() const {
  std::string out;
  for (size_t i = 0; i < requirements_.size(); ++i) {
    if (i > 0) out.push_back(',');
    absl::StrAppend(&out, requirements_[i].ToString());
  }
  return out;
}

}  // namespace api
}  // namespace kcr
