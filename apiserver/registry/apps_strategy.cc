#include "apiserver/registry/apps_strategy.h"

#include <string_view>

#include "api/object_builder.h"
#include "apiserver/registry/builtin_validation.h"
#include "apiserver/registry/core_strategy.h"

namespace kcr {
namespace apiserver {
namespace {

// metadata.annotations of `sent` onto `out` (removed when `sent` has none).
void CopyAnnotations(const rapidjson::Value& sent, api::ObjectBuilder* out) {
  if (!sent.IsObject()) return;
  const auto meta = sent.FindMember("metadata");
  if (meta == sent.MemberEnd() || !meta->value.IsObject()) return;
  const auto annotations = meta->value.FindMember("annotations");
  if (annotations == meta->value.MemberEnd() ||
      !annotations->value.IsObject()) {
    out->Remove("/metadata/annotations");
    return;
  }
  (void)out->Set("/metadata/annotations", annotations->value);
}

class DeploymentStrategyImpl : public Strategy {
 public:
  void Default(api::ObjectBuilder* b) const override {
    if (b->Find("/spec") == nullptr) return;
    if (b->Find("/spec/replicas") == nullptr)
      (void)b->SetInt("/spec/replicas", 1);
    if (b->Find("/spec/revisionHistoryLimit") == nullptr) {
      (void)b->SetInt("/spec/revisionHistoryLimit", 10);
    }
    if (b->Find("/spec/progressDeadlineSeconds") == nullptr) {
      (void)b->SetInt("/spec/progressDeadlineSeconds", 600);
    }
    // As apps/v1 SetDefaults_Deployment: an empty strategy (what kubectl's
    // generators send) is a RollingUpdate of 25% / 25%.
    // SetString creates a missing strategy or rollingUpdate and does nothing
    // under one that is not an object.
    SetIfAbsent(b, "/spec/strategy/type", "RollingUpdate");
    const rapidjson::Value* type = b->Find("/spec/strategy/type");
    if (type != nullptr && type->IsString() &&
        std::string_view(type->GetString()) == "RollingUpdate") {
      SetIfAbsent(b, "/spec/strategy/rollingUpdate/maxUnavailable", "25%");
      SetIfAbsent(b, "/spec/strategy/rollingUpdate/maxSurge", "25%");
    }
    DefaultPodSpec(b, "/spec/template/spec");
  }
  void PrepareForCreate(const ResourceInfo&, api::ObjectBuilder* b,
                        const std::string&) const override {
    (void)b->SetJson("/status", "{}");
  }
  void Validate(const ResourceInfo&, api::ObjectBuilder* b,
                std::vector<api::FieldError>* errors) const override {
    ValidateDeployment(b->json(), errors);
  }
  void ValidateUpdate(const ResourceInfo&, const rapidjson::Value& live,
                      api::ObjectBuilder* b, const std::string&,
                      std::vector<api::FieldError>* errors) const override {
    ValidateDeploymentUpdate(live, b->json(), errors);
  }
  // deploymentStatusStrategy keeps the sent annotations: the deployment
  // controller records the revision with its status write.
  void PrepareForStatusUpdate(const rapidjson::Value& sent,
                              api::ObjectBuilder* out) const override {
    CopyAnnotations(sent, out);
  }
};

class ReplicaSetStrategyImpl : public Strategy {
 public:
  void Default(api::ObjectBuilder* b) const override {
    if (b->Find("/spec") == nullptr) return;
    if (b->Find("/spec/replicas") == nullptr)
      (void)b->SetInt("/spec/replicas", 1);
    DefaultPodSpec(b, "/spec/template/spec");
  }
  void PrepareForCreate(const ResourceInfo&, api::ObjectBuilder* b,
                        const std::string&) const override {
    (void)b->SetJson("/status", "{\"replicas\":0}");
  }
  void Validate(const ResourceInfo&, api::ObjectBuilder* b,
                std::vector<api::FieldError>* errors) const override {
    ValidateReplicaSet(b->json(), errors);
  }
  void ValidateUpdate(const ResourceInfo&, const rapidjson::Value& live,
                      api::ObjectBuilder* b, const std::string&,
                      std::vector<api::FieldError>* errors) const override {
    ValidateReplicaSetUpdate(live, b->json(), errors);
  }
  void PrepareForStatusUpdate(const rapidjson::Value& sent,
                              api::ObjectBuilder* out) const override {
    CopyAnnotations(sent, out);
  }
};

}  // namespace

const Strategy& DeploymentStrategy() {
  static const Strategy* const s = new DeploymentStrategyImpl();
  return *s;
}

const Strategy& ReplicaSetStrategy() {
  static const Strategy* const s = new ReplicaSetStrategyImpl();
  return *s;
}

}  // namespace apiserver
}  // namespace kcr
