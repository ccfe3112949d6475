// YAML manifests to RapidJSON, resolving plain scalars the way kubectl does
// (sigs.k8s.io/yaml over go-yaml v2, i.e. YAML 1.1 rules): `3` is an
// integer, `1.5` a number, `true`/`yes`/`on` (any of their capitalisations
// go-yaml knows) booleans, `null`/`~`/empty null; quoted scalars and
// explicitly tagged `!!str` scalars stay strings. Used to load CRDs, samples
// and other manifests.
#ifndef KCR_API_JSON_YAML_TO_JSON_H_
#define KCR_API_JSON_YAML_TO_JSON_H_

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/json_limits.h"
#include "rapidjson/document.h"

namespace kcr {
namespace json {

// Converts every document of a (possibly multi-document, "---"-separated)
// YAML stream; empty documents are skipped. InvalidArgument with the line
// and column for malformed YAML, a non-scalar mapping key, a scalar JSON
// cannot hold (.inf, .nan), bytes that are not UTF-8 or characters YAML
// does not allow (control characters; go-yaml refuses both), a token no
// node starts with (a lone ","), nesting deeper than kMaxJsonDepth (the limit
// JSON bodies share), or aliases that would expand the stream to more
// values than it has bytes plus 10,000 (a "billion laughs" document: a few
// hundred bytes that name the same anchor over and over).
absl::StatusOr<std::vector<std::unique_ptr<rapidjson::Document>>>
YamlToJsonDocuments(std::string_view yaml);

// As above, for a stream that must hold exactly one document.
absl::StatusOr<std::unique_ptr<rapidjson::Document>> YamlToJson(
    std::string_view yaml);

}  // namespace json
}  // namespace kcr

#endif  // KCR_API_JSON_YAML_TO_JSON_H_
