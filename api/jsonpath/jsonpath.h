// JSONPath: the template language of client-go's util/jsonpath, as used by
// CRD additionalPrinterColumns (`.spec.replicas`) and `kubectl get -o
// jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'`, evaluated over
// RapidJSON values.
//
// Syntax (inside `{...}`; text outside braces is printed as is):
//   .a.b  .a\.b          field of an object (`\` escapes a terminator)
//   ['a.b']              field named by a quoted key (one key, no escapes)
//   [n] [-1] [a:b:c]     index and slice of an array
//   [*]  .*              every element (an object's values in key order)
//   [0,2] ['a','b']      union
//   ..name               recursive descent
//   [?(@.type=="Ready")] filter: == != < > <= >= against a quoted string,
//   [?(@.x)]             a number, true/false or another path; or existence
//   "text" 'text' 3 1.5 true   literals
//   {range EXPR}...{end} repeats the body with each result as the root
//   @ and $ name the current root and may be left out.
//
// Evaluation follows client-go: a field of null is skipped; a missing field
// is an error "<name> is not found" unless allow_missing_keys is set; an
// index out of range is an error ("array index out of bounds: index 3,
// length 2"); objects are walked in sorted key order. Printing follows
// JSONPath.PrintResults: strings raw, numbers as Go prints them, null as
// "<nil>", objects and arrays as compact JSON with sorted keys, several
// results separated by one space.
//
// Deliberate differences from client-go, each the more useful reading:
//   - ['a.b'] is the single key "a.b" (client-go splits it at the dot);
//   - `{.}` (an empty field name) is the current value;
//   - numbers compare by value in filters (client-go never finds an integer
//     field equal to an integer literal: it compares int64 with float64);
//   - unknown identifiers and filter operators are parse errors (client-go
//     reports them when evaluating).
//
// Limits, so that hostile templates and data cannot exhaust stack or memory:
// templates longer than kMaxTemplateBytes and ranges nested deeper than
// kMaxRangeDepth are rejected when parsing; an evaluation that produces more
// than kMaxResults values fails with ResourceExhausted. Nothing here
// recurses over the data: recursive descent and printing walk it with an
// explicit stack.
//
// Thread safety: a JsonPath is immutable after Parse; any number of threads
// may evaluate it at once. Copies share the parsed template.
#ifndef KCR_API_JSONPATH_JSONPATH_H_
#define KCR_API_JSONPATH_JSONPATH_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace jsonpath {

inline constexpr size_t kMaxTemplateBytes = 64 * 1024;
inline constexpr int kMaxRangeDepth = 64;
inline constexpr size_t kMaxResults = size_t{1} << 20;

struct EvalOptions {
  // A field that does not exist yields no value instead of an error
  // (kubectl's --allow-missing-template-keys, the printer columns' setting).
  bool allow_missing_keys = false;
};

// One list of values per text or `{...}` action of the template, in order;
// a range contributes the lists of its body once per iteration. Pointers
// point into the evaluated data or into the JsonPath (for literals): valid
// while both live.
using Results = std::vector<std::vector<const rapidjson::Value*>>;

class JsonPath {
 public:
  // Parses a template such as "{.metadata.name}" or
  // "{range .items[*]}{.metadata.name}{\"\\n\"}{end}". InvalidArgument with
  // client-go's wording: "unclosed action", "unterminated array",
  // "invalid array index x", "unterminated filter",
  // "unclosed array expect ]", "unterminated quoted string",
  // "unrecognized character in action: U+0023 '#'",
  // "invalid multiple recursive descent", "cannot parse number 1.2.3",
  // "unrecognized identifier foo", "unrecognized filter operator =",
  // "not in range, nothing to end".
  static absl::StatusOr<JsonPath> Parse(std::string_view text);

  // Parses a bare expression as CRD printer columns give it: ".spec.size"
  // is parsed as "{.spec.size}".
  static absl::StatusOr<JsonPath> ParseExpression(std::string_view expr);

  // Evaluates the template over `data`.
  absl::StatusOr<Results> FindResults(const rapidjson::Value& data,
                                      const EvalOptions& options = {}) const;

  // Evaluates and prints, as `kubectl get -o jsonpath` does.
  absl::StatusOr<std::string> Execute(const rapidjson::Value& data,
                                      const EvalOptions& options = {}) const;

  // Prints one list of results: each value as PrintValue, separated by a
  // space.
  static std::string PrintResults(
      absl::Span<const rapidjson::Value* const> values);

  // One value as client-go prints it: a string raw, an integer in decimal, a
  // float as Go's %v ("1.5", "1e+21"), true/false, null as "<nil>", an
  // object or array as Go's json.Marshal (compact, keys sorted, <>& escaped
  // as \u003c \u003e \u0026).
  static std::string PrintValue(const rapidjson::Value& value);

 private:
  struct Impl;
  explicit JsonPath(std::shared_ptr<const Impl> impl)
      : impl_(std::move(impl)) {}

  std::shared_ptr<const Impl> impl_;
};

// Go's formatting of a float64: %v (strconv 'g' with the shortest
// representation: "0.1", "1e+21", "1.234567e+06") and encoding/json's
// ("1e+21", "1234567", "1e-7").
std::string FormatGoFloat(double value);
std::string FormatGoJsonFloat(double value);

}  // namespace jsonpath
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_JSONPATH_JSONPATH_H_
