// The Swagger 2.0 document of the served kinds (GET /openapi/v2 with a
// JSON Accept): their schemas under definitions, converted from the v3
// schemas as kube-apiserver converts CRD schemas; openapi.h serves it.
#ifndef KCR_APISERVER_ENDPOINTS_OPENAPI_V2_H_
#define KCR_APISERVER_ENDPOINTS_OPENAPI_V2_H_

#include <string>
#include <string_view>
#include <vector>

#include "apiserver/endpoints/openapi_kinds.h"

namespace kcr {
namespace apiserver {

// The Swagger 2.0 document (JSON) of `apis`: definitions only (paths is
// empty). `version` is info.version (the server's gitVersion).
std::string BuildSwaggerV2Document(const std::vector<OpenApiKind>& apis,
                                   std::string_view version);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_OPENAPI_V2_H_
