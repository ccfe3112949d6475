// The schemas of the OpenAPI documents: each kind's and each list's schema
// (components.schemas in v3, definitions in v2) under kube-openapi's names,
// the apimachinery schemas they refer to (ObjectMeta, ListMeta, Status,
// DeleteOptions, Patch, autoscaling/v1 Scale), and the JSON helpers the
// document builders share.
//
// Internal to the OpenAPI builders (openapi_v3.h, openapi_v2.h) and the
// service (openapi.h).
#ifndef KCR_APISERVER_ENDPOINTS_OPENAPI_SCHEMAS_H_
#define KCR_APISERVER_ENDPOINTS_OPENAPI_SCHEMAS_H_

#include <string>
#include <string_view>

#include "apiserver/endpoints/openapi_kinds.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace openapi_internal {

using Allocator = rapidjson::Document::AllocatorType;

// Where a v3 document's references point.
inline constexpr char kRefPrefixV3[] = "#/components/schemas/";
// The kube-openapi name prefix of the apimachinery meta/v1 types.
inline constexpr char kMeta[] = "io.k8s.apimachinery.pkg.apis.meta.v1.";

bool HasPrefix(std::string_view s, std::string_view prefix);

// Sets member `name` of `object` to `value`, replacing an existing one.
void Set(rapidjson::Value* object, std::string_view name,
         rapidjson::Value value, Allocator& a);

// {"$ref": "#/components/schemas/<name>"}.
rapidjson::Value RefTo(std::string_view name, Allocator& a);

// The kube-openapi name of `kind` of `api`'s group-version:
// io.k8s.api.core.v1.Pod for a built-in kind, org.example.v1.Nginx for a
// custom resource of group example.org.
std::string SchemaName(const OpenApiKind& api, std::string_view kind);

// "/api/v1" or "/apis/<group>/<version>".
std::string GroupVersionPath(const OpenApiKind& api);

// The kind's schema: its own schema (for a CRD its openAPIV3Schema) with
// apiVersion, kind and metadata as every kind has them, and its
// group-version-kind.
rapidjson::Value KindSchema(const OpenApiKind& api, Allocator& a);

// The schema of the kind's list.
rapidjson::Value ListSchema(const OpenApiKind& api, Allocator& a);

// Adds to `schemas` every apimachinery or built-in struct schema
// (GoStructSchema) that something in `paths` or `schemas` refers to, and
// what those refer to.
void AddReferencedCommonSchemas(const rapidjson::Value& paths,
                                rapidjson::Value* schemas, Allocator& a);

// `v` as compact JSON.
std::string ToJson(const rapidjson::Value& v);

}  // namespace openapi_internal
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_OPENAPI_SCHEMAS_H_
