// The paths of an OpenAPI v3 document: the REST paths of a kind with their
// operations (list, create, deletecollection, get, replace, patch, delete,
// and the status and scale subresources' get, replace and patch) and their
// query parameters, as kube-apiserver lists them.
//
// Internal to the OpenAPI v3 builder (openapi_v3.h).
#ifndef KCR_APISERVER_ENDPOINTS_OPENAPI_PATHS_H_
#define KCR_APISERVER_ENDPOINTS_OPENAPI_PATHS_H_

#include "apiserver/endpoints/openapi_kinds.h"
#include "apiserver/endpoints/openapi_schemas.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace openapi_internal {

// Adds the REST paths of `api` to `paths`, as kube-apiserver lists them for
// a custom resource. No PATCH operation lists strategic merge patch.
void AddPaths(const OpenApiKind& api, rapidjson::Value* paths, Allocator& a);

}  // namespace openapi_internal
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_OPENAPI_PATHS_H_
