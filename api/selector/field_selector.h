// Kubernetes field selectors with the semantics of apimachinery's
// pkg/fields: comma-separated terms `field=value`, `field==value` and
// `field!=value`, all of which must hold. Fields are dotted paths into the
// object (metadata.name, metadata.namespace, status.phase, spec.nodeName).
//
//   KCR_ASSIGN_OR_RETURN(FieldSelector s,
//                        FieldSelector::Parse("status.phase!=Running"));
//   if (s.Matches(pod_json)) { ... }
//
// In values, ',', '=' and '\' are written escaped as "\,", "\=" and "\\";
// field names take no escapes. A FieldSelector is an immutable value.
#ifndef KCR_API_SELECTOR_FIELD_SELECTOR_H_
#define KCR_API_SELECTOR_FIELD_SELECTOR_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {

// "==" parses to kEquals, as in apimachinery, so it renders as "=".
enum class FieldOperator { kEquals, kNotEquals };

// One term of a field selector, with the value unescaped.
struct FieldRequirement {
  std::string field;
  FieldOperator op = FieldOperator::kEquals;
  std::string value;
  // Where a server reads the field in the object, when the field label is
  // not its own path (a Job's status.successful is status.succeeded), and
  // the value an absent field has (kube prints a missing count as "0", a
  // missing bool as "false"). Set by FieldSelector::Resolved; not part of
  // the selector's identity.
  std::string path;
  std::optional<std::string> if_absent;

  friend bool operator==(const FieldRequirement& a, const FieldRequirement& b) {
    return a.op == b.op && a.field == b.field && a.value == b.value;
  }
  friend bool operator!=(const FieldRequirement& a, const FieldRequirement& b) {
    return !(a == b);
  }
};

// Escapes '\', ',' and '=' in a value (apimachinery's EscapeValue).
std::string EscapeFieldValue(std::string_view value);

// Reverses EscapeFieldValue. InvalidArgument on an unknown escape ("\x"), a
// trailing '\', or an unescaped ',' or '='.
absl::StatusOr<std::string> UnescapeFieldValue(std::string_view escaped);

// The value of the dotted `path` in `object`, as a field selector compares
// it: a string as itself, a number or boolean as its JSON text ("3", "1.5",
// "true"), null or an absent field (or a path through a non-object) as "".
// Returns nullopt for an object or array: no value selects one, so `=` never
// matches it and `!=` always does.
std::optional<std::string> FieldValueAt(const rapidjson::Value& object,
                                        std::string_view path);

class FieldSelector {
 public:
  // Matches everything.
  FieldSelector() = default;

  // Parses a field selector. Empty terms are skipped ("" and "a=b,," are
  // valid). Each term is split at the first "!=", "==" or "="; the field
  // must be non-empty and the value is unescaped. Requirements are kept in
  // canonical order (sorted by their rendered term). On bad input returns
  // InvalidArgument naming the offset and text of the bad term, e.g.
  //   invalid field selector: at 12 "spec.x": expected '=', '==' or '!='
  static absl::StatusOr<FieldSelector> Parse(std::string_view selector);

  static FieldSelector Everything() { return FieldSelector(); }
  // field=value, without validation (apimachinery's OneTermEqualSelector).
  static FieldSelector OneTermEqual(std::string_view field,
                                    std::string_view value);
  // field=value for every entry.
  static FieldSelector FromSet(
      const absl::flat_hash_map<std::string, std::string>& set);

  // A copy in which requirements on `field` read `path` of the object (the
  // field itself when empty) and take `if_absent` when it is missing.
  FieldSelector Resolved(std::string_view field, std::string_view path,
                         std::optional<std::string> if_absent) const;

  // True when every requirement holds for the JSON object (see FieldValueAt).
  bool Matches(const rapidjson::Value& object) const;
  // True when every requirement holds for a flat field set such as
  // {"metadata.name": "x", "status.phase": "Running"}; absent fields are "".
  bool Matches(
      const absl::flat_hash_map<std::string, std::string>& fields) const;

  bool Empty() const { return requirements_.empty(); }

  // If a `field=value` requirement exists, returns its value (apimachinery's
  // RequiresExactMatch), e.g. to serve metadata.name=x as a single GET.
  std::optional<std::string> RequiresExactMatch(std::string_view field) const;

  // Canonical form: terms joined by ",", values escaped, "==" written "=".
  // Parse(ToString()) gives back an equal selector.
  std::string ToString() const;

  const std::vector<FieldRequirement>& requirements() const {
    return requirements_;
  }

  friend bool operator==(const FieldSelector& a, const FieldSelector& b) {
    return a.requirements_ == b.requirements_;
  }
  friend bool operator!=(const FieldSelector& a, const FieldSelector& b) {
    return !(a == b);
  }

 private:
  explicit FieldSelector(std::vector<FieldRequirement> requirements);

  std::vector<FieldRequirement> requirements_;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_SELECTOR_FIELD_SELECTOR_H_
