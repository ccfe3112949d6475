#include "api/types/service.h"

#include "api/types/field.h"

namespace kcr {
namespace api {

absl::StatusOr<ServiceView> ServiceView::Create(ObjectPtr service) {
  if (absl::Status s = Check(service, "Service"); !s.ok()) return s;
  return ServiceView(std::move(service));
}

std::optional<int32_t> ServiceView::PortNamed(std::string_view name) const {
  const rapidjson::Value* ports =
      field::Array(field::Object(&object().json(), "spec"), "ports");
  if (ports == nullptr) return std::nullopt;
  for (const rapidjson::Value& p : ports->GetArray()) {
    if (!p.IsObject() || field::String(&p, "name") != name) continue;
    if (std::optional<int32_t> number = field::Int32(&p, "port")) {
      return number;
    }
  }
  return std::nullopt;
}

}  // namespace api
}  // namespace kcr
