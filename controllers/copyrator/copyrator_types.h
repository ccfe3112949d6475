// CopyratorRule (flant.com/v1, plural copyrators, short name copyr): copy
// every ConfigMap or Secret matching `selector` from the source namespace
// into every Active namespace. A typed view of the JSON that
// manifests/crds/copyrator_rule.yaml describes; that manifest's schema,
// compiled into the binary, states the rules (see CustomResource). The fields
// are top-level, as in the tutorial the resource comes from:
//
//   apiVersion: flant.com/v1
//   kind: CopyratorRule
//   metadata: {name: main-rule}
//   ruleType: configmap
//   selector: {copyrator: "true"}
//   namespace: default
//
// `selector` is a label map or a label-selector string, and `namespace` a
// string or a list of strings; the form read is kept, so ToJson writes the
// object back exactly as it came. Unknown fields (top-level and in status)
// are dropped by FromJson; metadata is kept whole.
#ifndef KCR_CONTROLLERS_COPYRATOR_COPYRATOR_TYPES_H_
#define KCR_CONTROLLERS_COPYRATOR_COPYRATOR_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/crd/crd_common.h"
#include "api/crd/crd_manifests.h"
#include "api/crd/custom_resource.h"
#include "api/object.h"
#include "rapidjson/document.h"

namespace kcr::copyrator {

struct CopyratorRule : api::crd::CustomResource<CopyratorRule> {
  static constexpr char kGroup[] = "flant.com";
  static constexpr char kVersion[] = "v1";
  static constexpr char kApiVersion[] = "flant.com/v1";
  static constexpr char kKind[] = "CopyratorRule";
  static constexpr char kPlural[] = "copyrators";
  static constexpr bool kNamespaced = true;
  static constexpr const char* kCrdManifest = api::crd::kCopyratorRuleCrdYaml;

  enum class SelectorForm { kAbsent, kLabelMap, kString };
  enum class NamespaceForm { kAbsent, kString, kList };

  struct Status {
    std::optional<int64_t> copies;
    std::optional<int64_t> observed_generation;
    std::vector<api::crd::Condition> conditions;
    friend bool operator==(const Status& a, const Status& b) {
      return a.copies == b.copies &&
             a.observed_generation == b.observed_generation &&
             a.conditions == b.conditions;
    }
  };

  api::crd::RawJson metadata;
  std::optional<std::string> rule_type;

  SelectorForm selector_form = SelectorForm::kAbsent;
  // kLabelMap: the map, in document order.
  std::vector<std::pair<std::string, std::string>> selector_labels;
  // kString: the selector string ("app=a,tier in (web)").
  std::string selector_string;

  NamespaceForm namespace_form = NamespaceForm::kAbsent;
  // kString: one entry; kList: the list as written.
  std::vector<std::string> namespaces;

  std::optional<Status> status;

  // Reads a CopyratorRule. A selector that is neither an object of strings
  // nor a string, or a namespace that is neither a string nor a list of
  // strings, is InvalidArgument naming the field, as is any other field of
  // the wrong JSON type.
  static absl::StatusOr<CopyratorRule> FromJson(const rapidjson::Value& json);

  // Every violation of the schema, in kube-apiserver's wording, and of
  // what a structural schema cannot say about the two fields it leaves
  // untyped: label keys and values valid, a selector string that parses,
  // each source namespace a DNS-1123 label and a list of them not empty.
  std::vector<std::string> Validate() const;

  // The object as JSON: FromJson(ToJson()) == *this, and for an object
  // without status or unknown fields ToJson reproduces the input.
  rapidjson::Document ToJson() const;

  friend bool operator==(const CopyratorRule& a, const CopyratorRule& b) {
    return a.metadata == b.metadata && a.rule_type == b.rule_type &&
           a.selector_form == b.selector_form &&
           a.selector_labels == b.selector_labels &&
           a.selector_string == b.selector_string &&
           a.namespace_form == b.namespace_form &&
           a.namespaces == b.namespaces && a.status == b.status;
  }
};

}  // namespace kcr::copyrator

#endif  // KCR_CONTROLLERS_COPYRATOR_COPYRATOR_TYPES_H_
