// Parsing of a JSONPath template into segments and nodes (client-go's
// k8s.io/client-go/util/jsonpath parser.go).
#ifndef KCR_API_JSONPATH_INTERNAL_PARSER_H_
#define KCR_API_JSONPATH_INTERNAL_PARSER_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "api/jsonpath/internal/node.h"

namespace kcr {
namespace api {
namespace jsonpath {
namespace internal {

// Parses a whole template into segments, nesting range bodies.
absl::Status ParseTemplate(absl::string_view input, LiteralPool* pool,
                           std::vector<Segment>* segments);

}  // namespace internal
}  // namespace jsonpath
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_JSONPATH_INTERNAL_PARSER_H_
