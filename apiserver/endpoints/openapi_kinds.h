// The kinds the OpenAPI documents (openapi.h) describe: every served
// version of a CustomResourceDefinition with its openAPIV3Schema, and every
// built-in resource with a schema made from its Go type (builtin_schema.h).
#ifndef KCR_APISERVER_ENDPOINTS_OPENAPI_KINDS_H_
#define KCR_APISERVER_ENDPOINTS_OPENAPI_KINDS_H_

#include <memory>
#include <string>
#include <vector>

#include "apiserver/registry/resources.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// One kind of one served group-version, as the documents describe it: a
// version of a CustomResourceDefinition, or a built-in resource.
struct OpenApiKind {
  std::string group;
  std::string version;
  std::string plural;
  std::string kind;
  std::string list_kind;
  bool namespaced = true;
  bool has_status = false;
  bool has_scale = false;
  // A built-in kind: schemas named after its Go package
  // (io.k8s.api.core.v1.Pod) rather than the reversed group.
  bool builtin = false;
  // The kind's OpenAPI v3 schema (for a CRD its openAPIV3Schema); points
  // into the CRD or into `owned_schema`, which must outlive this. Null when
  // there is none (an object with apiVersion, kind and metadata is
  // described).
  const rapidjson::Value* schema = nullptr;
  std::shared_ptr<const rapidjson::Document> owned_schema;
};

// The served versions of `crd` (apiextensions.k8s.io/v1 JSON). Versions
// with served: false and malformed entries are left out.
std::vector<OpenApiKind> CustomResourceKinds(const rapidjson::Value& crd);

// The built-in resources of `resources`, each with the schema of its Go
// type (builtin_schema.h) when the server has one: field names and types,
// no descriptions; struct types are written inline (explain shows them as
// <Object>), except ObjectMeta.
std::vector<OpenApiKind> BuiltinKinds(const ResourceRegistry& resources);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_OPENAPI_KINDS_H_
