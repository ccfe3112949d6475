// RFC 6902 JSON patch ("application/json-patch+json"): an array of
// operations (add, remove, replace, move, copy, test) addressed by RFC 6901
// JSON pointers, applied in order and atomically.
//
//   rapidjson::Document doc = ...;
//   KCR_RETURN_IF_ERROR(ApplyJsonPatch(patch, &doc));
//
// Errors are InvalidArgument and name the failing operation (counted from
// 0), its op and path, and the reason:
//   operation 2 (replace /spec/x): path not found
// A test operation that does not hold fails the same way ("test failed").
// Inputs nested deeper than kMaxJsonDepth are refused; nothing crashes on
// any input.
#ifndef KCR_API_PATCH_JSON_PATCH_H_
#define KCR_API_PATCH_JSON_PATCH_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/json/json_util.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {

// Splits an RFC 6901 JSON pointer into unescaped reference tokens: "" is
// the whole document, "/a~1b/~0c" is {"a/b", "~c"}. InvalidArgument when it
// does not start with '/' or holds a '~' not followed by '0' or '1'.
absl::StatusOr<std::vector<std::string>> ParseJsonPointer(
    std::string_view pointer);

// The value `pointer` refers to in `root`, or nullptr when it does not
// exist (or the pointer is malformed). Array indices follow RFC 6901:
// decimal without leading zeros, within bounds.
const rapidjson::Value* ResolveJsonPointer(const rapidjson::Value& root,
                                           std::string_view pointer);

struct JsonPatchOptions {
  // Deepest nesting a result may reach; larger results fail the operation.
  int max_depth = kMaxJsonDepth;
  // Bound on the total bytes that copy operations may duplicate, so that a
  // short patch cannot grow a document exponentially (as evanphx/json-patch's
  // AccumulatedCopySizeLimit). 0 means no limit.
  size_t max_copied_bytes = size_t{64} << 20;
};

// Applies `patch` (a JSON array of operation objects) to `*doc`. Atomic: on
// any error `*doc` is left exactly as it was. Unknown members of an
// operation are ignored (RFC 6902 section 4).
absl::Status ApplyJsonPatch(const rapidjson::Value& patch,
                            rapidjson::Document* doc,
                            const JsonPatchOptions& options = {});

// Returns `target` with `patch` applied; `target` is not modified.
absl::StatusOr<rapidjson::Document> ApplyJsonPatch(
    const rapidjson::Value& target, const rapidjson::Value& patch,
    const JsonPatchOptions& options = {});

// Text form: parses both (InvalidArgument naming which one is not valid
// JSON) and returns the compact JSON text of the result.
absl::StatusOr<std::string> ApplyJsonPatch(
    std::string_view target_json, std::string_view patch_json,
    const JsonPatchOptions& options = {});

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_PATCH_JSON_PATCH_H_
