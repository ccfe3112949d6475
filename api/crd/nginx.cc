#include "api/crd/nginx.h"

#include "runtime/base/status_macros.h"

namespace kcr {
namespace api {
namespace crd {

using namespace internal;  // NOLINT: the field helpers are this file's idiom.

absl::StatusOr<Nginx> Nginx::FromJson(const rapidjson::Value& json) {
  Nginx n;
  KCR_RETURN_IF_ERROR(
      ReadTypeAndMetadata(json, kApiVersion, kKind, &n.metadata));
  const rapidjson::Value* spec;
  KCR_RETURN_IF_ERROR(ReadObject(json, "spec", "", &spec));
  if (spec != nullptr) {
    KCR_RETURN_IF_ERROR(ReadInt(*spec, "replicas", "spec", &n.spec.replicas));
    KCR_RETURN_IF_ERROR(ReadString(*spec, "image", "spec", &n.spec.image));
    KCR_RETURN_IF_ERROR(ReadInt(*spec, "port", "spec", &n.spec.port));
  }
  const rapidjson::Value* status;
  KCR_RETURN_IF_ERROR(ReadObject(json, "status", "", &status));
  if (status != nullptr) {
    Status s;
    KCR_RETURN_IF_ERROR(
        ReadInt(*status, "readyReplicas", "status", &s.ready_replicas));
    KCR_RETURN_IF_ERROR(ReadInt(*status, "observedGeneration", "status",
                                &s.observed_generation));
    KCR_RETURN_IF_ERROR(
        ReadConditions(*status, "conditions", "status", &s.conditions));
    n.status = std::move(s);
  }
  return n;
}

void Nginx::ApplyDefaults() {
  if (!spec.replicas) spec.replicas = kDefaultReplicas;
  if (!spec.image) spec.image = kDefaultImage;
  if (!spec.port) spec.port = kDefaultPort;
}

std::vector<std::string> Nginx::Validate() const {
  std::vector<std::string> out;
  if (spec.replicas) ValidateMinimum("spec.replicas", *spec.replicas, 0, &out);
  if (spec.image) ValidateMinLength("spec.image", *spec.image, 1, &out);
  if (spec.port) {
    ValidateMinimum("spec.port", *spec.port, 1, &out);
    ValidateMaximum("spec.port", *spec.port, 65535, &out);
  }
  if (status) {
    if (status->ready_replicas) {
      ValidateMinimum("status.readyReplicas", *status->ready_replicas, 0, &out);
    }
    if (status->observed_generation) {
      ValidateMinimum("status.observedGeneration", *status->observed_generation,
                      0, &out);
    }
    ValidateConditions("status.conditions", status->conditions, &out);
  }
  return out;
}

rapidjson::Document Nginx::ToJson() const {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  WriteString(&d, "apiVersion", std::string(kApiVersion), a);
  WriteString(&d, "kind", std::string(kKind), a);
  WriteRaw(&d, "metadata", metadata, a);
  rapidjson::Value s(rapidjson::kObjectType);
  WriteInt(&s, "replicas", spec.replicas, a);
  WriteString(&s, "image", spec.image, a);
  WriteInt(&s, "port", spec.port, a);
  WriteMember(&d, "spec", &s, a);
  if (status) {
    rapidjson::Value st(rapidjson::kObjectType);
    WriteInt(&st, "readyReplicas", status->ready_replicas, a);
    WriteInt(&st, "observedGeneration", status->observed_generation, a);
    WriteConditions(&st, "conditions", status->conditions, a);
    WriteMember(&d, "status", &st, a);
  }
  return d;
}

}  // namespace crd
}  // namespace api
}  // namespace kcr
