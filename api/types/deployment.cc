#include "api/types/deployment.h"

#include "api/types/field.h"

namespace kcr {
namespace api {
namespace {

const rapidjson::Value* Spec(const Object& o) {
  return field::Object(&o.json(), "spec");
}
const rapidjson::Value* Status(const Object& o) {
  return field::Object(&o.json(), "status");
}
const rapidjson::Value* MatchLabels(const Object& o) {
  return field::Member(field::Object(Spec(o), "selector"), "matchLabels");
}
const rapidjson::Value* TemplateLabels(const Object& o) {
  return field::Member(
      field::Object(field::Object(Spec(o), "template"), "metadata"), "labels");
}
StringMapView MapView(const rapidjson::Value* map) {
  return StringMapView(map != nullptr && map->IsObject() ? map : nullptr);
}

}  // namespace

absl::StatusOr<DeploymentView> DeploymentView::Create(ObjectPtr deployment) {
  if (absl::Status s = Check(deployment, "Deployment"); !s.ok()) return s;
  if (absl::Status s = field::CheckStringMap(MatchLabels(*deployment),
                                             "spec.selector.matchLabels");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = field::CheckStringMap(TemplateLabels(*deployment),
                                             "spec.template.metadata.labels");
      !s.ok()) {
    return s;
  }
  return DeploymentView(std::move(deployment));
}

int32_t DeploymentView::replicas() const {
  return field::Int32(Spec(object()), "replicas").value_or(1);
}

const rapidjson::Value* DeploymentView::selector() const {
  return field::Object(Spec(object()), "selector");
}

StringMapView DeploymentView::selector_match_labels() const {
  return MapView(MatchLabels(object()));
}

const rapidjson::Value* DeploymentView::pod_template() const {
  return field::Object(Spec(object()), "template");
}

StringMapView DeploymentView::template_labels() const {
  return MapView(TemplateLabels(object()));
}

std::vector<ContainerSpec> DeploymentView::containers() const {
  std::vector<ContainerSpec> out;
  const rapidjson::Value* list =
      field::Array(field::Object(pod_template(), "spec"), "containers");
  if (list == nullptr) return out;
  for (const rapidjson::Value& c : list->GetArray()) {
    if (!c.IsObject()) continue;
    ContainerSpec spec;
    spec.name = field::String(&c, "name");
    spec.image = field::String(&c, "image");
    if (const rapidjson::Value* ports = field::Array(&c, "ports")) {
      for (const rapidjson::Value& p : ports->GetArray()) {
        if (auto port = field::Int32(&p, "containerPort")) {
          spec.container_ports.push_back(*port);
        }
      }
    }
    out.push_back(std::move(spec));
  }
  return out;
}

int32_t DeploymentView::status_replicas() const {
  return field::Int32(Status(object()), "replicas").value_or(0);
}
int32_t DeploymentView::ready_replicas() const {
  return field::Int32(Status(object()), "readyReplicas").value_or(0);
}
int32_t DeploymentView::available_replicas() const {
  return field::Int32(Status(object()), "availableReplicas").value_or(0);
}
int32_t DeploymentView::updated_replicas() const {
  return field::Int32(Status(object()), "updatedReplicas").value_or(0);
}
int64_t DeploymentView::observed_generation() const {
  return field::Int64(Status(object()), "observedGeneration").value_or(0);
}
std::vector<Condition> DeploymentView::conditions() const {
  return ConditionsFromJson(field::Array(Status(object()), "conditions"));
}

DeploymentBuilder::DeploymentBuilder(std::string_view namespace_,
                                     std::string_view name)
    : builder_("apps/v1", "Deployment") {
  builder_.SetName(name).SetNamespace(namespace_);
}

DeploymentBuilder::DeploymentBuilder(const Object& deployment)
    : builder_(deployment) {}

DeploymentBuilder& DeploymentBuilder::SetReplicas(int32_t replicas) {
  (void)builder_.SetInt("/spec/replicas", replicas);
  return *this;
}

DeploymentBuilder& DeploymentBuilder::SetLabels(
    const std::map<std::string, std::string>& labels) {
  builder_.SetLabels(labels);
  return *this;
}

DeploymentBuilder& DeploymentBuilder::SetSelectorLabels(
    const std::map<std::string, std::string>& labels) {
  auto& a = builder_.allocator();
  rapidjson::Value map(rapidjson::kObjectType);
  for (const auto& [k, v] : labels) {
    map.AddMember(rapidjson::Value(k.c_str(), a),
                  rapidjson::Value(v.c_str(), a), a);
  }
  // Set() deep-copies, so the same map serves both places.
  (void)builder_.Set("/spec/selector/matchLabels", map);
  (void)builder_.Set("/spec/template/metadata/labels", map);
  return *this;
}

DeploymentBuilder& DeploymentBuilder::SetContainer(std::string_view name,
                                                   std::string_view image,
                                                   int32_t port) {
  auto& a = builder_.allocator();
  rapidjson::Value container(rapidjson::kObjectType);
  container.AddMember("name", field::Str(name, a), a);
  container.AddMember("image", field::Str(image, a), a);
  if (port != 0) {
    rapidjson::Value ports(rapidjson::kArrayType);
    rapidjson::Value p(rapidjson::kObjectType);
    p.AddMember("containerPort", port, a);
    ports.PushBack(p, a);
    container.AddMember("ports", ports, a);
  }
  const rapidjson::Value* list =
      builder_.Find("/spec/template/spec/containers");
  if (list != nullptr && list->IsArray()) {
    const size_t index = field::IndexByName(list, name);
    if (index < list->Size()) {
      // Keep the container's other fields; replace image and ports.
      const std::string base =
          "/spec/template/spec/containers/" + std::to_string(index);
      (void)builder_.SetString(base + "/image", image);
      if (port != 0) {
        (void)builder_.Set(base + "/ports", container["ports"]);
      }
      return *this;
    }
  } else {
    (void)builder_.Set("/spec/template/spec/containers",
                       rapidjson::Value(rapidjson::kArrayType));
  }
  (void)builder_.Set("/spec/template/spec/containers/-", container);
  return *this;
}

DeploymentBuilder& DeploymentBuilder::SetOwner(const OwnerReference& owner) {
  builder_.AddOwnerReference(owner.view());
  return *this;
}

}  // namespace api
}  // namespace kcr
