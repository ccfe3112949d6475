// The kinds the OpenAPI documents (openapi.h) describe: every served
// version of a CustomResourceDefinition with its openAPIV3Schema, and every
// built-in resource with a schema made from its Go type (builtin_schema.h).
#ifndef KCR_APISERVER_ENDPOINTS_OPENAPI_KINDS_H_
#define KCR_APISERVER_ENDPOINTS_OPENAPI_KINDS_H_

#include <memory>
#include <string>
#include <vector>

#include "apiserver/registry/builtin_schema.h"
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
// type (builtin_schema.h): kube's descriptions, field types and required
// fields, other structs by reference to their kube-openapi definitions
// (GoStructSchema of BuiltinDefinition), as kube-apiserver's documents
// have them.
std::vector<OpenApiKind> BuiltinKinds(const ResourceRegistry& resources);

// The OpenAPI v3 schema of a built-in Go struct: its description, its
// required members and its properties; the schemas of other structs are
// references to "#/components/schemas/<openapi_name>". Strings are not
// copied: they live as long as the program.
rapidjson::Value GoStructSchema(const GoType& type,
                                rapidjson::Document::AllocatorType& a);

// The apimachinery definitions the built-in schemas refer to besides the
// structs (openapi_schemas.cc has them).
inline constexpr char kQuantityDefinition[] =
    "io.k8s.apimachinery.pkg.api.resource.Quantity";
inline constexpr char kIntOrStringDefinition[] =
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
inline constexpr char kTimeDefinition[] =
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
inline constexpr char kMicroTimeDefinition[] =
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_OPENAPI_KINDS_H_
