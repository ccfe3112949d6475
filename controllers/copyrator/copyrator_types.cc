#include "controllers/copyrator/copyrator_types.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/selector/label_selector.h"
#include "base/status_macros.h"

namespace kcr::copyrator {

using namespace api::crd;            // NOLINT: the CRD field types and
using namespace api::crd::internal;  // NOLINT: helpers are this file's idiom.

namespace {

// A DNS-1123 label (a namespace's name), with apimachinery's
// IsDNS1123Label message.
void ValidateDns1123Label(absl::string_view path, const std::string& v,
                          std::vector<std::string>* out) {
  bool ok = !v.empty() && v.size() <= 63;
  for (size_t i = 0; ok && i < v.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(v[i]);
    bool alnum = absl::ascii_isdigit(c) || (c >= 'a' && c <= 'z');
    if (!alnum && !(c == '-' && i > 0 && i + 1 < v.size())) ok = false;
  }
  if (ok) return;
  out->push_back(absl::StrCat(
      path, ": Invalid value: ", Quote(v),
      ": a lowercase RFC 1123 label must consist of lower case alphanumeric "
      "characters or '-', and must start and end with an alphanumeric "
      "character (e.g. 'my-name',  or '123-abc', regex used for validation "
      "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
}

// What the CRD's schema cannot say about `selector` (a label map or a
// selector string) and `namespace` (a name or a list of names): a
// structural schema gives each node one type, so both are untyped there.
// The messages have the field-error form the schema's have.
std::vector<std::string> ValidateSelectorAndNamespace(const CopyratorRule& r) {
  using SelectorForm = CopyratorRule::SelectorForm;
  using NamespaceForm = CopyratorRule::NamespaceForm;
  std::vector<std::string> out;
  if (r.selector_form == SelectorForm::kLabelMap) {
    for (const auto& [key, value] : r.selector_labels) {
      absl::Status s = api::ValidateLabelKey(key);
      if (!s.ok()) {
        out.push_back(absl::StrCat("selector: Invalid value: ", Quote(key),
                                   ": ", s.message()));
      }
      s = api::ValidateLabelValue(value);
      if (!s.ok()) {
        out.push_back(absl::StrCat("selector.", key, ": Invalid value: ",
                                   Quote(value), ": ", s.message()));
      }
    }
  } else if (r.selector_form == SelectorForm::kString) {
    absl::StatusOr<api::LabelSelector> s =
        api::LabelSelector::Parse(r.selector_string);
    if (!s.ok()) {
      out.push_back(
          absl::StrCat("selector: Invalid value: ", Quote(r.selector_string),
                       ": ", s.status().message()));
    }
  }
  if (r.namespace_form == NamespaceForm::kList && r.namespaces.empty()) {
    out.push_back(
        "namespace: Invalid value: 0: namespace in body should have at "
        "least 1 items");
  }
  for (size_t i = 0; i < r.namespaces.size(); ++i) {
    std::string path = r.namespace_form == NamespaceForm::kList
                           ? absl::StrCat("namespace[", i, "]")
                           : std::string("namespace");
    ValidateDns1123Label(path, r.namespaces[i], &out);
  }
  return out;
}

}  // namespace

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
    KCR_RETURN_IF_ERROR(
        ReadStatusCommon(*status, &s.observed_generation, &s.conditions));
    r.status = std::move(s);
  }
  return r;
}

std::vector<std::string> CopyratorRule::Validate() const {
  std::vector<std::string> out = CustomResource::Validate();
  // The shape checks follow ruleType's errors and precede status's, where
  // selector and namespace stand in the schema's property order.
  auto status_errors = std::find_if(
      out.begin(), out.end(),
      [](const std::string& e) { return absl::StartsWith(e, "status"); });
  std::vector<std::string> shape = ValidateSelectorAndNamespace(*this);
  out.insert(status_errors, shape.begin(), shape.end());
  return out;
}

rapidjson::Document CopyratorRule::ToJson() const {
  rapidjson::Document d = NewDocument(kApiVersion, kKind, metadata);
  auto& a = d.GetAllocator();
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
    WriteStatusCommon(&st, status->observed_generation, status->conditions, a);
    WriteMember(&d, "status", &st, a);
  }
  return d;
}

}  // namespace kcr::copyrator
