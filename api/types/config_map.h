// ConfigMap (v1): data (strings) and binaryData (base64 strings).
#ifndef KCR_API_TYPES_CONFIG_MAP_H_
#define KCR_API_TYPES_CONFIG_MAP_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/types/owner_reference.h"
#include "api/types/view.h"

namespace kcr {
namespace api {

class ConfigMapView : public TypedView {
 public:
  // Where it lives on the server (GroupVersionResource and scope).
  static constexpr char kGroup[] = "";
  static constexpr char kVersion[] = "v1";
  static constexpr char kPlural[] = "configmaps";
  static constexpr bool kNamespaced = true;

  // InvalidArgument when null, of another kind, or when data or binaryData
  // is not an object of strings ("data.key is not a string").
  static absl::StatusOr<ConfigMapView> Create(ObjectPtr config_map);

  StringMapView data() const;
  // Values are base64, as on the wire.
  StringMapView binary_data() const;
  bool immutable() const;

 private:
  explicit ConfigMapView(ObjectPtr o) : TypedView(std::move(o)) {}
};

class ConfigMapBuilder {
 public:
  ConfigMapBuilder(std::string_view namespace_, std::string_view name);
  explicit ConfigMapBuilder(const Object& config_map);

  ConfigMapBuilder& SetData(std::string_view key, std::string_view value);
  // Replaces data (and clears binaryData when `binary_data` is given).
  ConfigMapBuilder& SetAllData(const std::map<std::string, std::string>& data);
  // `value` is raw bytes; stored base64-encoded.
  ConfigMapBuilder& SetBinaryData(std::string_view key, std::string_view value);

  ObjectBuilder& object() { return builder_; }
  absl::StatusOr<ObjectPtr> Build() const { return builder_.Build(); }

 private:
  ObjectBuilder builder_;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_CONFIG_MAP_H_
