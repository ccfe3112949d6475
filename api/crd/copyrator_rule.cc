#include "api/crd/copyrator_rule.h"

#include "absl/strings/str_cat.h"
#include "api/selector/label_selector.h"
#include "runtime/base/status_macros.h"

namespace kcr {
namespace api {
namespace crd {

using namespace internal;  // NOLINT: the field helpers are this file's idiom.

absl::StatusOr<CopyratorRule> CopyratorRule::FromJson(
    const rapidjson::Value& json) {
  CopyratorRule r;
  KCR_RETURN_IF_ERROR(
      ReadTypeAndMetadata(json, kApiVersion, kKind, &r.metadata));
  KCR_RETURN_IF_ERROR(ReadString(json, "ruleType", "", &r.rule_type));

  auto sel = json.FindMember("selector");
  if (sel != json.MemberEnd() && !sel->value.IsNull()) {
    const rapidjson::Value& v = sel->value;
    if (v.IsString()) {
      r.selector_form = SelectorForm::kString;
      r.selector_string.assign(v.GetString(), v.GetStringLength());
    } else if (v.IsObject()) {
      r.selector_form = SelectorForm::kLabelMap;
      for (const auto& m : v.GetObject()) {
        std::string key(m.name.GetString(), m.name.GetStringLength());
        if (!m.value.IsString()) {
          return absl::InvalidArgumentError(
              absl::StrCat("selector.", key,
                           ": must be a string (quote label values "
                           "such as \"true\")"));
        }
        r.selector_labels.emplace_back(
            std::move(key),
            std::string(m.value.GetString(), m.value.GetStringLength()));
      }
    } else {
      return absl::InvalidArgumentError(
          "selector: must be a label map or a selector string");
    }
  }

  auto ns = json.FindMember("namespace");
  if (ns != json.MemberEnd() && !ns->value.IsNull()) {
    const rapidjson::Value& v = ns->value;
    if (v.IsString()) {
      r.namespace_form = NamespaceForm::kString;
      r.namespaces.emplace_back(v.GetString(), v.GetStringLength());
    } else if (v.IsArray()) {
      r.namespace_form = NamespaceForm::kList;
      KCR_RETURN_IF_ERROR(ReadStringList(json, "namespace", "", &r.namespaces));
    } else {
      return absl::InvalidArgumentError(
          "namespace: must be a string or a list of strings");
    }
  }

  const rapidjson::Value* status;
  KCR_RETURN_IF_ERROR(ReadObject(json, "status", "", &status));
  if (status != nullptr) {
    Status s;
    KCR_RETURN_IF_ERROR(ReadInt(*status, "copies", "status", &s.copies));
    KCR_RETURN_IF_ERROR(ReadInt(*status, "observedGeneration", "status",
                                &s.observed_generation));
    KCR_RETURN_IF_ERROR(
        ReadConditions(*status, "conditions", "status", &s.conditions));
    r.status = std::move(s);
  }
  return r;
}

std::vector<std::string> CopyratorRule::Validate() const {
  std::vector<std::string> out;
  if (!rule_type) {
    ValidateRequired("ruleType", &out);
  } else {
    ValidateEnum("ruleType", *rule_type, {"configmap", "secret"}, &out);
  }
  if (selector_form == SelectorForm::kLabelMap) {
    for (const auto& [key, value] : selector_labels) {
      std::string path = absl::StrCat("selector.", key);
      absl::Status s = ValidateLabelKey(key);
      if (!s.ok()) {
        out.push_back(absl::StrCat("selector: Invalid value: ", Quote(key),
                                   ": ", s.message()));
      }
      s = ValidateLabelValue(value);
      if (!s.ok()) {
        out.push_back(absl::StrCat(path, ": Invalid value: ", Quote(value),
                                   ": ", s.message()));
      }
    }
  } else if (selector_form == SelectorForm::kString) {
    absl::StatusOr<LabelSelector> s = LabelSelector::Parse(selector_string);
    if (!s.ok()) {
      out.push_back(
          absl::StrCat("selector: Invalid value: ", Quote(selector_string),
                       ": ", s.status().message()));
    }
  }
  if (namespace_form == NamespaceForm::kList && namespaces.empty()) {
    out.push_back(
        "namespace: Invalid value: 0: namespace in body should have at "
        "least 1 items");
  }
  for (size_t i = 0; i < namespaces.size(); ++i) {
    std::string path = namespace_form == NamespaceForm::kList
                           ? absl::StrCat("namespace[", i, "]")
                           : std::string("namespace");
    ValidateDns1123Label(path, namespaces[i], &out);
  }
  if (status) {
    if (status->copies) {
      ValidateMinimum("status.copies", *status->copies, 0, &out);
    }
    if (status->observed_generation) {
      ValidateMinimum("status.observedGeneration", *status->observed_generation,
                      0, &out);
    }
    ValidateConditions("status.conditions", status->conditions, &out);
  }
  return out;
}

rapidjson::Document CopyratorRule::ToJson() const {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  WriteString(&d, "apiVersion", std::string(kApiVersion), a);
  WriteString(&d, "kind", std::string(kKind), a);
  WriteRaw(&d, "metadata", metadata, a);
  WriteString(&d, "ruleType", rule_type, a);
  if (selector_form == SelectorForm::kString) {
    WriteString(&d, "selector", selector_string, a);
  } else if (selector_form == SelectorForm::kLabelMap) {
    rapidjson::Value m(rapidjson::kObjectType);
    for (const auto& [key, value] : selector_labels) {
      WriteString(&m, key.c_str(), value, a);
    }
    WriteMember(&d, "selector", &m, a);
  }
  if (namespace_form == NamespaceForm::kString && !namespaces.empty()) {
    WriteString(&d, "namespace", namespaces.front(), a);
  } else if (namespace_form == NamespaceForm::kList) {
    rapidjson::Value list(rapidjson::kArrayType);
    for (const std::string& n : namespaces) {
      list.PushBack(
          rapidjson::Value(n.data(), static_cast<rapidjson::SizeType>(n.size()),
                           a),
          a);
    }
    WriteMember(&d, "namespace", &list, a);
  }
  if (status) {
    rapidjson::Value st(rapidjson::kObjectType);
    WriteInt(&st, "copies", status->copies, a);
    WriteInt(&st, "observedGeneration", status->observed_generation, a);
    WriteConditions(&st, "conditions", status->conditions, a);
    WriteMember(&d, "status", &st, a);
  }
  return d;
}

}  // namespace crd
}  // namespace api
}  // namespace kcr
