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
#include "runtime/base/string_view.h"

namespace kcr {
namespace api {
namespace jsonpath {
namespace {

using Value = rapidjson::Value;
using ValueList = std::vector<const Value*>;

enum class NodeType {
  kText,  // a quoted literal; also the literal kinds below
  kInt,
  kFloat,
  kBool,
  kField,
  kArray,
  kFilter,
  kWildcard,
  kRecursive,
  kUnion,
};

struct SliceParam {
  bool known = false;
  int64_t value = 0;
  bool derived = false;
};

struct Node;
using NodeList = std::vector<Node>;

struct Node {
  NodeType type = NodeType::kText;
  // kText, kInt, kFloat, kBool: the literal (owned by Impl).
  const Value* literal = nullptr;
  // kField: the unescaped name ("" is the current value).
  std::string name;
  // kArray.
  SliceParam params[3];
  // kUnion: one list per member; kFilter: left in lists[0], right in
  // lists[1] (empty for an existence test).
  std::vector<NodeList> lists;
  std::string op;  // kFilter: "==", "!=", "<", ">", "<=", ">=", "exists"
};

// One piece of a template.
struct Segment {
  enum Kind { kText, kAction, kRange } kind = kText;
  const Value* text = nullptr;  // kText
  NodeList expr;                // kAction, kRange
  std::vector<Segment> body;    // kRange
};

// Owns the literals that nodes point to.
class LiteralPool {
 public:
  const Value* String(absl::string_view s) {
    if (s.empty()) s = absl::string_view("", 0);  // never a null pointer
    values_.emplace_back(s.data(), static_cast<rapidjson::SizeType>(s.size()),
                         allocator_);
    return &values_.back();
  }
  const Value* Int(int64_t v) {
    values_.emplace_back(v);
    return &values_.back();
  }
  const Value* Float(double v) {
    values_.emplace_back(v);
    return &values_.back();
  }
  const Value* Bool(bool v) {
    values_.emplace_back(v);
    return &values_.back();
  }

 private:
  rapidjson::MemoryPoolAllocator<> allocator_;
  // A deque keeps addresses stable as it grows.
  std::deque<Value> values_;
};

absl::Status SyntaxError(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

// ---------------------------------------------------------------------------
// Parsing.

constexpr int kEof = -1;

bool IsSpace(int r) { return r == ' ' || r == '\t'; }
bool IsEndOfLine(int r) { return r == '\r' || r == '\n'; }
bool IsDigit(int r) { return r >= '0' && r <= '9'; }
// Any non-ASCII byte counts as a letter, as most runes outside ASCII that
// appear in names are letters to Go's unicode.IsLetter.
bool IsAlphaNumeric(int r) {
  return r == '_' || IsDigit(r) || (r >= 'a' && r <= 'z') ||
         (r >= 'A' && r <= 'Z') || r >= 0x80;
}
bool IsTerminator(int r) {
  if (IsSpace(r) || IsEndOfLine(r)) return true;
  switch (r) {
    case kEof:
    case '.':
    case ',':
    case '[':
    case ']':
    case '$':
    case '@':
    case '{':
    case '}':
      return true;
  }
  return false;
}

std::string DescribeChar(int r) {
  if (r >= 0x20 && r < 0x7f) {
    return absl::StrFormat("U+%04X '%c'", r, r);
  }
  return absl::StrFormat("U+%04X", r);
}

// Strict decimal int64 parse (optional sign).
bool ParseInt64(absl::string_view s, int64_t* out) {
  if (s.empty()) return false;
  std::string text(s);
  size_t i = (text[0] == '+' || text[0] == '-') ? 1 : 0;
  if (i == text.size()) return false;
  for (size_t j = i; j < text.size(); ++j) {
    if (!IsDigit(text[j])) return false;
  }
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || end != text.c_str() + text.size()) return false;
  *out = v;
  return true;
}

bool ParseFloat(absl::string_view s, double* out) {
  if (s.empty()) return false;
  std::string text(s);
  bool digit = false;
  for (char c : text) {
    if (IsDigit(c)) digit = true;
  }
  if (!digit) return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

// Go's strconv.Unquote for a string quoted with ' or ".
absl::StatusOr<std::string> Unquote(absl::string_view quoted) {
  const auto error = [&] {
    return SyntaxError(
        absl::StrCat("unquote string ", quoted, " error invalid syntax"));
  };
  if (quoted.size() < 2) return error();
  const char quote = quoted.front();
  if (quoted.back() != quote || (quote != '"' && quote != '\'')) {
    return error();
  }
  absl::string_view s = quoted.substr(1, quoted.size() - 2);
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == quote) return error();
    if (c != '\\') {
      out.push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= s.size()) return error();
    char e = s[i + 1];
    i += 2;
    switch (e) {
      case 'a':
        out.push_back('\a');
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'v':
        out.push_back('\v');
        break;
      case '\\':
        out.push_back('\\');
        break;
      case '\'':
      case '"':
        if (e != quote) return error();
        out.push_back(e);
        break;
      case 'x':
      case 'u':
      case 'U': {
        const size_t n = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
        if (i + n > s.size()) return error();
        uint32_t v = 0;
        for (size_t k = 0; k < n; ++k) {
          char h = s[i + k];
          int d;
          if (h >= '0' && h <= '9') {
            d = h - '0';
          } else if (h >= 'a' && h <= 'f') {
            d = h - 'a' + 10;
          } else if (h >= 'A' && h <= 'F') {
            d = h - 'A' + 10;
          } else {
            return error();
          }
          v = v * 16 + static_cast<uint32_t>(d);
        }
        i += n;
        if (e == 'x') {
          out.push_back(static_cast<char>(v));
          break;
        }
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return error();
        // UTF-8 encode.
        if (v < 0x80) {
          out.push_back(static_cast<char>(v));
        } else if (v < 0x800) {
          out.push_back(static_cast<char>(0xC0 | (v >> 6)));
          out.push_back(static_cast<char>(0x80 | (v & 0x3F)));
        } else if (v < 0x10000) {
          out.push_back(static_cast<char>(0xE0 | (v >> 12)));
          out.push_back(static_cast<char>(0x80 | ((v >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (v & 0x3F)));
        } else {
          out.push_back(static_cast<char>(0xF0 | (v >> 18)));
          out.push_back(static_cast<char>(0x80 | ((v >> 12) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | ((v >> 6) & 0x3F)));
          out.push_back(static_cast<char>(0x80 | (v & 0x3F)));
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          if (i + 2 > s.size()) return error();
          uint32_t v = static_cast<uint32_t>(e - '0');
          for (size_t k = 0; k < 2; ++k) {
            char o = s[i + k];
            if (o < '0' || o > '7') return error();
            v = v * 8 + static_cast<uint32_t>(o - '0');
          }
          if (v > 255) return error();
          i += 2;
          out.push_back(static_cast<char>(v));
          break;
        }
        return error();
    }
  }
  return out;
}

// Parses the inside of one action: everything after "{" up to and including
// the matching "}". Mirrors client-go's parseInsideAction loop.
class ActionParser {
 public:
  ActionParser(absl::string_view input, size_t pos, LiteralPool* pool)
      : input_(input), pos_(pos), pool_(pool) {}

  // Parses nodes into `out` until "}" (consumed). Returns the position after
  // it.
  absl::StatusOr<size_t> Parse(NodeList* out) {
    while (true) {
      absl::string_view rest = input_.substr(pos_);
      if (absl::StartsWith(rest, "}")) {
        return pos_ + 1;
      }
      if (absl::StartsWith(rest, "[?(")) {
        absl::Status s = ParseFilter(out);
        if (!s.ok()) return s;
        continue;
      }
      if (absl::StartsWith(rest, "..")) {
        if (!out->empty() && out->back().type == NodeType::kRecursive) {
          return SyntaxError("invalid multiple recursive descent");
        }
        pos_ += 2;
        Node node;
        node.type = NodeType::kRecursive;
        out->push_back(std::move(node));
        if (IsAlphaNumeric(Peek())) {
          absl::Status s = ParseField(out);
          if (!s.ok()) return s;
        }
        continue;
      }
      const int r = Next();
      if (r == kEof || IsEndOfLine(r)) {
        return SyntaxError("unclosed action");
      }
      absl::Status s;
      if (r == ' ' || r == '@' || r == '$') {
        continue;
      } else if (r == '[') {
        s = ParseArray(out);
      } else if (r == '"' || r == '\'') {
        s = ParseQuote(out, static_cast<char>(r));
      } else if (r == '.') {
        s = ParseField(out);
      } else if (r == '+' || r == '-' || IsDigit(r)) {
        --pos_;
        s = ParseNumber(out);
      } else if (IsAlphaNumeric(r)) {
        --pos_;
        s = ParseIdentifier(out);
      } else {
        return SyntaxError(absl::StrCat("unrecognized character in action: ",
                                        DescribeChar(r)));
      }
      if (!s.ok()) return s;
    }
  }

  // Identifiers found (range / end); any other is an error in the caller.
  const std::vector<std::pair<size_t, std::string>>& identifiers() const {
    return identifiers_;
  }

 private:
  int Next() {
    if (pos_ >= input_.size()) return kEof;
    return static_cast<unsigned char>(input_[pos_++]);
  }
  int Peek() const {
    if (pos_ >= input_.size()) return kEof;
    return static_cast<unsigned char>(input_[pos_]);
  }

  absl::Status ParseField(NodeList* out) {
    const size_t start = pos_;
    while (true) {
      int r = Next();
      if (r == '\\') {
        Next();
        continue;
      }
      if (IsTerminator(r)) {
        if (r != kEof) --pos_;
        break;
      }
    }
    std::string value(input_.substr(start, pos_ - start));
    Node node;
    if (value == "*") {
      node.type = NodeType::kWildcard;
    } else {
      value.erase(std::remove(value.begin(), value.end(), '\\'), value.end());
      node.type = NodeType::kField;
      node.name = std::move(value);
    }
    out->push_back(std::move(node));
    return absl::OkStatus();
  }

  absl::Status ParseNumber(NodeList* out) {
    const size_t start = pos_;
    int r = Peek();
    if (r == '+' || r == '-') Next();
    while (true) {
      r = Next();
      if (r != '.' && !IsDigit(r)) {
        if (r != kEof) --pos_;
        break;
      }
    }
    absl::string_view text = input_.substr(start, pos_ - start);
    Node node;
    int64_t i;
    double d;
    if (ParseInt64(text, &i)) {
      node.type = NodeType::kInt;
      node.literal = pool_->Int(i);
    } else if (ParseFloat(text, &d)) {
      node.type = NodeType::kFloat;
      node.literal = pool_->Float(d);
    } else {
      return SyntaxError(absl::StrCat("cannot parse number ", text));
    }
    out->push_back(std::move(node));
    return absl::OkStatus();
  }

  absl::Status ParseIdentifier(NodeList* out) {
    const size_t start = pos_;
    while (true) {
      int r = Next();
      if (IsTerminator(r)) {
        if (r != kEof) --pos_;
        break;
      }
    }
    std::string value(input_.substr(start, pos_ - start));
    if (value == "true" || value == "false") {
      Node node;
      node.type = NodeType::kBool;
      node.literal = pool_->Bool(value == "true");
      out->push_back(std::move(node));
    } else {
      identifiers_.emplace_back(out->size(), std::move(value));
    }
    return absl::OkStatus();
  }

  absl::Status ParseQuote(NodeList* out, char end) {
    const size_t start = pos_ - 1;
    while (true) {
      int r = Next();
      if (r == kEof || r == '\n') {
        return SyntaxError("unterminated quoted string");
      }
      if (r == end && input_[pos_ - 2] != '\\') break;
    }
    absl::StatusOr<std::string> s = Unquote(input_.substr(start, pos_ - start));
    if (!s.ok()) return s.status();
    Node node;
    node.type = NodeType::kText;
    node.literal = pool_->String(*s);
    out->push_back(std::move(node));
    return absl::OkStatus();
  }

  // Parses `text` as the nodes of one action.
  absl::StatusOr<NodeList> SubAction(absl::string_view text) {
    std::string wrapped = absl::StrCat(text, "}");
    ActionParser sub(wrapped, 0, pool_);
    NodeList nodes;
    absl::StatusOr<size_t> end = sub.Parse(&nodes);
    if (!end.ok()) return end.status();
    if (!sub.identifiers().empty()) {
      return SyntaxError(absl::StrCat("unrecognized identifier ",
                                      sub.identifiers().front().second));
    }
    if (*end != wrapped.size()) {
      // Text after a "}" inside brackets, e.g. "[a}b]".
      return SyntaxError(absl::StrCat("invalid array index ", text));
    }
    return nodes;
  }

  absl::Status ParseArray(NodeList* out) {
    const size_t start = pos_;  // just after '['
    while (true) {
      int r = Next();
      if (r == kEof || r == '\n') return SyntaxError("unterminated array");
      if (r == ']') break;
    }
    std::string text(input_.substr(start, pos_ - 1 - start));
    if (text == "*") text = ":";

    std::vector<std::string> parts = absl::StrSplit(text, ',');
    if (parts.size() > 1) {
      Node node;
      node.type = NodeType::kUnion;
      for (const std::string& part : parts) {
        absl::StatusOr<NodeList> list =
            SubAction(absl::StrCat("[", absl::StripAsciiWhitespace(part), "]"));
        if (!list.ok()) return list.status();
        node.lists.push_back(std::move(*list));
      }
      out->push_back(std::move(node));
      return absl::OkStatus();
    }

    if (text.size() >= 2 && text.front() == '\'' && text.back() == '\'' &&
        text.find('\'', 1) == text.size() - 1) {
      Node node;
      node.type = NodeType::kField;
      node.name = text.substr(1, text.size() - 2);
      out->push_back(std::move(node));
      return absl::OkStatus();
    }

    // Slice: ^(-?\d*)(:-?\d*)?(:-?\d*)?$
    std::vector<std::string> pieces = absl::StrSplit(text, ':');
    bool valid = pieces.size() <= 3;
    for (size_t i = 0; valid && i < pieces.size(); ++i) {
      absl::string_view p = pieces[i];
      if (absl::StartsWith(p, "-")) p.remove_prefix(1);
      for (char c : p) {
        if (!IsDigit(c)) valid = false;
      }
    }
    if (!valid) return SyntaxError(absl::StrCat("invalid array index ", text));
    Node node;
    node.type = NodeType::kArray;
    for (size_t i = 0; i < 3; ++i) {
      SliceParam& param = node.params[i];
      const bool present = i < pieces.size();
      if (present && !pieces[i].empty()) {
        int64_t v;
        if (!ParseInt64(pieces[i], &v) ||
            std::llabs(v) > std::numeric_limits<int32_t>::max()) {
          return SyntaxError(
              absl::StrCat("array index ", pieces[i], " is not a number"));
        }
        param.known = true;
        param.value = v;
      } else if (i == 1 && !present) {
        // "[n]": the end is derived from the start.
        param.known = true;
        param.value = node.params[0].value + 1;
        param.derived = true;
      } else {
        param.known = false;
        param.value = 0;
      }
    }
    out->push_back(std::move(node));
    return absl::OkStatus();
  }

  absl::Status ParseFilter(NodeList* out) {
    pos_ += 3;  // "[?("
    const size_t start = pos_;
    bool begin = false;
    bool end = false;
    char pair = 0;
    while (true) {
      int r = Next();
      if (r == kEof || r == '\n') return SyntaxError("unterminated filter");
      if (r == '"' || r == '\'') {
        if (!begin) {
          begin = true;
          pair = static_cast<char>(r);
          continue;
        }
        if (input_[pos_ - 2] != '\\' && r == pair) end = true;
      } else if (r == ')') {
        if (begin == end) break;
      }
    }
    if (Next() != ']') return SyntaxError("unclosed array expect ]");
    absl::string_view text = input_.substr(start, pos_ - 2 - start);

    // ^([^!<>=]+)([!<>=]+)(.+?)$
    const auto is_op = [](char c) {
      return c == '!' || c == '<' || c == '>' || c == '=';
    };
    size_t i = 0;
    while (i < text.size() && !is_op(text[i])) ++i;
    size_t j = i;
    while (j < text.size() && is_op(text[j])) ++j;
    Node node;
    node.type = NodeType::kFilter;
    if (i == 0 || i == text.size() || j == text.size()) {
      absl::StatusOr<NodeList> left = SubAction(text);
      if (!left.ok()) return left.status();
      node.op = "exists";
      node.lists.push_back(std::move(*left));
      node.lists.emplace_back();
    } else {
      std::string op(text.substr(i, j - i));
      if (op != "==" && op != "!=" && op != "<" && op != ">" && op != "<=" &&
          op != ">=") {
        return SyntaxError(absl::StrCat("unrecognized filter operator ", op));
      }
      absl::StatusOr<NodeList> left = SubAction(text.substr(0, i));
      if (!left.ok()) return left.status();
      absl::StatusOr<NodeList> right = SubAction(text.substr(j));
      if (!right.ok()) return right.status();
      node.op = std::move(op);
      node.lists.push_back(std::move(*left));
      node.lists.push_back(std::move(*right));
    }
    out->push_back(std::move(node));
    return absl::OkStatus();
  }

  absl::string_view input_;
  size_t pos_;
  LiteralPool* pool_;
  std::vector<std::pair<size_t, std::string>> identifiers_;
};

}  // namespace

struct JsonPath::Impl {
  LiteralPool pool;
  std::vector<Segment> segments;
};

namespace {

// Parses a whole template into segments, nesting range bodies.
absl::Status ParseTemplate(absl::string_view input, LiteralPool* pool,
                           std::vector<Segment>* top) {
  // The segment lists being filled: top, then each open range's body.
  std::vector<std::vector<Segment>*> stack = {top};
  size_t pos = 0;
  while (pos < input.size()) {
    size_t brace = input.find('{', pos);
    if (brace == absl::string_view::npos) brace = input.size();
    if (brace > pos) {
      Segment text;
      text.kind = Segment::kText;
      text.text = pool->String(input.substr(pos, brace - pos));
      stack.back()->push_back(std::move(text));
    }
    if (brace == input.size()) break;

    NodeList nodes;
    ActionParser parser(input, brace + 1, pool);
    absl::StatusOr<size_t> next = parser.Parse(&nodes);
    if (!next.ok()) return next.status();
    pos = *next;

    const auto& ids = parser.identifiers();
    if (ids.size() == 1 && ids[0].first == 0 && ids[0].second == "range") {
      if (static_cast<int>(stack.size()) > kMaxRangeDepth) {
        return SyntaxError(
            absl::StrCat("ranges nested deeper than ", kMaxRangeDepth));
      }
      Segment range;
      range.kind = Segment::kRange;
      range.expr = std::move(nodes);
      stack.back()->push_back(std::move(range));
      stack.push_back(&stack.back()->back().body);
      continue;
    }
    if (ids.size() == 1 && ids[0].second == "end" && nodes.empty()) {
      if (stack.size() == 1) return SyntaxError("not in range, nothing to end");
      stack.pop_back();
      continue;
    }
    if (!ids.empty()) {
      return SyntaxError(
          absl::StrCat("unrecognized identifier ", ids.front().second));
    }
    Segment action;
    action.kind = Segment::kAction;
    action.expr = std::move(nodes);
    stack.back()->push_back(std::move(action));
  }
  // As in client-go, a range without {end} runs to the end of the template.
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Evaluation.

// Go's type name of a JSON value decoded into interface{}, for messages.
const char* GoTypeName(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kObjectType:
      return "map[string]interface {}";
    case rapidjson::kArrayType:
      return "[]interface {}";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kTrueType:
    case rapidjson::kFalseType:
      return "bool";
    case rapidjson::kNumberType:
      return v.IsInt64() ? "int64" : "float64";
    default:
      return "<nil>";
  }
}

absl::string_view Str(const Value& v) {
  return absl::string_view(v.GetString(), v.GetStringLength());
}

// An object's member values in Go's sorted-key order. For a repeated key
// the last one wins, as when Go decodes into a map.
std::vector<const Value*> SortedMemberValues(const Value& object) {
  std::vector<const Value::Member*> members;
  members.reserve(object.MemberCount());
  for (const auto& m : object.GetObject()) members.push_back(&m);
  std::stable_sort(members.begin(), members.end(),
                   [](const Value::Member* a, const Value::Member* b) {
                     return Str(a->name) < Str(b->name);
                   });
  std::vector<const Value*> values;
  values.reserve(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    if (i + 1 < members.size() &&
        Str(members[i]->name) == Str(members[i + 1]->name)) {
      continue;
    }
    values.push_back(&members[i]->value);
  }
  return values;
}

const Value* FindLastMember(const Value& object, absl::string_view name) {
  const Value* found = nullptr;
  for (const auto& m : object.GetObject()) {
    if (Str(m.name) == name) found = &m.value;
  }
  return found;
}

// Children of a value as client-go iterates them; false when not iterable.
bool Children(const Value& v, std::vector<const Value*>* out) {
  out->clear();
  if (v.IsArray()) {
    for (const auto& e : v.GetArray()) out->push_back(&e);
    return true;
  }
  if (v.IsObject()) {
    *out = SortedMemberValues(v);
    return true;
  }
  return false;
}

class Evaluator {
 public:
  explicit Evaluator(const EvalOptions& options) : options_(options) {}

  absl::Status Run(const std::vector<Segment>& segments, const Value& root,
                   Results* results) {
    for (const Segment& segment : segments) {
      switch (segment.kind) {
        case Segment::kText:
          results->push_back({segment.text});
          break;
        case Segment::kAction: {
          ValueList values;
          absl::Status s = EvalList({&root}, segment.expr, &values);
          if (!s.ok()) return s;
          results->push_back(std::move(values));
          break;
        }
        case Segment::kRange: {
          ValueList values;
          absl::Status s = EvalList({&root}, segment.expr, &values);
          if (!s.ok()) return s;
          for (const Value* v : values) {
            s = Run(segment.body, *v, results);
            if (!s.ok()) return s;
          }
          break;
        }
      }
      if (++produced_ > kMaxResults) return TooMany();
    }
    return absl::OkStatus();
  }

 private:
  absl::Status TooMany() const {
    return absl::ResourceExhaustedError(absl::StrCat(
        "jsonpath evaluation produced more than ", kMaxResults, " values"));
  }

  absl::Status Count(const ValueList& values) {
    produced_ += values.size();
    if (produced_ > kMaxResults) return TooMany();
    return absl::OkStatus();
  }

  absl::Status EvalList(ValueList input, const NodeList& nodes,
                        ValueList* out) {
    for (const Node& node : nodes) {
      ValueList next;
      absl::Status s = Walk(input, node, &next);
      if (!s.ok()) return s;
      s = Count(next);
      if (!s.ok()) return s;
      input = std::move(next);
    }
    *out = std::move(input);
    return absl::OkStatus();
  }

  absl::Status Walk(const ValueList& input, const Node& node, ValueList* out) {
    switch (node.type) {
      case NodeType::kText:
        out->push_back(node.literal);
        return absl::OkStatus();
      case NodeType::kInt:
      case NodeType::kFloat:
      case NodeType::kBool:
        out->assign(input.size(), node.literal);
        return absl::OkStatus();
      case NodeType::kField:
        return EvalField(input, node, out);
      case NodeType::kArray:
        return EvalArray(input, node, out);
      case NodeType::kFilter:
        return EvalFilter(input, node, out);
      case NodeType::kWildcard: {
        std::vector<const Value*> children;
        for (const Value* v : input) {
          if (Children(*v, &children)) {
            out->insert(out->end(), children.begin(), children.end());
          }
        }
        return absl::OkStatus();
      }
      case NodeType::kRecursive:
        return EvalRecursive(input, out);
      case NodeType::kUnion:
        for (const NodeList& list : node.lists) {
          ValueList part;
          absl::Status s = EvalList(input, list, &part);
          if (!s.ok()) return s;
          out->insert(out->end(), part.begin(), part.end());
          s = Count(part);
          if (!s.ok()) return s;
        }
        return absl::OkStatus();
    }
    return absl::InternalError("unexpected jsonpath node");
  }

  absl::Status EvalField(const ValueList& input, const Node& node,
                         ValueList* out) {
    if (input.empty()) return absl::OkStatus();
    if (node.name.empty()) {
      *out = input;
      return absl::OkStatus();
    }
    for (const Value* v : input) {
      if (v->IsNull() || !v->IsObject()) continue;
      const Value* member = FindLastMember(*v, node.name);
      if (member != nullptr) out->push_back(member);
    }
    if (out->empty() && !options_.allow_missing_keys) {
      return absl::NotFoundError(absl::StrCat(node.name, " is not found"));
    }
    return absl::OkStatus();
  }

  absl::Status EvalArray(const ValueList& input, const Node& node,
                         ValueList* out) {
    for (const Value* v : input) {
      if (v->IsNull()) continue;
      if (!v->IsArray()) {
        return absl::InvalidArgumentError(
            absl::StrCat(GoTypeName(*v), " is not array or slice"));
      }
      const int64_t length = v->Size();
      SliceParam params[3] = {node.params[0], node.params[1], node.params[2]};
      if (!params[0].known) params[0].value = 0;
      if (params[0].value < 0) params[0].value += length;
      if (!params[1].known) params[1].value = length;
      if (params[1].value < 0 || (params[1].value == 0 && params[1].derived)) {
        params[1].value += length;
      }
      if (params[1].value == params[0].value) continue;  // zero elements
      if (params[0].value >= length || params[0].value < 0) {
        return absl::OutOfRangeError(
            absl::StrFormat("array index out of bounds: index %d, length %d",
                            params[0].value, length));
      }
      if (params[1].value > length || params[1].value < 0) {
        return absl::OutOfRangeError(
            absl::StrFormat("array index out of bounds: index %d, length %d",
                            params[1].value - 1, length));
      }
      if (params[0].value > params[1].value) {
        return absl::InvalidArgumentError(
            absl::StrFormat("starting index %d is greater than ending index %d",
                            params[0].value, params[1].value));
      }
      int64_t step = 1;
      if (params[2].known) {
        if (params[2].value <= 0) {
          return absl::InvalidArgumentError("step must be > 0");
        }
        step = params[2].value;
      }
      const auto& array = v->GetArray();
      for (int64_t i = params[0].value; i < params[1].value; i += step) {
        out->push_back(&array[static_cast<rapidjson::SizeType>(i)]);
      }
    }
    return absl::OkStatus();
  }

  // Pre-order over every container with at least one child, as client-go's
  // evalRecursive, but with an explicit stack.
  absl::Status EvalRecursive(const ValueList& input, ValueList* out) {
    std::vector<const Value*> stack(input.rbegin(), input.rend());
    std::vector<const Value*> children;
    while (!stack.empty()) {
      const Value* v = stack.back();
      stack.pop_back();
      if (!Children(*v, &children) || children.empty()) continue;
      out->push_back(v);
      if (out->size() > kMaxResults) return TooMany();
      stack.insert(stack.end(), children.rbegin(), children.rend());
    }
    return absl::OkStatus();
  }

  absl::Status EvalFilter(const ValueList& input, const Node& node,
                          ValueList* out) {
    std::vector<const Value*> elements;
    for (const Value* v : input) {
      if (!Children(*v, &elements)) elements = {v};
      for (const Value* element : elements) {
        ValueList lefts;
        absl::Status s = EvalList({element}, node.lists[0], &lefts);
        if (!s.ok() && !options_.allow_missing_keys) return s;
        if (!s.ok()) lefts.clear();
        ValueList rights;
        if (node.op != "exists") {
          s = EvalList({element}, node.lists[1], &rights);
          if (!s.ok()) return s;
        }
        if (lefts.empty()) continue;
        if (lefts.size() > 1) {
          return absl::InvalidArgumentError(
              "can only compare one element at a time");
        }
        if (node.op == "exists") {
          out->push_back(element);
          continue;
        }
        if (rights.empty()) continue;
        if (rights.size() > 1) {
          return absl::InvalidArgumentError(
              "can only compare one element at a time");
        }
        if (Compare(node.op, *lefts[0], *rights[0])) out->push_back(element);
      }
    }
    return absl::OkStatus();
  }

  // Values of different kinds never compare (client-go ignores its
  // "incompatible types" error); numbers compare by value; bools and null
  // support no ordering.
  static bool Compare(const std::string& op, const Value& l, const Value& r) {
    int cmp;
    if (l.IsNumber() && r.IsNumber()) {
      if (l.IsInt64() && r.IsInt64()) {
        const int64_t a = l.GetInt64();
        const int64_t b = r.GetInt64();
        cmp = a < b ? -1 : (a > b ? 1 : 0);
      } else {
        const double a = l.GetDouble();
        const double b = r.GetDouble();
        cmp = a < b ? -1 : (a > b ? 1 : 0);
      }
    } else if (l.IsString() && r.IsString()) {
      const int c = Str(l).compare(Str(r));
      cmp = c < 0 ? -1 : (c > 0 ? 1 : 0);
    } else if (l.IsBool() && r.IsBool()) {
      const bool eq = l.GetBool() == r.GetBool();
      if (op == "==") return eq;
      if (op == "!=") return !eq;
      return false;
    } else {
      return false;
    }
    if (op == "==") return cmp == 0;
    if (op == "!=") return cmp != 0;
    if (op == "<") return cmp < 0;
    if (op == ">") return cmp > 0;
    if (op == "<=") return cmp <= 0;
    if (op == ">=") return cmp >= 0;
    return false;
  }

  const EvalOptions& options_;
  size_t produced_ = 0;
};

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
  absl::Status s = ParseTemplate(ToAbsl(text), &impl->pool, &impl->segments);
  if (!s.ok()) return s;
  return JsonPath(std::move(impl));
}

absl::StatusOr<JsonPath> JsonPath::ParseExpression(std::string_view expr) {
  return Parse(absl::StrCat("{", ToAbsl(expr), "}"));
}

absl::StatusOr<Results> JsonPath::FindResults(
    const rapidjson::Value& data, const EvalOptions& options) const {
  Results results;
  Evaluator evaluator(options);
  absl::Status s = evaluator.Run(impl_->segments, data, &results);
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
