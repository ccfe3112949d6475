// The OpenAPI 3.0 documents of the served kinds, one per group-version
// (GET /openapi/v3/apis/<group>/<version>), and the index that lists them
// (GET /openapi/v3); openapi.h serves them.
#ifndef KCR_APISERVER_ENDPOINTS_OPENAPI_V3_H_
#define KCR_APISERVER_ENDPOINTS_OPENAPI_V3_H_

#include <map>
#include <string>
#include <vector>

#include "apiserver/endpoints/openapi_kinds.h"

namespace kcr {
namespace apiserver {

// The OpenAPI v3 documents (JSON) of `apis`, by "apis/<group>/<version>"
// ("api/v1" for the core group).
std::map<std::string, std::string> BuildOpenApiV3Documents(
    const std::vector<OpenApiKind>& apis);

// The /openapi/v3 index of documents by "apis/<group>/<version>" with
// their hashes.
std::string OpenApiV3IndexJson(
    const std::map<std::string, std::string>& hash_by_group_version);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_OPENAPI_V3_H_
