#include "apiserver/kube_controllers/pod_util.h"

#include <algorithm>

#include "absl/status/statusor.h"
#include "api/types/field.h"
#include "api/types/time.h"

namespace kcr {
namespace apiserver {

namespace field = ::kcr::api::field;

std::string_view PodPhase(const api::Object& pod) {
  return field::String(field::Object(&pod.json(), "status"), "phase");
}

std::optional<absl::Time> PodReadySince(const api::Object& pod) {
  const rapidjson::Value* conditions =
      field::Array(field::Object(&pod.json(), "status"), "conditions");
  if (conditions == nullptr) return std::nullopt;
  for (const rapidjson::Value& c : conditions->GetArray()) {
    if (field::String(&c, "type") != "Ready") continue;
    if (field::String(&c, "status") != "True") return std::nullopt;
    absl::StatusOr<absl::Time> t =
        api::ParseTime(field::String(&c, "lastTransitionTime"));
    return t.ok() ? *t : absl::InfinitePast();
  }
  return std::nullopt;
}

bool PodAvailable(const api::Object& pod, int64_t min_ready_seconds,
                  absl::Time now, absl::Time* due) {
  const std::optional<absl::Time> since = PodReadySince(pod);
  if (!since.has_value()) return false;
  if (min_ready_seconds <= 0) return true;
  const absl::Time at = *since + absl::Seconds(min_ready_seconds);
  if (at <= now) return true;
  if (due != nullptr) *due = std::min(*due, at);
  return false;
}

void SetStatusCount(rapidjson::Value* status, const char* key, int64_t v,
                    bool omit_zero, rapidjson::MemoryPoolAllocator<>& a) {
  status->RemoveMember(key);
  if (v != 0 || !omit_zero) {
    status->AddMember(rapidjson::Value(key, a), rapidjson::Value(v), a);
  }
}

}  // namespace apiserver
}  // namespace kcr
