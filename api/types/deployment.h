// Deployment (apps/v1): a read-only view of spec and status, and a builder
// for the Deployments controllers create and scale.
#ifndef KCR_API_TYPES_DEPLOYMENT_H_
#define KCR_API_TYPES_DEPLOYMENT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/types/condition.h"
#include "api/types/owner_reference.h"
#include "api/types/view.h"

namespace kcr {
namespace api {

// spec.template.spec.containers[i] (the fields controllers compare).
struct ContainerSpec {
  std::string_view name;
  std::string_view image;
  std::vector<int32_t> container_ports;
};

class DeploymentView : public TypedView {
 public:
  // Where it lives on the server (GroupVersionResource and scope).
  static constexpr char kGroup[] = "apps";
  static constexpr char kVersion[] = "v1";
  static constexpr char kPlural[] = "deployments";
  static constexpr bool kNamespaced = true;

  // InvalidArgument when `deployment` is null, of another kind, or has
  // spec.selector.matchLabels or template labels that are not strings.
  static absl::StatusOr<DeploymentView> Create(ObjectPtr deployment);

  // spec.replicas; 1 when absent (the API server's default).
  int32_t replicas() const;
  // spec.selector (a LabelSelector object), null when absent.
  const rapidjson::Value* selector() const;
  StringMapView selector_match_labels() const;
  // spec.template (a PodTemplateSpec), null when absent.
  const rapidjson::Value* pod_template() const;
  StringMapView template_labels() const;
  std::vector<ContainerSpec> containers() const;

  // status.*; 0 when absent.
  int32_t status_replicas() const;
  int32_t ready_replicas() const;
  int32_t available_replicas() const;
  int32_t updated_replicas() const;
  int64_t observed_generation() const;
  std::vector<Condition> conditions() const;

 private:
  explicit DeploymentView(ObjectPtr d) : TypedView(std::move(d)) {}
};

// Builds an apps/v1 Deployment whose selector and pod template labels are
// the same map, with one or more containers.
class DeploymentBuilder {
 public:
  DeploymentBuilder(std::string_view namespace_, std::string_view name);
  // Edits an existing Deployment (deep copy).
  explicit DeploymentBuilder(const Object& deployment);

  DeploymentBuilder& SetReplicas(int32_t replicas);
  // metadata.labels of the Deployment.
  DeploymentBuilder& SetLabels(const std::map<std::string, std::string>& l);
  // spec.selector.matchLabels and spec.template.metadata.labels.
  DeploymentBuilder& SetSelectorLabels(
      const std::map<std::string, std::string>& labels);
  // Adds or updates the container `name` in the pod template; `port` 0
  // leaves ports unset.
  DeploymentBuilder& SetContainer(std::string_view name, std::string_view image,
                                  int32_t port = 0);
  DeploymentBuilder& SetOwner(const OwnerReference& owner);

  ObjectBuilder& object() { return builder_; }
  std::string ToJson() const { return builder_.ToJson(); }
  absl::StatusOr<ObjectPtr> Build() const { return builder_.Build(); }

 private:
  ObjectBuilder builder_;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_DEPLOYMENT_H_
