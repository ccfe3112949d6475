#include "api/selector/shard_selector.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace {

// kube's parser (k8s.io/apiserver/pkg/sharding) parses the selector with
// cel-go and walks the AST; the expression is never evaluated. This is the
// part of CEL's grammar that can reach that walk, so that every input kube
// rejects after parsing is rejected here with the same words: literals,
// identifiers, selections, calls, lists, maps and the operators.

// cel-go's ast.ExprKind values, which kube's messages print with %v.
enum class Kind {
  kCall = 1,
  kIdent = 3,
  kList = 4,
  kLiteral = 5,
  kMap = 6,
  kSelect = 7,
};

struct Node {
  Kind kind = Kind::kLiteral;
  // Call: the function ("shardRange", "_||_"); ident: the name; select: the
  // field; literal: the string value.
  std::string name;
  // Literal: Go's type of the value ("string", "int64", ...).
  std::string literal_type;
  // Call: arguments (a receiver-style call's target is not one); select:
  // the operand.
  std::vector<std::unique_ptr<Node>> args;
};

using NodePtr = std::unique_ptr<Node>;

absl::Status Invalid(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

// Go's %q of a string of bytes.
std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "\"";
  return out;
}

std::string KindText(Kind k) { return std::to_string(static_cast<int>(k)); }

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xc0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xe0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    *out += static_cast<char>(0xf0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

class CelSubsetParser {
 public:
  explicit CelSubsetParser(std::string_view text) : text_(text) {}

  absl::StatusOr<NodePtr> ParseAll() {
    auto e = Expr(0);
    if (!e.ok()) return e.status();
    SkipSpace();
    if (pos_ < text_.size()) return Syntax("unexpected input");
    return e;
  }

 private:
  static constexpr int kMaxDepth = 100;

  absl::Status Syntax(std::string_view what) const {
    return Invalid(absl::StrCat("CEL parse error: Syntax error: ", ToAbsl(what),
                                " at offset ", pos_));
  }

  void SkipSpace() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() &&
                 text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  // Consumes `token` (after whitespace) when it is next.
  bool Eat(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  bool PeekIs(std::string_view token) {
    SkipSpace();
    return text_.substr(pos_, token.size()) == token;
  }

  static NodePtr Call(std::string name, NodePtr a, NodePtr b = nullptr,
                      NodePtr c = nullptr) {
    auto n = std::make_unique<Node>();
    n->kind = Kind::kCall;
    n->name = std::move(name);
    for (NodePtr* p : {&a, &b, &c}) {
      if (*p != nullptr) n->args.push_back(std::move(*p));
    }
    return n;
  }

  // expr: conditional-or, optionally `? expr : expr`.
  absl::StatusOr<NodePtr> Expr(int depth) {
    if (depth > kMaxDepth) return Syntax("expression nested too deeply");
    auto cond = Binary(0, depth);
    if (!cond.ok()) return cond.status();
    if (!Eat("?")) return cond;
    auto then = Binary(0, depth);
    if (!then.ok()) return then.status();
    if (!Eat(":")) return Syntax("expected ':'");
    auto otherwise = Expr(depth + 1);
    if (!otherwise.ok()) return otherwise.status();
    return Call("_?_:_", std::move(*cond), std::move(*then),
                std::move(*otherwise));
  }

  // Binary operators by CEL's precedence, lowest first.
  absl::StatusOr<NodePtr> Binary(int level, int depth) {
    static const std::vector<std::vector<std::pair<const char*, const char*>>>
        kLevels = {
            {{"||", "_||_"}},
            {{"&&", "_&&_"}},
            {{"==", "_==_"},
             {"!=", "_!=_"},
             {"<=", "_<=_"},
             {">=", "_>=_"},
             {"<", "_<_"},
             {">", "_>_"},
             {"in", "@in"}},
            {{"+", "_+_"}, {"-", "_-_"}},
            {{"*", "_*_"}, {"/", "_/_"}, {"%", "_%_"}},
        };
    if (level == static_cast<int>(kLevels.size())) return Unary(depth);
    auto left = Binary(level + 1, depth);
    if (!left.ok()) return left.status();
    // cel-go builds a chain of || (or &&) as a balanced tree, so that a
    // long chain is shallow; the other operators nest to the left, each
    // one a level deeper.
    const bool logical = level < 2;
    std::vector<NodePtr> operands;
    operands.push_back(std::move(*left));
    NodePtr node;
    int chain = 0;
    while (true) {
      const char* function = nullptr;
      for (const auto& [token, fn] : kLevels[level]) {
        if (std::string_view(token) == "in") {
          SkipSpace();
          if (text_.substr(pos_, 2) == "in" &&
              (pos_ + 2 >= text_.size() ||
               !(IsIdentStart(text_[pos_ + 2]) || IsDigit(text_[pos_ + 2])))) {
            pos_ += 2;
            function = fn;
            break;
          }
        } else if (Eat(token)) {
          function = fn;
          break;
        }
      }
      if (function == nullptr) {
        if (logical)
          return Balance(kLevels[level][0].second, &operands, 0,
                         operands.size());
        return operands.empty() ? std::move(node) : std::move(operands[0]);
      }
      if (!logical && ++chain + depth > kMaxDepth) {
        return Syntax("expression nested too deeply");
      }
      auto right = Binary(level + 1, depth);
      if (!right.ok()) return right.status();
      if (logical) {
        operands.push_back(std::move(*right));
      } else {
        NodePtr l = operands.empty() ? std::move(node) : std::move(operands[0]);
        operands.clear();
        node = Call(function, std::move(l), std::move(*right));
      }
    }
  }

  // The operands [lo, hi) joined by `function` as a balanced tree.
  static NodePtr Balance(const char* function, std::vector<NodePtr>* operands,
                         size_t lo, size_t hi) {
    if (hi - lo == 1) return std::move((*operands)[lo]);
    size_t mid = lo + (hi - lo) / 2;
    NodePtr left = Balance(function, operands, lo, mid);
    NodePtr right = Balance(function, operands, mid, hi);
    return Call(function, std::move(left), std::move(right));
  }

  absl::StatusOr<NodePtr> Unary(int depth) {
    if (depth > kMaxDepth) return Syntax("expression nested too deeply");
    if (Eat("!")) {
      auto operand = Unary(depth + 1);
      if (!operand.ok()) return operand.status();
      return Call("!_", std::move(*operand));
    }
    SkipSpace();
    // A negative number literal is one token in CEL; '-' before anything
    // else is negation.
    if (pos_ < text_.size() && text_[pos_] == '-' &&
        !(pos_ + 1 < text_.size() && IsDigit(text_[pos_ + 1]))) {
      ++pos_;
      auto operand = Unary(depth + 1);
      if (!operand.ok()) return operand.status();
      return Call("-_", std::move(*operand));
    }
    return Member(depth);
  }

  absl::StatusOr<NodePtr> Member(int depth) {
    auto primary = Primary(depth);
    if (!primary.ok()) return primary.status();
    NodePtr node = std::move(*primary);
    // Each selection, index or call nests the expression a level deeper.
    for (int chain = 1;; ++chain) {
      if (chain + depth > kMaxDepth && (PeekIs(".") || PeekIs("["))) {
        return Syntax("expression nested too deeply");
      }
      if (Eat(".")) {
        SkipSpace();
        std::string name = Ident();
        if (name.empty()) return Syntax("expected a field name after '.'");
        if (PeekIs("(")) {
          // A receiver-style call: the target is not among the arguments
          // kube counts.
          Eat("(");
          auto call = std::make_unique<Node>();
          call->kind = Kind::kCall;
          call->name = std::move(name);
          auto args = Arguments(")", depth);
          if (!args.ok()) return args.status();
          call->args = std::move(*args);
          node = std::move(call);
        } else {
          auto sel = std::make_unique<Node>();
          sel->kind = Kind::kSelect;
          sel->name = std::move(name);
          sel->args.push_back(std::move(node));
          node = std::move(sel);
        }
      } else if (Eat("[")) {
        auto index = Expr(depth + 1);
        if (!index.ok()) return index.status();
        if (!Eat("]")) return Syntax("expected ']'");
        node = Call("_[_]", std::move(node), std::move(*index));
      } else {
        return node;
      }
    }
  }

  // Comma-separated expressions up to `close` (consumed).
  absl::StatusOr<std::vector<NodePtr>> Arguments(std::string_view close,
                                                 int depth) {
    std::vector<NodePtr> out;
    if (Eat(close)) return out;
    while (true) {
      auto e = Expr(depth + 1);
      if (!e.ok()) return e.status();
      out.push_back(std::move(*e));
      if (Eat(close)) return out;
      if (!Eat(",")) {
        return Syntax(absl::StrCat("expected ',' or '", ToAbsl(close), "'"));
      }
      // A trailing comma is allowed in lists and maps, not in calls.
      if (close != ")" && Eat(close)) return out;
    }
  }

  std::string Ident() {
    if (pos_ >= text_.size() || !IsIdentStart(text_[pos_])) return "";
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (IsIdentStart(text_[pos_]) || IsDigit(text_[pos_]))) {
      ++pos_;
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  static NodePtr Literal(std::string type, std::string value = "") {
    auto n = std::make_unique<Node>();
    n->kind = Kind::kLiteral;
    n->literal_type = std::move(type);
    n->name = std::move(value);
    return n;
  }

  absl::StatusOr<NodePtr> Primary(int depth) {
    if (depth > kMaxDepth) return Syntax("expression nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Syntax("unexpected end of input");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      auto e = Expr(depth + 1);
      if (!e.ok()) return e.status();
      if (!Eat(")")) return Syntax("expected ')'");
      return e;
    }
    if (c == '[' || c == '{') {
      ++pos_;
      bool map = c == '{';
      auto items = Arguments(map ? "}" : "]", depth);
      if (!items.ok()) return items.status();
      // Map entries are parsed loosely: only their kind reaches kube.
      auto n = std::make_unique<Node>();
      n->kind = map ? Kind::kMap : Kind::kList;
      return n;
    }
    if (c == '"' || c == '\'') return String(false, false);
    if ((c == 'r' || c == 'R' || c == 'b' || c == 'B') &&
        pos_ + 1 < text_.size()) {
      char next = text_[pos_ + 1];
      bool raw = c == 'r' || c == 'R';
      bool bytes = c == 'b' || c == 'B';
      if (next == '"' || next == '\'') {
        ++pos_;
        return String(raw, bytes);
      }
      if (pos_ + 2 < text_.size() &&
          (text_[pos_ + 2] == '"' || text_[pos_ + 2] == '\'') &&
          ((raw && (next == 'b' || next == 'B')) ||
           (bytes && (next == 'r' || next == 'R')))) {
        pos_ += 2;
        return String(true, true);
      }
    }
    if (IsDigit(c) || c == '-' ||
        (c == '.' && pos_ + 1 < text_.size() && IsDigit(text_[pos_ + 1]))) {
      return Number();
    }
    if (c == '.') ++pos_;  // a leading dot names the root scope
    std::string name = Ident();
    if (name.empty()) {
      return Syntax(absl::StrCat("unexpected character ",
                                 GoQuote(text_.substr(pos_, 1))));
    }
    if (name == "true" || name == "false") return Literal("bool", name);
    if (name == "null") return Literal("structpb.NullValue");
    if (PeekIs("(")) {
      Eat("(");
      auto args = Arguments(")", depth);
      if (!args.ok()) return args.status();
      auto n = std::make_unique<Node>();
      n->kind = Kind::kCall;
      n->name = std::move(name);
      n->args = std::move(*args);
      return n;
    }
    auto n = std::make_unique<Node>();
    n->kind = Kind::kIdent;
    n->name = std::move(name);
    return n;
  }

  absl::StatusOr<NodePtr> Number() {
    size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    bool is_float = false;
    if (text_.substr(pos_, 2) == "0x" || text_.substr(pos_, 2) == "0X") {
      pos_ += 2;
      size_t digits = pos_;
      while (pos_ < text_.size() && IsHexDigit(text_[pos_])) ++pos_;
      if (pos_ == digits) return Syntax("expected hex digits");
    } else {
      while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
      if (pos_ < text_.size() && text_[pos_] == '.' &&
          pos_ + 1 < text_.size() && IsDigit(text_[pos_ + 1])) {
        is_float = true;
        ++pos_;
        while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
      }
      if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        size_t e = pos_ + 1;
        if (e < text_.size() && (text_[e] == '+' || text_[e] == '-')) ++e;
        if (e < text_.size() && IsDigit(text_[e])) {
          is_float = true;
          pos_ = e;
          while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
        }
      }
    }
    if (pos_ == start || (pos_ == start + 1 && text_[start] == '-')) {
      return Syntax("expected a number");
    }
    if (is_float) return Literal("float64");
    if (pos_ < text_.size() && (text_[pos_] == 'u' || text_[pos_] == 'U')) {
      ++pos_;
      return Literal("uint64");
    }
    return Literal("int64");
  }

  // A quoted literal starting at pos_ (the quote). Triple quotes are
  // CEL's multi-line strings.
  absl::StatusOr<NodePtr> String(bool raw, bool bytes) {
    char q = text_[pos_];
    bool triple = text_.substr(pos_, 3) == std::string(3, q);
    std::string close = triple ? std::string(3, q) : std::string(1, q);
    pos_ += close.size();
    std::string value;
    while (true) {
      if (pos_ >= text_.size()) return Syntax("unterminated string literal");
      if (text_.substr(pos_, close.size()) == close) {
        pos_ += close.size();
        break;
      }
      char c = text_[pos_];
      if (!triple && (c == '\n' || c == '\r')) {
        return Syntax("newline in string literal");
      }
      if (c != '\\' || raw) {
        value += c;
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= text_.size()) return Syntax("unterminated escape");
      char e = text_[pos_ + 1];
      pos_ += 2;
      switch (e) {
        case 'a':
          value += '\a';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'n':
          value += '\n';
          break;
        case 'r':
          value += '\r';
          break;
        case 't':
          value += '\t';
          break;
        case 'v':
          value += '\v';
          break;
        case '\\':
        case '\'':
        case '"':
        case '`':
        case '?':
          value += e;
          break;
        case 'x':
        case 'X':
        case 'u':
        case 'U': {
          size_t n = (e == 'x' || e == 'X') ? 2 : (e == 'u' ? 4 : 8);
          if (pos_ + n > text_.size()) return Syntax("invalid escape");
          uint32_t cp = 0;
          for (size_t i = 0; i < n; ++i) {
            if (!IsHexDigit(text_[pos_ + i])) return Syntax("invalid escape");
            cp = cp * 16 + HexValue(text_[pos_ + i]);
          }
          pos_ += n;
          if (n == 2 && bytes) {
            value += static_cast<char>(cp);
          } else {
            if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) {
              return Syntax("invalid escape");
            }
            AppendUtf8(cp, &value);
          }
          break;
        }
        default:
          if (e >= '0' && e <= '3' && pos_ + 1 < text_.size() &&
              text_[pos_] >= '0' && text_[pos_] <= '7' &&
              text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '7') {
            uint32_t cp = (e - '0') * 64 + (text_[pos_] - '0') * 8 +
                          (text_[pos_ + 1] - '0');
            pos_ += 2;
            if (bytes) {
              value += static_cast<char>(cp);
            } else {
              AppendUtf8(cp, &value);
            }
            break;
          }
          return Syntax("invalid escape");
      }
    }
    return Literal(bytes ? "[]uint8" : "string", std::move(value));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// kube's extractFieldPath: an identifier or a chain of selections.
absl::StatusOr<std::string> FieldPath(const Node& n) {
  if (n.kind == Kind::kIdent) return n.name;
  if (n.kind == Kind::kSelect) {
    auto operand = FieldPath(*n.args[0]);
    if (!operand.ok()) return operand.status();
    return absl::StrCat(*operand, ".", n.name);
  }
  return Invalid(
      absl::StrCat("expected field path (e.g. object.metadata.uid), got "
                   "expression kind ",
                   KindText(n.kind)));
}

// kube's extractHexLiteral.
absl::StatusOr<absl::uint128> HexBound(const Node& n, std::string_view name) {
  const std::string nm(name);
  if (n.kind != Kind::kLiteral) {
    return Invalid(absl::StrCat(nm,
                                " must be a string literal (e.g. '0xff'), got "
                                "expression kind ",
                                KindText(n.kind)));
  }
  if (n.literal_type != "string") {
    return Invalid(
        absl::StrCat(nm, " must be a string literal, got ", n.literal_type));
  }
  const std::string& s = n.name;
  if (s.compare(0, 2, "0x") != 0) {
    return Invalid(
        absl::StrCat(nm, " must have '0x' prefix, got ", GoQuote(s)));
  }
  std::string_view hex = std::string_view(s).substr(2);
  if (hex.empty()) {
    return Invalid(absl::StrCat(nm, ": hex value is required after '0x'"));
  }
  if (hex.size() > 17) {
    return Invalid(absl::StrCat(nm, ": hex value too long (", hex.size(),
                                " chars, max 17): ", GoQuote(hex)));
  }
  size_t i = 0;
  while (i < hex.size()) {
    unsigned char c = hex[i];
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) {
      ++i;
      continue;
    }
    // Go ranges over runes: the whole (UTF-8) character is shown.
    size_t len = 1;
    if (c >= 0xc0) {
      len = c >= 0xf0 ? 4 : (c >= 0xe0 ? 3 : 2);
      len = std::min(len, hex.size() - i);
    }
    return Invalid(absl::StrCat(nm, ": invalid hex character ",
                                GoQuote(hex.substr(i, len)), " in ",
                                GoQuote(s)));
  }
  if (hex.size() == 17) {
    if (s != "0x10000000000000000") {
      return Invalid(
          absl::StrCat(nm,
                       ": 17-digit hex value must be '0x10000000000000000' "
                       "(2^64), got ",
                       GoQuote(s)));
    }
    return absl::uint128(1) << 64;
  }
  if (hex.size() != 16) {
    std::string padded =
        absl::StrCat("0x", std::string(16 - hex.size(), '0'), ToAbsl(hex));
    return Invalid(absl::StrCat(nm,
                                " must be a 0x-prefixed 16-digit hex value, "
                                "got ",
                                GoQuote(s), " (did you mean ", GoQuote(padded),
                                "?)"));
  }
  uint64_t v = 0;
  for (char c : hex) v = v * 16 + HexValue(c);
  return absl::uint128(v);
}

struct Requirement {
  std::string field;
  ShardRange range;
};

// kube's walkExpr and parseShardRangeCall.
absl::Status Walk(const Node& n, std::vector<Requirement>* out) {
  if (n.kind != Kind::kCall) {
    return Invalid(absl::StrCat("unexpected expression kind ", KindText(n.kind),
                                "; expected shardRange() call or || operator"));
  }
  if (n.name == "_||_") {
    if (absl::Status s = Walk(*n.args[0], out); !s.ok()) return s;
    return Walk(*n.args[1], out);
  }
  if (n.name != "shardRange") {
    return Invalid(absl::StrCat("unsupported function ", GoQuote(n.name),
                                "; only shardRange() and || are allowed"));
  }
  if (n.args.size() != 3) {
    return Invalid(
        absl::StrCat("shardRange() requires exactly 3 arguments, "
                     "got ",
                     n.args.size()));
  }
  auto path = FieldPath(*n.args[0]);
  if (!path.ok()) {
    return Invalid(
        absl::StrCat("shardRange() first argument: ", path.status().message()));
  }
  if (*path != "object.metadata.uid" && *path != "object.metadata.namespace") {
    return Invalid(absl::StrCat("unsupported field path ", GoQuote(*path),
                                "; supported: object.metadata.uid, "
                                "object.metadata.namespace"));
  }
  auto start = HexBound(*n.args[1], "hexStart");
  if (!start.ok()) return start.status();
  auto end = HexBound(*n.args[2], "hexEnd");
  if (!end.ok()) return end.status();
  if (!(*start < *end)) {
    return Invalid(absl::StrCat("shard range start ", FormatShardBound(*start),
                                " must be less than end ",
                                FormatShardBound(*end)));
  }
  out->push_back({std::move(*path), ShardRange{*start, *end}});
  return absl::OkStatus();
}

std::string_view TrimSpace(std::string_view s) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           c == '\v';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

uint64_t Fnv1a64(std::string_view value) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : value) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string_view ShardFieldPath(ShardField field) {
  return field == ShardField::kUid ? "object.metadata.uid"
                                   : "object.metadata.namespace";
}

ShardRange ShardRange::Of(uint64_t index, uint64_t total) {
  const absl::uint128 space = absl::uint128(1) << 64;
  ShardRange r;
  r.start = space * index / total;
  r.end = index + 1 >= total ? space : space * (index + 1) / total;
  return r;
}

std::string FormatShardBound(absl::uint128 bound) {
  if (absl::Uint128High64(bound) != 0) return "0x10000000000000000";
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016llx",
                static_cast<unsigned long long>(absl::Uint128Low64(bound)));
  return buf;
}

absl::StatusOr<ShardSelector> ShardSelector::Parse(std::string_view selector) {
  std::string_view text = TrimSpace(selector);
  if (text.empty()) {
    return Invalid(
        "empty shard selector is not allowed; omit the parameter for "
        "unfiltered lists");
  }
  // cel-go's default limit on the size of an expression.
  constexpr size_t kMaxCodePoints = 100000;
  size_t code_points = 0;
  for (unsigned char c : text) code_points += (c & 0xc0) != 0x80;
  if (code_points > kMaxCodePoints) {
    return Invalid(absl::StrCat(
        "CEL parse error: expression code point size exceeds limit: size: ",
        code_points, ", limit ", kMaxCodePoints));
  }
  CelSubsetParser parser(text);
  auto root = parser.ParseAll();
  if (!root.ok()) return root.status();
  std::vector<Requirement> reqs;
  if (absl::Status s = Walk(**root, &reqs); !s.ok()) return s;
  for (size_t i = 1; i < reqs.size(); ++i) {
    if (reqs[i].field != reqs[0].field) {
      return Invalid(absl::StrCat(
          "all shard ranges must use the same field, "
          "got ",
          GoQuote(reqs[0].field), " and ", GoQuote(reqs[i].field)));
    }
  }
  ShardSelector out;
  out.field_ = reqs[0].field == "object.metadata.uid" ? ShardField::kUid
                                                      : ShardField::kNamespace;
  for (Requirement& r : reqs) out.ranges_.push_back(r.range);
  return out;
}

ShardSelector ShardSelector::ForRanges(ShardField field,
                                       std::vector<ShardRange> ranges) {
  ShardSelector out;
  out.field_ = field;
  out.ranges_ = std::move(ranges);
  return out;
}

bool ShardSelector::MatchesHash(uint64_t hash) const {
  if (ranges_.empty()) return true;
  for (const ShardRange& r : ranges_) {
    if (r.Contains(hash)) return true;
  }
  return false;
}

bool ShardSelector::Matches(std::string_view uid, std::string_view ns) const {
  if (ranges_.empty()) return true;
  return MatchesHash(Fnv1a64(field_ == ShardField::kUid ? uid : ns));
}

bool ShardSelector::Matches(const rapidjson::Value& object) const {
  if (ranges_.empty()) return true;
  std::string_view value;
  if (object.IsObject()) {
    auto meta = object.FindMember("metadata");
    if (meta != object.MemberEnd() && meta->value.IsObject()) {
      auto f = meta->value.FindMember(field_ == ShardField::kUid ? "uid"
                                                                 : "namespace");
      if (f != meta->value.MemberEnd() && f->value.IsString()) {
        value =
            std::string_view(f->value.GetString(), f->value.GetStringLength());
      }
    }
  }
  return MatchesHash(Fnv1a64(value));
}

std::string ShardSelector::ToString() const {
  std::string out;
  for (const ShardRange& r : ranges_) {
    if (!out.empty()) out += " || ";
    absl::StrAppend(&out, "shardRange(", ToAbsl(ShardFieldPath(field_)), ", '",
                    FormatShardBound(r.start), "', '", FormatShardBound(r.end),
                    "')");
  }
  return out;
}

}  // namespace api
}  // namespace kcr
