#include "api/types/pod.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "api/types/field.h"
#include "base/string_view.h"

namespace kcr {
namespace api {

absl::StatusOr<PodView> PodView::Create(ObjectPtr pod) {
  if (absl::Status s = Check(pod, "Pod"); !s.ok()) return s;
  return PodView(std::move(pod));
}

namespace {
// The members of a container's "state"; at most one is set.
constexpr std::string_view kContainerStates[] = {"running", "waiting",
                                                 "terminated"};

const rapidjson::Value* Status(const Object& o) {
  return field::Object(&o.json(), "status");
}
}  // namespace

std::string_view PodView::phase() const {
  return field::String(Status(object()), "phase");
}

bool PodView::finished() const {
  const std::string_view p = phase();
  return p == "Succeeded" || p == "Failed";
}

std::string_view PodView::reason() const {
  return field::String(Status(object()), "reason");
}

std::string_view PodView::message() const {
  return field::String(Status(object()), "message");
}

std::optional<ContainerStatus> PodView::terminated_container(
    std::string_view name) const {
  std::optional<ContainerStatus> first;
  for (const ContainerStatus& cs : container_statuses()) {
    if (cs.state != "terminated") continue;
    if (cs.name == name) return cs;
    if (!first.has_value()) first = cs;
  }
  return first;
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
      for (std::string_view s : kContainerStates) {
        if (const rapidjson::Value* detail = field::Object(state, s)) {
          cs.state = s;
          cs.state_reason = field::String(detail, "reason");
          cs.state_message = field::String(detail, "message");
          if (s == "terminated")
            cs.exit_code = field::Int32(detail, "exitCode");
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

namespace {

rapidjson::Value StrList(const std::vector<std::string>& list,
                         rapidjson::MemoryPoolAllocator<>& a) {
  rapidjson::Value out(rapidjson::kArrayType);
  for (const std::string& s : list) out.PushBack(field::Str(s, a), a);
  return out;
}

bool OneOf(std::string_view v, absl::Span<const std::string_view> set) {
  for (std::string_view s : set) {
    if (v == s) return true;
  }
  return false;
}

}  // namespace

PodBuilder::PodBuilder(std::string_view namespace_, std::string_view name)
    : builder_("v1", "Pod") {
  builder_.SetNamespace(namespace_);
  if (!name.empty()) builder_.SetName(name);
}

PodBuilder::PodBuilder(const Object& pod) : builder_(pod) {}

void PodBuilder::Fail(absl::Status status) {
  if (error_.ok()) error_ = std::move(status);
}

PodBuilder& PodBuilder::SetGenerateName(std::string_view prefix) {
  builder_.SetGenerateName(prefix);
  return *this;
}

PodBuilder& PodBuilder::SetLabels(
    const std::map<std::string, std::string>& labels) {
  builder_.SetLabels(labels);
  return *this;
}

PodBuilder& PodBuilder::SetOwner(const OwnerReference& owner) {
  builder_.AddOwnerReference(owner.view());
  return *this;
}

size_t PodBuilder::NamedIndex(std::string_view pointer, std::string_view name) {
  const rapidjson::Value* list = builder_.Find(pointer);
  if (list == nullptr || !list->IsArray()) {
    (void)builder_.Set(pointer, rapidjson::Value(rapidjson::kArrayType));
    return 0;
  }
  return field::IndexByName(list, name);
}

PodBuilder& PodBuilder::SetContainer(const PodContainer& c) {
  if (c.name.empty()) {
    Fail(absl::InvalidArgumentError("spec.containers: name is required"));
    return *this;
  }
  for (int32_t port : c.ports) {
    if (port < 1 || port > 65535) {
      Fail(absl::InvalidArgumentError(
          absl::StrCat("spec.containers[", c.name, "].ports: ", port,
                       " is not between 1 and 65535")));
      return *this;
    }
  }
  auto& a = builder_.allocator();
  rapidjson::Value v(rapidjson::kObjectType);
  v.AddMember("name", field::Str(c.name, a), a);
  if (!c.image.empty()) v.AddMember("image", field::Str(c.image, a), a);
  if (!c.command.empty()) v.AddMember("command", StrList(c.command, a), a);
  if (!c.args.empty()) v.AddMember("args", StrList(c.args, a), a);
  if (!c.env.empty()) {
    rapidjson::Value env(rapidjson::kArrayType);
    for (const auto& [name, value] : c.env) {
      rapidjson::Value e(rapidjson::kObjectType);
      e.AddMember("name", field::Str(name, a), a);
      e.AddMember("value", field::Str(value, a), a);
      env.PushBack(e, a);
    }
    v.AddMember("env", env, a);
  }
  if (!c.ports.empty()) {
    rapidjson::Value ports(rapidjson::kArrayType);
    for (int32_t port : c.ports) {
      rapidjson::Value p(rapidjson::kObjectType);
      p.AddMember("containerPort", port, a);
      ports.PushBack(p, a);
    }
    v.AddMember("ports", ports, a);
  }
  const size_t i = NamedIndex("/spec/containers", c.name);
  (void)builder_.Set(absl::StrCat("/spec/containers/", i), v);
  return *this;
}

PodBuilder& PodBuilder::SetRestartPolicy(std::string_view policy) {
  if (!OneOf(policy, {"Always", "OnFailure", "Never"})) {
    Fail(absl::InvalidArgumentError(absl::StrCat(
        "spec.restartPolicy: Unsupported value: \"", ToAbsl(policy),
        "\": supported values: \"Always\", \"OnFailure\", "
        "\"Never\"")));
    return *this;
  }
  (void)builder_.SetString("/spec/restartPolicy", policy);
  return *this;
}

PodBuilder& PodBuilder::SetNodeName(std::string_view node) {
  (void)builder_.SetString("/spec/nodeName", node);
  return *this;
}

PodBuilder& PodBuilder::SetPhase(std::string_view phase) {
  if (!OneOf(phase, {"Pending", "Running", "Succeeded", "Failed", "Unknown"})) {
    Fail(absl::InvalidArgumentError(absl::StrCat(
        "status.phase: Unsupported value: \"", ToAbsl(phase), "\"")));
    return *this;
  }
  (void)builder_.SetString("/status/phase", phase);
  return *this;
}

PodBuilder& PodBuilder::SetPodIP(std::string_view ip) {
  (void)builder_.SetString("/status/podIP", ip);
  return *this;
}

PodBuilder& PodBuilder::SetCondition(const Condition& condition,
                                     absl::Time now) {
  std::vector<Condition> conditions =
      ConditionsFromJson(builder_.Find("/status/conditions"));
  SetStatusCondition(&conditions, condition, now);
  (void)SetConditions(builder_, conditions);
  return *this;
}

PodBuilder& PodBuilder::SetContainerStatus(const ContainerStatus& status) {
  if (status.name.empty()) {
    Fail(absl::InvalidArgumentError(
        "status.containerStatuses: name is required"));
    return *this;
  }
  if (!status.state.empty() && !OneOf(status.state, kContainerStates)) {
    Fail(absl::InvalidArgumentError(
        absl::StrCat("status.containerStatuses[", ToAbsl(status.name),
                     "].state: unknown state \"", ToAbsl(status.state), "\"")));
    return *this;
  }
  auto& a = builder_.allocator();
  rapidjson::Value v(rapidjson::kObjectType);
  v.AddMember("name", field::Str(status.name, a), a);
  if (!status.image.empty()) {
    v.AddMember("image", field::Str(status.image, a), a);
  }
  v.AddMember("ready", status.ready, a);
  v.AddMember("started", status.started, a);
  v.AddMember("restartCount", status.restart_count, a);
  if (!status.state.empty()) {
    rapidjson::Value detail(rapidjson::kObjectType);
    if (!status.state_reason.empty()) {
      detail.AddMember("reason", field::Str(status.state_reason, a), a);
    }
    if (!status.state_message.empty()) {
      detail.AddMember("message", field::Str(status.state_message, a), a);
    }
    if (status.state == "terminated" && status.exit_code.has_value()) {
      detail.AddMember("exitCode", *status.exit_code, a);
    }
    rapidjson::Value state(rapidjson::kObjectType);
    state.AddMember(field::Str(status.state, a), detail, a);
    v.AddMember("state", state, a);
  }
  const size_t i = NamedIndex("/status/containerStatuses", status.name);
  (void)builder_.Set(absl::StrCat("/status/containerStatuses/", i), v);
  return *this;
}

absl::StatusOr<ObjectPtr> PodBuilder::Build() const {
  if (!error_.ok()) return error_;
  return builder_.Build();
}

}  // namespace api
}  // namespace kcr
