// Secret (v1): type and data. Data values stay base64 strings as on the
// wire; nothing here logs or prints a value. DebugString prints only keys
// and decoded sizes.
#ifndef KCR_API_TYPES_SECRET_H_
#define KCR_API_TYPES_SECRET_H_

#include <map>
#include <ostream>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/types/view.h"

namespace kcr {
namespace api {

class SecretView : public TypedView {
 public:
  // Where it lives on the server (GroupVersionResource and scope).
  static constexpr char kGroup[] = "";
  static constexpr char kVersion[] = "v1";
  static constexpr char kPlural[] = "secrets";
  static constexpr bool kNamespaced = true;

  // InvalidArgument when null, of another kind, or when data or stringData
  // is not an object of strings.
  static absl::StatusOr<SecretView> Create(ObjectPtr secret);

  // type; "Opaque" when absent (the API server's default).
  std::string_view type() const;
  // Base64-encoded values, as on the wire.
  StringMapView data() const;
  // The decoded bytes of data[key]: NotFound when absent, InvalidArgument
  // when not valid base64.
  absl::StatusOr<std::string> Decoded(std::string_view key) const;
  // "Secret ns/name type=Opaque data={password: 12 bytes, user: 5 bytes}".
  // Never includes a value.
  std::string DebugString() const;

 private:
  explicit SecretView(ObjectPtr o) : TypedView(std::move(o)) {}
};

// Prints DebugString(): safe in logs.
std::ostream& operator<<(std::ostream& os, const SecretView& secret);

class SecretBuilder {
 public:
  SecretBuilder(std::string_view namespace_, std::string_view name);
  explicit SecretBuilder(const Object& secret);

  SecretBuilder& SetType(std::string_view type);
  // `value` is raw bytes; stored base64-encoded.
  SecretBuilder& SetData(std::string_view key, std::string_view value);
  // `base64` is already encoded (copying a Secret's data unchanged).
  SecretBuilder& SetEncodedData(std::string_view key, std::string_view base64);

  ObjectBuilder& object() { return builder_; }
  absl::StatusOr<ObjectPtr> Build() const { return builder_.Build(); }

 private:
  ObjectBuilder builder_;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_SECRET_H_
