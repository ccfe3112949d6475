#include "api/json/yaml_to_json.h"

#include <cmath>
#include <cstdint>
#include <exception>
#include <sstream>
#include <string>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "api/json/json_util.h"
#include "yaml-cpp/depthguard.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/parser.h"
#include "yaml-cpp/yaml.h"

namespace kcr {
namespace json {
namespace {

constexpr char kStrTag[] = "tag:yaml.org,2002:str";

std::string Where(const YAML::Node& node) {
  YAML::Mark m = node.Mark();
  if (m.is_null()) return "";
  return absl::StrCat(" at line ", m.line + 1, ", column ", m.column + 1);
}

bool IsOneOf(const std::string& s, std::initializer_list<const char*> set) {
  for (const char* e : set) {
    if (s == e) return true;
  }
  return false;
}

// Decimal integer per YAML 1.1's int rule (without the base-2/8/16/60
// forms, which manifests do not use): [-+]?(0|[1-9][0-9_]*).
bool LooksLikeInteger(const std::string& s) {
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

bool LooksLikeFloat(const std::string& s) {
  // [-+]?([0-9]*\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  size_t digits = 0;
  bool dot = false;
  for (; i < s.size(); ++i) {
    if (s[i] >= '0' && s[i] <= '9') {
      ++digits;
    } else if (s[i] == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (digits == 0) return false;
  if (i == s.size()) return true;
  if (s[i] != 'e' && s[i] != 'E') return false;
  ++i;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

// How many values a stream may convert to. An alias copies its anchor's
// whole subtree, so without a bound a short document of aliases of aliases
// expands exponentially; a document without aliases never holds more
// values than bytes.
size_t ValueBudget(std::string_view yaml) { return yaml.size() + 10000; }

// The first character YAML does not allow in a stream (its c-printable
// set, which go-yaml enforces: "control characters are not allowed"), as a
// byte offset, or npos. `yaml` is valid UTF-8.
size_t FirstNonPrintable(std::string_view yaml) {
  for (size_t i = 0; i < yaml.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(yaml[i]);
    if (c < 0x20) {
      if (c != '\t' && c != '\n' && c != '\r') return i;
    } else if (c == 0x7F) {
      return i;
    } else if (c == 0xC2 && i + 1 < yaml.size()) {
      // U+0080..U+009F, the C1 controls, except U+0085 (next line).
      const unsigned char d = static_cast<unsigned char>(yaml[i + 1]);
      if (d >= 0x80 && d <= 0x9F && d != 0x85) return i;
    } else if (c == 0xEF && i + 2 < yaml.size() &&
               static_cast<unsigned char>(yaml[i + 1]) == 0xBF &&
               (static_cast<unsigned char>(yaml[i + 2]) == 0xBE ||
                static_cast<unsigned char>(yaml[i + 2]) == 0xBF)) {
      return i;  // U+FFFE, U+FFFF
    }
  }
  return std::string_view::npos;
}

// Walks the stream's documents without building them, to find the one
// place yaml-cpp 0.7 loops: a token no node can start with at the top of a
// document (a lone ","): it yields an empty document without consuming the
// token, and YAML::LoadAll then adds empty documents until memory runs out.
// A document that starts where the previous one did made no progress.
class ProgressCheck : public YAML::EventHandler {
 public:
  bool stuck() const { return stuck_; }
  const YAML::Mark& mark() const { return mark_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (documents_++ > 0 && mark.pos == mark_.pos) stuck_ = true;
    mark_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  size_t documents_ = 0;
  YAML::Mark mark_;
  bool stuck_ = false;
};

// Everything but the recursion lives in the helpers below, kept out of
// line, so that Convert's own frame stays small: it recurses once per level
// on a connection thread's 1 MiB stack, and at -O0 every local of every
// branch would otherwise take its own slot in every frame.

ABSL_ATTRIBUTE_NOINLINE absl::Status Refuse(absl::string_view what,
                                            const YAML::Node& node) {
  return absl::InvalidArgumentError(absl::StrCat(what, Where(node)));
}

ABSL_ATTRIBUTE_NOINLINE absl::Status ConvertScalar(
    const YAML::Node& node, rapidjson::Value* out,
    rapidjson::Document::AllocatorType& alloc) {
  const std::string& s = node.Scalar();
  // Quoted scalars carry the non-specific tag "!"; plain ones "?".
  if (node.Tag() == "!" || node.Tag() == kStrTag) {
    out->SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), alloc);
    return absl::OkStatus();
  }
  if (IsOneOf(s, {"", "~", "null", "Null", "NULL"})) {
    out->SetNull();
  } else if (IsOneOf(s, {"true", "True", "TRUE", "yes", "Yes", "YES", "on",
                         "On", "ON", "y", "Y"})) {
    out->SetBool(true);
  } else if (IsOneOf(s, {"false", "False", "FALSE", "no", "No", "NO", "off",
                         "Off", "OFF", "n", "N"})) {
    out->SetBool(false);
  } else if (IsOneOf(s, {".inf", ".Inf", ".INF", "+.inf", "-.inf", "+.Inf",
                         "-.Inf", ".nan", ".NaN", ".NAN"})) {
    return Refuse(
        absl::StrCat("YAML value ", s, " cannot be represented in JSON"), node);
  } else if (LooksLikeInteger(s)) {
    int64_t i;
    uint64_t u;
    double d;
    if (absl::SimpleAtoi(s, &i)) {
      out->SetInt64(i);
    } else if (absl::SimpleAtoi(s, &u)) {
      out->SetUint64(u);
    } else if (absl::SimpleAtod(s, &d) && std::isfinite(d)) {
      out->SetDouble(d);
    } else {
      out->SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()),
                     alloc);
    }
  } else if (LooksLikeFloat(s)) {
    double d;
    if (absl::SimpleAtod(s, &d) && std::isfinite(d)) {
      out->SetDouble(d);
    } else {
      return Refuse(absl::StrCat("YAML number ", s, " is out of range"), node);
    }
  } else {
    out->SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), alloc);
  }
  return absl::OkStatus();
}

// Adds `value` to the object `out` under the scalar key `key`, refusing a
// key that is not a scalar or is already set.
ABSL_ATTRIBUTE_NOINLINE absl::Status AddMember(
    const YAML::Node& key, rapidjson::Value* value, rapidjson::Value* out,
    rapidjson::Document::AllocatorType& alloc) {
  const std::string& name = key.Scalar();
  rapidjson::Value k(name.data(), static_cast<rapidjson::SizeType>(name.size()),
                     alloc);
  out->AddMember(k, *value, alloc);
  return absl::OkStatus();
}

ABSL_ATTRIBUTE_NOINLINE absl::Status CheckKey(const YAML::Node& key,
                                              const rapidjson::Value& out) {
  if (!key.IsScalar()) {
    return Refuse("YAML mapping key is not a scalar", key);
  }
  const std::string& name = key.Scalar();
  if (out.HasMember(name.c_str())) {
    return Refuse(absl::StrCat("YAML mapping key \"", name, "\" already set"),
                  key);
  }
  return absl::OkStatus();
}

// Recursive over the YAML tree, one level per container: the depth check
// comes first, so the recursion never goes deeper than kMaxJsonDepth
// (yaml-cpp's parser has already refused anything past its own guard).
absl::Status Convert(const YAML::Node& node, rapidjson::Value* out,
                     rapidjson::Document::AllocatorType& alloc, int depth,
                     size_t* budget) {
  if (*budget == 0) {
    return Refuse("YAML expands to too many values through aliases", node);
  }
  --*budget;
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out->SetNull();
      return absl::OkStatus();
    case YAML::NodeType::Scalar:
      return ConvertScalar(node, out, alloc);
    case YAML::NodeType::Sequence:
    case YAML::NodeType::Map:
      break;
  }
  if (depth >= api::kMaxJsonDepth) {
    return Refuse(
        absl::StrCat("YAML nests deeper than ", api::kMaxJsonDepth, " levels"),
        node);
  }
  absl::Status status;
  if (node.IsSequence()) {
    out->SetArray();
    for (auto it = node.begin(); status.ok() && it != node.end(); ++it) {
      rapidjson::Value v;
      status = Convert(*it, &v, alloc, depth + 1, budget);
      if (status.ok()) out->PushBack(v, alloc);
    }
    return status;
  }
  out->SetObject();
  for (auto it = node.begin(); status.ok() && it != node.end(); ++it) {
    status = CheckKey(it->first, *out);
    if (!status.ok()) break;
    rapidjson::Value v;
    status = Convert(it->second, &v, alloc, depth + 1, budget);
    if (status.ok()) status = AddMember(it->first, &v, out, alloc);
  }
  return status;
}

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<rapidjson::Document>>>
YamlToJsonDocuments(std::string_view yaml) {
  std::vector<std::unique_ptr<rapidjson::Document>> out;
  if (const size_t valid = ValidUtf8Prefix(yaml); valid != yaml.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("YAML is not valid UTF-8 at offset ", valid));
  }
  if (const size_t bad = FirstNonPrintable(yaml);
      bad != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("YAML holds a control character at offset ", bad,
                     "; control characters are not allowed"));
  }
  size_t budget = ValueBudget(yaml);
  try {
    std::istringstream input{std::string(yaml)};
    YAML::Parser parser(input);
    ProgressCheck check;
    while (parser.HandleNextDocument(check)) {
      if (check.stuck()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "malformed YAML at line ", check.mark().line + 1, ", column ",
            check.mark().column + 1, ": did not find expected node content"));
      }
    }
    std::vector<YAML::Node> nodes = YAML::LoadAll(std::string(yaml));
    for (const YAML::Node& node : nodes) {
      if (node.IsNull()) continue;
      auto doc = std::make_unique<rapidjson::Document>();
      absl::Status s =
          Convert(node, doc.get(), doc->GetAllocator(), 0, &budget);
      if (!s.ok()) return s;
      out.push_back(std::move(doc));
    }
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's parser recurses per level and stops itself (about 500
    // levels) with a message that does not say why.
    return absl::InvalidArgumentError(absl::StrCat(
        "YAML nests deeper than ", api::kMaxJsonDepth, " levels at line ",
        e.mark.line + 1, ", column ", e.mark.column + 1));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed YAML at line ", e.mark.line + 1, ", column ",
                     e.mark.column + 1, ": ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed YAML: ", e.what()));
  }
  return out;
}

absl::StatusOr<std::unique_ptr<rapidjson::Document>> YamlToJson(
    std::string_view yaml) {
  auto docs = YamlToJsonDocuments(yaml);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected one YAML document, found ", docs->size()));
  }
  return std::move(docs->front());
}

}  // namespace json
}  // namespace kcr
