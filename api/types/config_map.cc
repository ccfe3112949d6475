#include "api/types/config_map.h"

#include "absl/strings/escaping.h"
#include "api/json_pointer.h"
#include "api/types/field.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace {

StringMapView MapOrEmpty(const rapidjson::Value* v) {
  return StringMapView(v != nullptr && v->IsObject() ? v : nullptr);
}

}  // namespace

absl::StatusOr<ConfigMapView> ConfigMapView::Create(ObjectPtr config_map) {
  if (absl::Status s = Check(config_map, "ConfigMap"); !s.ok()) return s;
  const rapidjson::Value* root = &config_map->json();
  if (absl::Status s =
          field::CheckStringMap(field::Member(root, "data"), "data");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = field::CheckStringMap(field::Member(root, "binaryData"),
                                             "binaryData");
      !s.ok()) {
    return s;
  }
  return ConfigMapView(std::move(config_map));
}

StringMapView ConfigMapView::data() const {
  return MapOrEmpty(field::Member(&object().json(), "data"));
}

StringMapView ConfigMapView::binary_data() const {
  return MapOrEmpty(field::Member(&object().json(), "binaryData"));
}

bool ConfigMapView::immutable() const {
  return field::Bool(&object().json(), "immutable");
}

ConfigMapBuilder::ConfigMapBuilder(std::string_view namespace_,
                                   std::string_view name)
    : builder_("v1", "ConfigMap") {
  builder_.SetName(name).SetNamespace(namespace_);
}

ConfigMapBuilder::ConfigMapBuilder(const Object& config_map)
    : builder_(config_map) {}

ConfigMapBuilder& ConfigMapBuilder::SetData(std::string_view key,
                                            std::string_view value) {
  (void)builder_.SetString("/data/" + api::json_pointer::EscapeToken(key),
                           value);
  return *this;
}

ConfigMapBuilder& ConfigMapBuilder::SetAllData(
    const std::map<std::string, std::string>& data) {
  (void)builder_.Set("/data", rapidjson::Value(rapidjson::kObjectType));
  for (const auto& [k, v] : data) SetData(k, v);
  return *this;
}

ConfigMapBuilder& ConfigMapBuilder::SetBinaryData(std::string_view key,
                                                  std::string_view value) {
  std::string encoded;
  absl::Base64Escape(ToAbsl(value), &encoded);
  (void)builder_.SetString("/binaryData/" + api::json_pointer::EscapeToken(key),
                           encoded);
  return *this;
}

}  // namespace api
}  // namespace kcr
