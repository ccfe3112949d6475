// CustomResource<T>: what the CRD types (Nginx, CopyratorRule, LoadTest)
// share beyond their own fields. Each type is a typed view of the JSON its
// CRD manifest describes, and only reads and writes that JSON; the rules
// and defaults are the manifest's openAPIV3Schema, compiled into the binary
// (crd_manifests.h) and applied here, so a custom resource is judged by
// the same schema in a controller as in the API server.
//
// T derives from CustomResource<T> and declares
//   static constexpr char kVersion[];           its CRD version ("v1")
//   static constexpr const char* kCrdManifest;  its crd_manifests.h text
//   RawJson metadata;
//   static absl::StatusOr<T> FromJson(const rapidjson::Value&);
//   rapidjson::Document ToJson() const;
// with FromJson(ToJson()) == the object.
#ifndef KCR_API_CRD_CUSTOM_RESOURCE_H_
#define KCR_API_CRD_CUSTOM_RESOURCE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/crd/crd_schema.h"
#include "api/object.h"
#include "api/schema/structural_schema.h"

namespace kcr {
namespace api {
namespace crd {

template <typename T>
class CustomResource {
 public:
  // FromJson of a cached object's JSON.
  static absl::StatusOr<T> FromObject(const Object& object) {
    return T::FromJson(object.json());
  }

  // The schema of T's CRD manifest at kVersion, compiled on first use.
  // Thread-safe; the schema lives as long as the process.
  static const StructuralSchema& Schema() {
    static const StructuralSchema& schema =
        internal::MustCompileCrdSchema(T::kCrdManifest, T::kVersion);
    return schema;
  }

  // Fills absent fields with the schema's defaults, as the API server does
  // on create and update.
  void ApplyDefaults() { internal::ApplySchemaDefaults(Schema(), self()); }

  // Every violation of the schema, in kube-apiserver's wording
  // ("spec.replicas: Invalid value: -1: spec.replicas in body should be
  // greater than or equal to 0"), in schema order. Empty when valid.
  std::vector<std::string> Validate() const {
    return internal::ValidateJson(Schema(), self().ToJson());
  }

  // metadata.name and metadata.namespace, or "" when absent.
  std::string name() const { return self().metadata.StringMember("name"); }
  std::string namespace_() const {
    return self().metadata.StringMember("namespace");
  }

 private:
  T* self() { return static_cast<T*>(this); }
  const T& self() const { return static_cast<const T&>(*this); }
};

}  // namespace crd
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_CRD_CUSTOM_RESOURCE_H_
