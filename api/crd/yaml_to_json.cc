#include "api/crd/yaml_to_json.h"

#include <cmath>
#include <cstdint>
#include <exception>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/patch/json_util.h"
#include "yaml-cpp/depthguard.h"
#include "yaml-cpp/yaml.h"

namespace kcr {
namespace api {
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
size_t ValueBudget(absl::string_view yaml) { return yaml.size() + 10000; }

// Recursive over the YAML tree, one level per container: the depth check
// comes first, so the recursion never goes deeper than kMaxJsonDepth
// (yaml-cpp's parser has already refused anything past its own guard).
absl::Status Convert(const YAML::Node& node, rapidjson::Value* out,
                     rapidjson::Document::AllocatorType& alloc, int depth,
                     size_t* budget) {
  if (*budget == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "YAML expands to too many values through aliases", Where(node)));
  }
  --*budget;
  if ((node.IsSequence() || node.IsMap()) && depth >= kMaxJsonDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "YAML nests deeper than ", kMaxJsonDepth, " levels", Where(node)));
  }
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out->SetNull();
      return absl::OkStatus();
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      // Quoted scalars carry the non-specific tag "!"; plain ones "?".
      if (node.Tag() == "!" || node.Tag() == kStrTag) {
        out->SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()),
                       alloc);
        return absl::OkStatus();
      }
      if (IsOneOf(s, {"", "~", "null", "Null", "NULL"})) {
        out->SetNull();
      } else if (IsOneOf(s, {"true", "True", "TRUE", "yes", "Yes", "YES",
                             "on", "On", "ON", "y", "Y"})) {
        out->SetBool(true);
      } else if (IsOneOf(s, {"false", "False", "FALSE", "no", "No", "NO",
                             "off", "Off", "OFF", "n", "N"})) {
        out->SetBool(false);
      } else if (IsOneOf(s, {".inf", ".Inf", ".INF", "+.inf", "-.inf",
                             "+.Inf", "-.Inf", ".nan", ".NaN", ".NAN"})) {
        return absl::InvalidArgumentError(absl::StrCat(
            "YAML value ", s, " cannot be represented in JSON", Where(node)));
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
          return absl::InvalidArgumentError(absl::StrCat(
              "YAML number ", s, " is out of range", Where(node)));
        }
      } else {
        out->SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()),
                       alloc);
      }
      return absl::OkStatus();
    }
    case YAML::NodeType::Sequence: {
      out->SetArray();
      out->Reserve(static_cast<rapidjson::SizeType>(node.size()), alloc);
      for (const auto& item : node) {
        rapidjson::Value v;
        absl::Status s = Convert(item, &v, alloc, depth + 1, budget);
        if (!s.ok()) return s;
        out->PushBack(v, alloc);
      }
      return absl::OkStatus();
    }
    case YAML::NodeType::Map: {
      out->SetObject();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "YAML mapping key is not a scalar", Where(kv.first)));
        }
        const std::string& key = kv.first.Scalar();
        if (out->HasMember(key.c_str())) {
          return absl::InvalidArgumentError(absl::StrCat(
              "YAML mapping key \"", key, "\" already set", Where(kv.first)));
        }
        rapidjson::Value v;
        absl::Status s = Convert(kv.second, &v, alloc, depth + 1, budget);
        if (!s.ok()) return s;
        rapidjson::Value k(key.data(),
                           static_cast<rapidjson::SizeType>(key.size()),
                           alloc);
        out->AddMember(k, v, alloc);
      }
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown YAML node type");
}

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<rapidjson::Document>>>
YamlToJsonDocuments(absl::string_view yaml) {
  std::vector<std::unique_ptr<rapidjson::Document>> out;
  if (const size_t valid = ValidUtf8Prefix(yaml); valid != yaml.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("YAML is not valid UTF-8 at offset ", valid));
  }
  size_t budget = ValueBudget(yaml);
  try {
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
        "YAML nests deeper than ", kMaxJsonDepth, " levels at line ",
        e.mark.line + 1, ", column ", e.mark.column + 1));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed YAML at line ", e.mark.line + 1, ", column ",
        e.mark.column + 1, ": ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed YAML: ", e.what()));
  }
  return out;
}

absl::StatusOr<std::unique_ptr<rapidjson::Document>> YamlToJson(
    absl::string_view yaml) {
  auto docs = YamlToJsonDocuments(yaml);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected one YAML document, found ", docs->size()));
  }
  return std::move(docs->front());
}

}  // namespace api
}  // namespace kcr
