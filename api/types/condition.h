// Condition: metav1.Condition, the standard status condition (type,
// status, reason, message, lastTransitionTime, observedGeneration), and
// the helpers apimachinery's meta package offers for lists of them.
#ifndef KCR_API_TYPES_CONDITION_H_
#define KCR_API_TYPES_CONDITION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {

inline constexpr std::string_view kConditionTrue = "True";
inline constexpr std::string_view kConditionFalse = "False";
inline constexpr std::string_view kConditionUnknown = "Unknown";

struct Condition {
  std::string type;
  std::string status;  // "True", "False" or "Unknown"
  std::string reason;
  std::string message;
  std::string last_transition_time;  // RFC 3339; empty when unset
  int64_t observed_generation = 0;

  friend bool operator==(const Condition& a, const Condition& b) {
    return a.type == b.type && a.status == b.status && a.reason == b.reason &&
           a.message == b.message &&
           a.last_transition_time == b.last_transition_time &&
           a.observed_generation == b.observed_generation;
  }
};

// Reads one condition. Fields that are absent or mistyped read as empty /
// zero; a non-object reads as an empty Condition.
Condition ConditionFromJson(const rapidjson::Value& value);
// Reads a conditions array; null or non-array reads as empty, and entries
// that are not objects are skipped.
std::vector<Condition> ConditionsFromJson(const rapidjson::Value* list);
// The JSON form (omitting empty reason, message, lastTransitionTime and a
// zero observedGeneration, as Go's omitempty does).
rapidjson::Value ConditionToJson(const Condition& condition,
                                 rapidjson::MemoryPoolAllocator<>& allocator);

// meta.SetStatusCondition: adds `condition`, or updates the one of the same
// type. lastTransitionTime changes only when the status changes: it takes
// condition.last_transition_time when set, else `now`. A new condition
// without lastTransitionTime gets `now`. Returns true when anything
// changed.
bool SetStatusCondition(std::vector<Condition>* conditions,
                        const Condition& condition, absl::Time now);
// meta.RemoveStatusCondition: true when a condition was removed.
bool RemoveStatusCondition(std::vector<Condition>* conditions,
                           std::string_view type);
// meta.FindStatusCondition: null when absent.
const Condition* FindStatusCondition(const std::vector<Condition>& conditions,
                                     std::string_view type);
bool IsStatusConditionTrue(const std::vector<Condition>& conditions,
                           std::string_view type);
bool IsStatusConditionFalse(const std::vector<Condition>& conditions,
                            std::string_view type);

// Conditions at `json_pointer` of an object (default /status/conditions).
std::vector<Condition> ConditionsOf(
    const Object& object, std::string_view json_pointer = "/status/conditions");
// Writes `conditions` at `json_pointer` of a builder.
absl::Status SetConditions(
    ObjectBuilder& builder, const std::vector<Condition>& conditions,
    std::string_view json_pointer = "/status/conditions");

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_CONDITION_H_
