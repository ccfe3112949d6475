// Service (v1): the ports a controller resolves a port name against.
#ifndef KCR_API_TYPES_SERVICE_H_
#define KCR_API_TYPES_SERVICE_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "api/types/view.h"

namespace kcr {
namespace api {

class ServiceView : public TypedView {
 public:
  // Where it lives on the server (GroupVersionResource and scope).
  static constexpr char kGroup[] = "";
  static constexpr char kVersion[] = "v1";
  static constexpr char kPlural[] = "services";
  static constexpr bool kNamespaced = true;

  // InvalidArgument when `service` is null or of another kind.
  static absl::StatusOr<ServiceView> Create(ObjectPtr service);

  // spec.ports[].port of the port named `name`; nullopt when no port has
  // that name (or its number is absent or out of range).
  std::optional<int32_t> PortNamed(std::string_view name) const;

 private:
  explicit ServiceView(ObjectPtr o) : TypedView(std::move(o)) {}
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_SERVICE_H_
