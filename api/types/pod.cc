#include "api/types/pod.h"

#include "api/types/field.h"

namespace kcr {
namespace api {

absl::StatusOr<PodView> PodView::Create(ObjectPtr pod) {
  if (absl::Status s = Check(pod, "Pod"); !s.ok()) return s;
  return PodView(std::move(pod));
}

namespace {
const rapidjson::Value* Status(const Object& o) {
  return field::Object(&o.json(), "status");
}
}  // namespace

std::string_view PodView::phase() const {
  return field::String(Status(object()), "phase");
}

std::string_view PodView::node_name() const {
  return field::String(field::Object(&object().json(), "spec"), "nodeName");
}

std::string_view PodView::pod_ip() const {
  return field::String(Status(object()), "podIP");
}

std::vector<Condition> PodView::conditions() const {
  return ConditionsFromJson(field::Array(Status(object()), "conditions"));
}

std::vector<ContainerStatus> PodView::Statuses(std::string_view key) const {
  std::vector<ContainerStatus> out;
  const rapidjson::Value* list = field::Array(Status(object()), key);
  if (list == nullptr) return out;
  for (const rapidjson::Value& v : list->GetArray()) {
    if (!v.IsObject()) continue;
    ContainerStatus cs;
    cs.name = field::String(&v, "name");
    cs.image = field::String(&v, "image");
    cs.ready = field::Bool(&v, "ready");
    cs.started = field::Bool(&v, "started");
    cs.restart_count = field::Int32(&v, "restartCount").value_or(0);
    if (const rapidjson::Value* state = field::Object(&v, "state")) {
      for (const char* s : {"running", "waiting", "terminated"}) {
        if (const rapidjson::Value* detail = field::Object(state, s)) {
          cs.state = s;
          cs.state_reason = field::String(detail, "reason");
          break;
        }
      }
    }
    out.push_back(cs);
  }
  return out;
}

std::vector<ContainerStatus> PodView::container_statuses() const {
  return Statuses("containerStatuses");
}

std::vector<ContainerStatus> PodView::init_container_statuses() const {
  return Statuses("initContainerStatuses");
}

int64_t PodView::total_restarts() const {
  int64_t total = 0;
  for (const auto& cs : container_statuses()) total += cs.restart_count;
  for (const auto& cs : init_container_statuses()) total += cs.restart_count;
  return total;
}

bool PodView::ready() const {
  return IsStatusConditionTrue(conditions(), "Ready");
}

int PodView::ready_containers() const {
  int n = 0;
  for (const auto& cs : container_statuses()) n += cs.ready;
  return n;
}

}  // namespace api
}  // namespace kcr
