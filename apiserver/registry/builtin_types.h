// The tables of the built-in API's Go types, generated at build time from
// the vendored description in third_party/kubernetes-api (gen_types.py):
// every model of Kubernetes' OpenAPI document as a row, every field of a
// struct as a row, and every resource (group, version, plural, kind,
// scope) with the row of its kind's type. builtin_schema.h builds its
// GoTypes from them; nothing else reads them.
#ifndef KCR_APISERVER_REGISTRY_BUILTIN_TYPES_H_
#define KCR_APISERVER_REGISTRY_BUILTIN_TYPES_H_

#include "apiserver/registry/builtin_schema.h"

namespace kcr {
namespace apiserver {
namespace builtin_types {

// One Go type. `elem` (maps and slices) and FieldRow::type index kTypes.
struct TypeRow {
  GoType::Kind kind;
  const char* name;
  int elem;
  // Structs: kFields[first_field, first_field + num_fields).
  int first_field;
  int num_fields;
  // Structs: the kube-openapi definition name; empty for the others.
  const char* openapi_name;
  const char* description;
};

struct FieldRow {
  const char* json_name;
  int type;
  bool required;
  const char* description;
};

struct ResourceRow {
  const char* group;
  const char* version;
  const char* plural;
  const char* kind;
  bool namespaced;
  int type;
};

// "v1.33.0": the Kubernetes version the tables describe.
extern const char kKubernetesVersion[];
extern const TypeRow kTypes[];
extern const int kNumTypes;
extern const FieldRow kFields[];
extern const int kNumFields;
extern const ResourceRow kResources[];
extern const int kNumResources;

}  // namespace builtin_types
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_BUILTIN_TYPES_H_
