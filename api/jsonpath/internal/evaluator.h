// Evaluation of a parsed JSONPath template against a JSON value (client-go's
// k8s.io/client-go/util/jsonpath jsonpath.go, FindResults).
#ifndef KCR_API_JSONPATH_INTERNAL_EVALUATOR_H_
#define KCR_API_JSONPATH_INTERNAL_EVALUATOR_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "api/jsonpath/internal/node.h"
#include "api/jsonpath/jsonpath.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace jsonpath {
namespace internal {

// Evaluates `segments` against `root`, appending one list of values per
// segment (per iteration inside a range) to `*results`.
absl::Status Evaluate(const std::vector<Segment>& segments,
                      const rapidjson::Value& root, const EvalOptions& options,
                      Results* results);

// The string a JSON string value holds.
absl::string_view Str(const rapidjson::Value& v);

// An object's member values in Go's sorted-key order. For a repeated key
// the last one wins, as when Go decodes into a map.
std::vector<const rapidjson::Value*> SortedMemberValues(
    const rapidjson::Value& object);

}  // namespace internal
}  // namespace jsonpath
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_JSONPATH_INTERNAL_EVALUATOR_H_
