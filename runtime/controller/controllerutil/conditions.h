// Status conditions on an object being edited: the list helpers of
// api/types/condition.h (SetStatusCondition, FindStatusCondition,
// RemoveStatusCondition, IsStatusConditionTrue/False — apimachinery's
// meta package) applied to /status/conditions of an ObjectBuilder, for
// UpdateStatus and CreateOrPatch mutate functions.
#ifndef KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_CONDITIONS_H_
#define KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_CONDITIONS_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object_builder.h"
#include "api/types/condition.h"

namespace kcr::controller::controllerutil {

// The conditions at /status/conditions (empty when absent).
std::vector<api::Condition> ConditionsOf(const api::ObjectBuilder& object);

// api::SetStatusCondition on the object's conditions: lastTransitionTime
// moves (to `now`, unless the condition carries one) only when the status
// changes. Returns whether anything changed; errors only when
// /status/conditions cannot be written (status is not an object).
absl::StatusOr<bool> SetStatusCondition(api::ObjectBuilder& object,
                                        const api::Condition& condition,
                                        absl::Time now);

// api::RemoveStatusCondition on the object's conditions.
absl::StatusOr<bool> RemoveStatusCondition(api::ObjectBuilder& object,
                                           std::string_view type);

}  // namespace kcr::controller::controllerutil

#endif  // KCR_RUNTIME_CONTROLLER_CONTROLLERUTIL_CONDITIONS_H_
