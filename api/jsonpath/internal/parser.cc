#include "api/jsonpath/internal/parser.h"

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

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/jsonpath/jsonpath.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace jsonpath {
namespace internal {
namespace {

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

}  // namespace internal
}  // namespace jsonpath
}  // namespace api
}  // namespace kcr
