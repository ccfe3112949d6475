#include "runtime/controller/controllerutil/conditions.h"

#include "base/status_macros.h"

namespace kcr::controller::controllerutil {

constexpr char kConditions[] = "/status/conditions";

std::vector<api::Condition> ConditionsOf(const api::ObjectBuilder& object) {
  return api::ConditionsFromJson(object.Find(kConditions));
}

absl::StatusOr<bool> SetStatusCondition(api::ObjectBuilder& object,
                                        const api::Condition& condition,
                                        absl::Time now) {
  std::vector<api::Condition> conditions = ConditionsOf(object);
  if (!api::SetStatusCondition(&conditions, condition, now)) return false;
  KCR_RETURN_IF_ERROR(api::SetConditions(object, conditions, kConditions));
  return true;
}

absl::StatusOr<bool> RemoveStatusCondition(api::ObjectBuilder& object,
                                           std::string_view type) {
  std::vector<api::Condition> conditions = ConditionsOf(object);
  if (!api::RemoveStatusCondition(&conditions, type)) return false;
  KCR_RETURN_IF_ERROR(api::SetConditions(object, conditions, kConditions));
  return true;
}

}  // namespace kcr::controller::controllerutil
