#include "api/crd/crd_schema.h"

#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "api/json/yaml_to_json.h"
#include "api/schema/field_error.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace crd {

absl::StatusOr<std::unique_ptr<StructuralSchema>> CompileCrdSchema(
    std::string_view crd_yaml, std::string_view version) {
  absl::StatusOr<std::unique_ptr<rapidjson::Document>> crd =
      json::YamlToJson(crd_yaml);
  if (!crd.ok()) return crd.status();
  const rapidjson::Value& doc = **crd;
  const rapidjson::Value* versions = nullptr;
  if (doc.IsObject()) {
    auto spec = doc.FindMember("spec");
    if (spec != doc.MemberEnd() && spec->value.IsObject()) {
      auto v = spec->value.FindMember("versions");
      if (v != spec->value.MemberEnd() && v->value.IsArray()) {
        versions = &v->value;
      }
    }
  }
  if (versions == nullptr) {
    return absl::InvalidArgumentError("CRD has no spec.versions");
  }
  for (const rapidjson::Value& v : versions->GetArray()) {
    if (!v.IsObject() || !v.HasMember("name") || !v["name"].IsString() ||
        std::string_view(v["name"].GetString(), v["name"].GetStringLength()) !=
            version) {
      continue;
    }
    auto schema = v.FindMember("schema");
    if (schema == v.MemberEnd() || !schema->value.IsObject() ||
        !schema->value.HasMember("openAPIV3Schema")) {
      break;
    }
    return StructuralSchema::Create(schema->value["openAPIV3Schema"]);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "CRD has no schema.openAPIV3Schema for version ", ToAbsl(version)));
}

namespace internal {

const StructuralSchema& MustCompileCrdSchema(const char* crd_yaml,
                                             std::string_view version) {
  absl::StatusOr<std::unique_ptr<StructuralSchema>> schema =
      CompileCrdSchema(crd_yaml, version);
  if (!schema.ok()) {
    std::cerr << "embedded CRD manifest does not compile: " << schema.status()
              << std::endl;
    std::abort();
  }
  return *schema->release();
}

std::vector<std::string> ValidateJson(const StructuralSchema& schema,
                                      const rapidjson::Value& json) {
  return ToStrings(schema.Validate(json));
}

}  // namespace internal
}  // namespace crd
}  // namespace api
}  // namespace kcr
