// Kubernetes label selectors with the semantics of apimachinery's
// pkg/labels: the string syntax accepted by `kubectl -l` and the
// `labelSelector` query parameter, the LabelSelector JSON form used in specs
// (Deployment.spec.selector, CopyratorRule.selector), matching against a set
// of labels, and the canonical string rendering.
//
//   KCR_ASSIGN_OR_RETURN(LabelSelector s,
//                        LabelSelector::Parse("env in (prod,qa),!canary"));
//   if (s.Matches(labels)) { ... }
//   s.ToString();  // "!canary,env in (prod,qa)"
//
// A LabelSelector is an immutable value: cheap to copy, safe to share and to
// read from many threads at once.
#ifndef KCR_API_SELECTOR_LABEL_SELECTOR_H_
#define KCR_API_SELECTOR_LABEL_SELECTOR_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {

// A plain label map, as in metadata.labels.
using LabelMap = absl::flat_hash_map<std::string, std::string>;

// Read access to a set of labels. Implement it to match a selector against
// labels stored in any form without copying them into a LabelMap.
class Labels {
 public:
  virtual ~Labels() = default;

  // Returns the value of `key`, or nullopt when the key is absent. The view
  // stays valid as long as the underlying labels do.
  virtual std::optional<std::string_view> Get(std::string_view key) const = 0;
};

// Labels backed by a LabelMap. Holds a reference: `map` must outlive it.
class MapLabels : public Labels {
 public:
  explicit MapLabels(const LabelMap& map) : map_(map) {}
  std::optional<std::string_view> Get(std::string_view key) const override;

 private:
  const LabelMap& map_;
};

// Labels backed by a JSON object such as metadata.labels. A null pointer or a
// value that is not an object holds no labels; members whose value is not a
// string are treated as absent. Holds a pointer: `labels` must outlive it.
class JsonLabels : public Labels {
 public:
  explicit JsonLabels(const rapidjson::Value* labels) : labels_(labels) {}
  std::optional<std::string_view> Get(std::string_view key) const override;

 private:
  const rapidjson::Value* labels_;
};

// The operators of a requirement. The names are apimachinery's
// selection.Operator values.
enum class SelectorOperator {
  kDoesNotExist,  // "!key"
  kEquals,        // "key=value"
  kDoubleEquals,  // "key==value"
  kIn,            // "key in (a,b)"
  kNotEquals,     // "key!=value"
  kNotIn,         // "key notin (a,b)"
  kExists,        // "key"
  kGreaterThan,   // "key>5": the label's value, as an integer, is greater
  kLessThan,      // "key<5"
};

// apimachinery's name of the operator ("!", "=", "==", "in", "!=", "notin",
// "exists", "gt", "lt"); requirements with the same key sort by it.
std::string_view SelectorOperatorName(SelectorOperator op);

// Returns OK when `key` is a valid label key: an optional DNS-1123 subdomain
// prefix (at most 253 characters) and '/', then a name of 1 to 63
// characters from [A-Za-z0-9-_.] that starts and ends with an alphanumeric.
// The error message says what is wrong.
absl::Status ValidateLabelKey(std::string_view key);

// Returns OK when `value` is a valid label value: empty, or at most 63
// characters from [A-Za-z0-9-_.] starting and ending with an alphanumeric.
absl::Status ValidateLabelValue(std::string_view value);

// One term of a selector: a key, an operator and its values.
class LabelRequirement {
 public:
  // Validates and builds a requirement, following apimachinery's
  // NewRequirement: the key and every value must be valid; In and NotIn take
  // at least one value, Equals, DoubleEquals and NotEquals exactly one,
  // Exists and DoesNotExist none, GreaterThan and LessThan one integer.
  // Values are stored sorted and without duplicates.
  static absl::StatusOr<LabelRequirement> Create(
      std::string_view key, SelectorOperator op,
      std::vector<std::string> values);

  const std::string& key() const { return key_; }
  SelectorOperator op() const { return op_; }
  // Sorted, no duplicates.
  const std::vector<std::string>& values() const { return values_; }

  // apimachinery's Requirement.Matches. Note that NotIn and NotEquals match
  // when the key is absent, and GreaterThan/LessThan never match a value
  // that is not an integer.
  bool Matches(const Labels& labels) const;

  // The requirement in selector syntax, e.g. "a in (x,y)", "!b", "c=d".
  std::string ToString() const;

  friend bool operator==(const LabelRequirement& a, const LabelRequirement& b) {
    return a.op_ == b.op_ && a.key_ == b.key_ && a.values_ == b.values_;
  }
  friend bool operator!=(const LabelRequirement& a, const LabelRequirement& b) {
    return !(a == b);
  }

 private:
  friend class LabelSelector;
  LabelRequirement(std::string key, SelectorOperator op,
                   std::vector<std::string> values)
      : key_(std::move(key)), op_(op), values_(std::move(values)) {}

  std::string key_;
  SelectorOperator op_;
  std::vector<std::string> values_;
};

// A conjunction of requirements. The empty selector matches everything; the
// Nothing() selector matches no labels at all.
class LabelSelector {
 public:
  // The selector that matches everything (same as Parse("")).
  LabelSelector() = default;

  // Parses the string syntax of apimachinery's labels.Parse:
  //   selector    ::= requirement ("," requirement)*   (or empty)
  //   requirement ::= ["!"] KEY
  //                 | KEY ("in" | "notin") "(" VALUE ("," VALUE)* ")"
  //                 | KEY ("=" | "==" | "!=") VALUE
  //                 | KEY (">" | "<") INTEGER
  // Spaces, tabs and newlines between tokens are ignored; values may be
  // empty ("a=", "a in (,x)"); "in" and "notin" may also be keys or values.
  // Requirements are sorted by key, then operator, then values.
  // On bad input returns InvalidArgument naming the byte offset and the text
  // of the offending token, e.g.
  //   unable to parse requirement: at 2 "!": expected identifier
  static absl::StatusOr<LabelSelector> Parse(std::string_view selector);

  // Converts the LabelSelector JSON form
  //   {"matchLabels": {"k": "v"},
  //    "matchExpressions": [{"key": "k", "operator": "In", "values": [..]}]}
  // like apimachinery's LabelSelectorAsSelector: JSON null gives Nothing(),
  // an object without requirements gives the empty selector; operators are
  // In, NotIn, Exists and DoesNotExist (case-sensitive). Malformed input
  // (wrong types, unknown operator, invalid key or value, values given to
  // Exists or missing for In) returns InvalidArgument naming the field.
  static absl::StatusOr<LabelSelector> FromLabelSelector(
      const rapidjson::Value& label_selector);

  // A selector requiring key=value for every entry, without validation (as
  // apimachinery's SelectorFromSet: the server rejects invalid ones).
  static LabelSelector SelectorFromSet(const LabelMap& set);
  // The same, validating every key and value.
  static absl::StatusOr<LabelSelector> ValidatedSelectorFromSet(
      const LabelMap& set);

  // Matches all labels. ToString() is "".
  static LabelSelector Everything() { return LabelSelector(); }
  // Matches no labels, not even empty ones. ToString() is "", as in
  // apimachinery; it is the only selector whose string does not parse back
  // to itself.
  static LabelSelector Nothing();

  // Returns a copy with `requirement` added, kept in canonical order.
  LabelSelector Add(LabelRequirement requirement) const;

  // True when every requirement matches; false always for Nothing().
  bool Matches(const Labels& labels) const;
  bool Matches(const LabelMap& labels) const;
  // `labels` is a metadata.labels JSON object, or null for no labels.
  bool Matches(const rapidjson::Value* labels) const;

  // True when the selector has no requirements (matches everything).
  // Nothing() is not empty.
  bool Empty() const { return !nothing_ && requirements_.empty(); }
  bool IsNothing() const { return nothing_; }

  // If a requirement on `key` pins it to a single value (=, ==, or in with
  // one value), returns that value.
  std::optional<std::string> RequiresExactMatch(std::string_view key) const;

  // The canonical string of apimachinery's Selector.String(): requirements
  // in order joined by ",", e.g. "a in (x,y),!b,c=d". Parse(ToString())
  // gives back an equal selector.
  std::string ToString() const;

  const std::vector<LabelRequirement>& requirements() const {
    return requirements_;
  }

  friend bool operator==(const LabelSelector& a, const LabelSelector& b) {
    return a.nothing_ == b.nothing_ && a.requirements_ == b.requirements_;
  }
  friend bool operator!=(const LabelSelector& a, const LabelSelector& b) {
    return !(a == b);
  }

 private:
  explicit LabelSelector(std::vector<LabelRequirement> requirements);

  std::vector<LabelRequirement> requirements_;
  bool nothing_ = false;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_SELECTOR_LABEL_SELECTOR_H_
