// The structural schema of one CRD version, compiled from the CRD
// manifest's text, and the validation and defaulting that the CRD types
// (Nginx, CopyratorRule, LoadTest) do through it. A custom resource is thus
// judged by the same schema in a controller as in the API server (which
// compiles the installed CRD with StructuralSchema too), and its messages
// are kube-apiserver's field errors.
#ifndef KCR_API_CRD_CRD_SCHEMA_H_
#define KCR_API_CRD_CRD_SCHEMA_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/schema/structural_schema.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace crd {

// Compiles spec.versions[name == version].schema.openAPIV3Schema of the
// CustomResourceDefinition in `crd_yaml` (a single YAML document).
// InvalidArgument when the text is not YAML, or has no such version or
// schema; otherwise what StructuralSchema::Create returns.
absl::StatusOr<std::unique_ptr<StructuralSchema>> CompileCrdSchema(
    std::string_view crd_yaml, std::string_view version);

namespace internal {

// CompileCrdSchema of a manifest compiled into the binary, never freed.
// Aborts the process when it does not compile: that is a defect of the
// build, which the tests of the CRD types catch, not a runtime condition.
const StructuralSchema& MustCompileCrdSchema(const char* crd_yaml,
                                             std::string_view version);

// The violations of `schema` by `json`, rendered as field errors
// ("spec.replicas: Required value"); empty when valid.
std::vector<std::string> ValidateJson(const StructuralSchema& schema,
                                      const rapidjson::Value& json);

// Sets the fields of `*object` that are absent and that `schema` defaults.
// The schema speaks JSON, so this goes through T's JSON form: T::ToJson,
// the schema's defaults, then T::FromJson. A default of the wrong type
// would make FromJson fail; then `*object` is left as it was.
template <typename T>
void ApplySchemaDefaults(const StructuralSchema& schema, T* object) {
  rapidjson::Document json = object->ToJson();
  schema.ApplyDefaults(&json, json.GetAllocator());
  absl::StatusOr<T> defaulted = T::FromJson(json);
  if (defaulted.ok()) *object = *std::move(defaulted);
}

}  // namespace internal
}  // namespace crd
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_CRD_CRD_SCHEMA_H_
