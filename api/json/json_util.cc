#include "api/json/json_util.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rapidjson/error/en.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace json {

int JsonDepth(const rapidjson::Value& value, int limit) {
  int deepest = 0;
  std::vector<std::pair<const rapidjson::Value*, int>> stack;
  stack.emplace_back(&value, 0);
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if (v->IsArray()) {
      ++depth;
      for (const rapidjson::Value& e : v->GetArray()) {
        if (e.IsArray() || e.IsObject()) stack.emplace_back(&e, depth);
      }
    } else if (v->IsObject()) {
      ++depth;
      for (const auto& m : v->GetObject()) {
        if (m.value.IsArray() || m.value.IsObject()) {
          stack.emplace_back(&m.value, depth);
        }
      }
    }
    if (depth > deepest) {
      deepest = depth;
      if (deepest > limit) return limit + 1;
    }
  }
  return deepest;
}

namespace {

// Forwards SAX events to a Document and stops the parse at the first array
// or object deeper than `max_depth`, so a hostile document is refused
// after at most `max_depth` levels are built, not after the whole tree.
class DepthLimitedHandler {
 public:
  DepthLimitedHandler(rapidjson::Document* doc, int max_depth)
      : doc_(*doc), max_depth_(max_depth) {}

  bool too_deep() const { return too_deep_; }

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned u) { return doc_.Uint(u); }
  bool Int64(int64_t i) { return doc_.Int64(i); }
  bool Uint64(uint64_t u) { return doc_.Uint64(u); }
  bool Double(double d) { return doc_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) {
    return doc_.RawNumber(s, n, copy);
  }
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return doc_.String(s, n, copy);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    return doc_.Key(s, n, copy);
  }
  bool StartObject() { return Enter() && doc_.StartObject(); }
  bool EndObject(rapidjson::SizeType members) {
    --depth_;
    return doc_.EndObject(members);
  }
  bool StartArray() { return Enter() && doc_.StartArray(); }
  bool EndArray(rapidjson::SizeType elements) {
    --depth_;
    return doc_.EndArray(elements);
  }

 private:
  bool Enter() {
    if (++depth_ <= max_depth_) return true;
    too_deep_ = true;
    return false;
  }

  rapidjson::Document& doc_;
  const int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
};

}  // namespace

absl::Status ParseJson(std::string_view text, rapidjson::Document* doc,
                       int max_depth) {
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag |
                              rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseFullPrecisionFlag;
  // A MemoryStream reads exactly `text`, embedded NULs included.
  rapidjson::MemoryStream stream(text.data(), text.size());
  DepthLimitedHandler handler(doc, max_depth);
  rapidjson::ParseResult result;
  auto generator = [&](rapidjson::Document&) {
    rapidjson::Reader reader;
    result = reader.Parse<kFlags>(stream, handler);
    return !result.IsError();
  };
  doc->Populate(generator);
  if (handler.too_deep()) {
    doc->SetNull();
    return absl::InvalidArgumentError(
        absl::StrCat("JSON nests deeper than ", max_depth, " levels at offset ",
                     result.Offset()));
  }
  if (result.IsError()) {
    doc->SetNull();
    return absl::InvalidArgumentError(
        absl::StrCat("invalid JSON at offset ", result.Offset(), ": ",
                     rapidjson::GetParseError_En(result.Code())));
  }
  return absl::OkStatus();
}

namespace {

// The length of the valid UTF-8 sequence at the start of `s` (non-empty),
// or 0 when its first byte does not start one.
size_t Utf8SequenceLength(std::string_view s) {
  const auto byte = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // no overlong forms
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // no overlong forms
    if (b0 == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

size_t ValidUtf8Prefix(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t n = Utf8SequenceLength(text.substr(i));
    if (n == 0) break;
    i += n;
  }
  return i;
}

bool ReplaceInvalidUtf8(std::string_view text, std::string* out) {
  size_t i = ValidUtf8Prefix(text);
  if (i == text.size()) return false;
  out->assign(text.data(), i);
  while (i < text.size()) {
    const size_t n = Utf8SequenceLength(text.substr(i));
    if (n == 0) {
      out->append("\xEF\xBF\xBD");
      ++i;
    } else {
      out->append(text.data() + i, n);
      i += n;
    }
  }
  return true;
}

std::string StringMember(const rapidjson::Value& object,
                         std::string_view name) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(rapidjson::Value(rapidjson::StringRef(
      name.data(), static_cast<rapidjson::SizeType>(name.size()))));
  if (it == object.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

absl::StatusOr<std::string> JsonToString(const rapidjson::Value& value) {
  if (JsonDepth(value) > api::kMaxJsonDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON nests deeper than ", api::kMaxJsonDepth, " levels"));
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  if (!value.Accept(writer)) {
    return absl::InvalidArgumentError(
        "JSON holds a number that cannot be written (NaN or infinity)");
  }
  return std::string(buffer.GetString(), buffer.GetSize());
}

namespace {

bool NumbersEqual(const rapidjson::Value& a, const rapidjson::Value& b) {
  if (a.IsInt64() && b.IsInt64()) return a.GetInt64() == b.GetInt64();
  if (a.IsUint64() && b.IsUint64()) return a.GetUint64() == b.GetUint64();
  // One is fractional or the two lie on either side of the int64 range.
  if ((a.IsInt64() || a.IsUint64()) && (b.IsInt64() || b.IsUint64())) {
    return false;
  }
  return a.GetDouble() == b.GetDouble();
}

}  // namespace

const char* JsonTypeName(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "boolean";
    case rapidjson::kObjectType:
      return "object";
    case rapidjson::kArrayType:
      return "array";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return "number";
  }
  return "unknown";
}

bool JsonDeepEqual(const rapidjson::Value& a, const rapidjson::Value& b) {
  std::vector<std::pair<const rapidjson::Value*, const rapidjson::Value*>>
      stack;
  stack.emplace_back(&a, &b);
  while (!stack.empty()) {
    auto [x, y] = stack.back();
    stack.pop_back();
    if (x->IsNumber() && y->IsNumber()) {
      if (!NumbersEqual(*x, *y)) return false;
      continue;
    }
    if (x->GetType() != y->GetType()) return false;
    switch (x->GetType()) {
      case rapidjson::kNullType:
      case rapidjson::kFalseType:
      case rapidjson::kTrueType:
        break;
      case rapidjson::kStringType:
        if (x->GetStringLength() != y->GetStringLength() ||
            std::char_traits<char>::compare(x->GetString(), y->GetString(),
                                            x->GetStringLength()) != 0) {
          return false;
        }
        break;
      case rapidjson::kArrayType:
        if (x->Size() != y->Size()) return false;
        for (rapidjson::SizeType i = 0; i < x->Size(); ++i) {
          stack.emplace_back(&(*x)[i], &(*y)[i]);
        }
        break;
      case rapidjson::kObjectType:
        if (x->MemberCount() != y->MemberCount()) return false;
        for (auto m = x->MemberBegin(), n = y->MemberBegin();
             m != x->MemberEnd(); ++m, ++n) {
          // Members in the same order pair up directly; this also keeps a
          // document with a repeated key equal to its own copy.
          auto it = n->name == m->name ? n : y->FindMember(m->name);
          if (it == y->MemberEnd()) return false;
          stack.emplace_back(&m->value, &it->value);
        }
        break;
      case rapidjson::kNumberType:
        return false;  // a number beside a non-number: handled above
    }
  }
  return true;
}

}  // namespace json
}  // namespace kcr
