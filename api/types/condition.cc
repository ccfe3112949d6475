#include "api/types/condition.h"

#include <algorithm>

#include "api/object_builder.h"
#include "api/types/field.h"
#include "api/types/time.h"

namespace kcr {
namespace api {
Condition ConditionFromJson(const rapidjson::Value& value) {
  Condition c;
  c.type = std::string(field::String(&value, "type"));
  c.status = std::string(field::String(&value, "status"));
  c.reason = std::string(field::String(&value, "reason"));
  c.message = std::string(field::String(&value, "message"));
  c.last_transition_time =
      std::string(field::String(&value, "lastTransitionTime"));
  c.observed_generation =
      field::Int64(&value, "observedGeneration").value_or(0);
  return c;
}

std::vector<Condition> ConditionsFromJson(const rapidjson::Value* list) {
  std::vector<Condition> out;
  if (list == nullptr || !list->IsArray()) return out;
  for (const rapidjson::Value& v : list->GetArray()) {
    if (v.IsObject()) out.push_back(ConditionFromJson(v));
  }
  return out;
}

rapidjson::Value ConditionToJson(const Condition& c,
                                 rapidjson::MemoryPoolAllocator<>& a) {
  rapidjson::Value v(rapidjson::kObjectType);
  v.AddMember("type", field::Str(c.type, a), a);
  v.AddMember("status", field::Str(c.status, a), a);
  if (c.observed_generation != 0) {
    v.AddMember("observedGeneration",
                rapidjson::Value(static_cast<int64_t>(c.observed_generation)),
                a);
  }
  if (!c.last_transition_time.empty()) {
    v.AddMember("lastTransitionTime", field::Str(c.last_transition_time, a), a);
  }
  if (!c.reason.empty()) v.AddMember("reason", field::Str(c.reason, a), a);
  if (!c.message.empty()) v.AddMember("message", field::Str(c.message, a), a);
  return v;
}

bool SetStatusCondition(std::vector<Condition>* conditions,
                        const Condition& condition, absl::Time now) {
  if (conditions == nullptr) return false;
  auto it = std::find_if(
      conditions->begin(), conditions->end(),
      [&](const Condition& c) { return c.type == condition.type; });
  if (it == conditions->end()) {
    Condition added = condition;
    if (added.last_transition_time.empty()) {
      added.last_transition_time = FormatRfc3339(now);
    }
    conditions->push_back(std::move(added));
    return true;
  }
  bool changed = false;
  if (it->status != condition.status) {
    it->status = condition.status;
    it->last_transition_time = condition.last_transition_time.empty()
                                   ? FormatRfc3339(now)
                                   : condition.last_transition_time;
    changed = true;
  }
  if (it->reason != condition.reason) {
    it->reason = condition.reason;
    changed = true;
  }
  if (it->message != condition.message) {
    it->message = condition.message;
    changed = true;
  }
  if (it->observed_generation != condition.observed_generation) {
    it->observed_generation = condition.observed_generation;
    changed = true;
  }
  return changed;
}

bool RemoveStatusCondition(std::vector<Condition>* conditions,
                           std::string_view type) {
  if (conditions == nullptr) return false;
  auto it = std::remove_if(conditions->begin(), conditions->end(),
                           [&](const Condition& c) { return c.type == type; });
  const bool removed = it != conditions->end();
  conditions->erase(it, conditions->end());
  return removed;
}

const Condition* FindStatusCondition(const std::vector<Condition>& conditions,
                                     std::string_view type) {
  for (const Condition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

bool IsStatusConditionTrue(const std::vector<Condition>& conditions,
                           std::string_view type) {
  const Condition* c = FindStatusCondition(conditions, type);
  return c != nullptr && c->status == kConditionTrue;
}

bool IsStatusConditionFalse(const std::vector<Condition>& conditions,
                            std::string_view type) {
  const Condition* c = FindStatusCondition(conditions, type);
  return c != nullptr && c->status == kConditionFalse;
}

std::vector<Condition> ConditionsOf(const Object& object,
                                    std::string_view json_pointer) {
  return ConditionsFromJson(object.Find(json_pointer));
}

absl::Status SetConditions(ObjectBuilder& builder,
                           const std::vector<Condition>& conditions,
                           std::string_view json_pointer) {
  rapidjson::Value list(rapidjson::kArrayType);
  for (const Condition& c : conditions) {
    list.PushBack(ConditionToJson(c, builder.allocator()), builder.allocator());
  }
  return builder.Set(json_pointer, list);
}

}  // namespace api
}  // namespace kcr
