// StructuralSchema: the OpenAPI v3 validation, defaulting and pruning that
// kube-apiserver applies to custom resources, driven by one CRD version's
// `openAPIV3Schema`.
//
// Why a walker of our own rather than rapidjson/schema.h: RapidJSON 1.1.0's
// validator implements JSON Schema draft-04, stops at the first violation,
// reports it as a JSON pointer plus a draft-04 keyword, and neither applies
// defaults nor prunes. kube-apiserver returns every violation, with field
// paths and messages in apimachinery's field.Error form, and prunes and
// defaults before it validates; the Kubernetes extensions
// (x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields,
// nullable) are not JSON Schema either. The schema is compiled once into a
// tree, and every walk follows that tree, so the recursion depth is bounded
// by the schema (at most kMaxSchemaDepth), never by the object.
//
// Supported keywords: type (object, array, string, integer, number,
// boolean), properties, required, items, additionalProperties (schema or
// bool), enum, minimum, maximum, exclusiveMinimum, exclusiveMaximum (the
// OpenAPI v3.0 boolean form), minLength, maxLength (in characters), pattern,
// minItems, maxItems, minProperties, maxProperties, nullable, default,
// x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields.
// Ignored as documentation or as checks this walker leaves to others:
// description, title, example, externalDocs, format,
// x-kubernetes-list-type, x-kubernetes-list-map-keys, x-kubernetes-map-type,
// x-kubernetes-embedded-resource, x-kubernetes-validations (CEL), and
// `anyOf` under x-kubernetes-int-or-string (its canonical spelling).
// Any other allOf/anyOf/oneOf/not, or $ref, makes Create fail with
// Unimplemented rather than silently accepting too much.
//
// Messages follow kube-apiserver (go-openapi via apiextensions-apiserver):
//   spec.replicas: Required value
//   spec.replicas: Invalid value: -1: spec.replicas in body should be
//       greater than or equal to 0
//   spec.replicas: Invalid value: "string": spec.replicas in body must be
//       of type integer: "string"
//   ruleType: Unsupported value: "x": supported values: "configmap", "secret"
//   spec.image: Invalid value: "": spec.image in body should be at least 1
//       chars long
//   spec.args: Too many: 4: must have at most 3 items
// `pattern` is Go's regexp syntax, as in kube-apiserver, compiled once with
// the schema by RE2 (the library Go's regexp follows) and matched as an
// unanchored search. RE2 runs in time linear in the string and never
// recurses per character, so a megabyte-long string is as safe as a short
// one on a connection thread's small stack.
//
// Thread safety: a StructuralSchema is immutable after Create; every method
// is const and may be called from many threads at once.
#ifndef KCR_API_SCHEMA_STRUCTURAL_SCHEMA_H_
#define KCR_API_SCHEMA_STRUCTURAL_SCHEMA_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "api/schema/field_error.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {

namespace schema_internal {
struct Node;
}  // namespace schema_internal

class StructuralSchema {
 public:
  // Nesting bound for the schema tree.
  static constexpr int kMaxSchemaDepth = 64;

  // Compiles `openapi_v3_schema` (spec.versions[].schema.openAPIV3Schema of
  // a CRD). InvalidArgument when a keyword has the wrong type, a type is
  // unknown, a pattern does not compile, or the tree is deeper than
  // kMaxSchemaDepth; Unimplemented for the keywords listed above. The
  // message is the first problem as a field error under "openAPIV3Schema",
  // in a CRD's path notation, e.g.
  //   openAPIV3Schema.properties[a].pattern: Invalid value: "(": must be a
  //   valid regular expression, but isn't: error parsing regexp: missing ):
  //   `(`
  // and when `error` is not null it also receives that field error, for a
  // caller that reports it within a larger object (a CRD). The schema is
  // copied: `openapi_v3_schema` need not outlive this.
  static absl::StatusOr<std::unique_ptr<StructuralSchema>> Create(
      const rapidjson::Value& openapi_v3_schema, FieldError* error = nullptr);

  ~StructuralSchema();
  StructuralSchema(const StructuralSchema&) = delete;
  StructuralSchema& operator=(const StructuralSchema&) = delete;

  // Every violation of the schema by `object`, in schema order (type first,
  // then required, then each property). A value of the wrong type is
  // reported once and not checked further. At the root, apiVersion, kind
  // and metadata are never reported as unknown fields.
  std::vector<FieldError> Validate(const rapidjson::Value& object) const;

  // Removes fields the schema does not declare, as kube-apiserver prunes:
  // unknown properties of objects are dropped unless the node (or an
  // ancestor without a narrower schema) has
  // x-kubernetes-preserve-unknown-fields; values under additionalProperties
  // or items are pruned by that schema. At the root, apiVersion, kind and
  // metadata are kept, and metadata keeps exactly ObjectMeta's fields.
  // Values of the wrong type are left for Validate to report.
  void Prune(rapidjson::Value* object,
             rapidjson::Value::AllocatorType& allocator) const;

  // Sets every absent property that has a `default` to a copy of it, outer
  // objects first so defaults inside a defaulted object apply too. A null
  // in a property that is not nullable is removed first (and then
  // defaulted, if it has a default), as kube-apiserver does.
  void ApplyDefaults(rapidjson::Value* object,
                     rapidjson::Value::AllocatorType& allocator) const;

  // What kube-apiserver does to a custom resource on create and update:
  // Prune, then ApplyDefaults, then Validate.
  std::vector<FieldError> Admit(
      rapidjson::Value* object,
      rapidjson::Value::AllocatorType& allocator) const;

 private:
  explicit StructuralSchema(std::unique_ptr<schema_internal::Node> root);

  std::unique_ptr<schema_internal::Node> root_;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_SCHEMA_STRUCTURAL_SCHEMA_H_
