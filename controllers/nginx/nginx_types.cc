#include "controllers/nginx/nginx_types.h"

#include "base/status_macros.h"

namespace kcr::nginx {

using namespace api::crd;            // NOLINT: the CRD field types and
using namespace api::crd::internal;  // NOLINT: helpers are this file's idiom.

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
    KCR_RETURN_IF_ERROR(
        ReadStatusCommon(*status, &s.observed_generation, &s.conditions));
    n.status = std::move(s);
  }
  return n;
}

rapidjson::Document Nginx::ToJson() const {
  rapidjson::Document d = NewDocument(kApiVersion, kKind, metadata);
  auto& a = d.GetAllocator();
  rapidjson::Value s(rapidjson::kObjectType);
  WriteInt(&s, "replicas", spec.replicas, a);
  WriteString(&s, "image", spec.image, a);
  WriteInt(&s, "port", spec.port, a);
  WriteMember(&d, "spec", &s, a);
  if (status) {
    rapidjson::Value st(rapidjson::kObjectType);
    WriteInt(&st, "readyReplicas", status->ready_replicas, a);
    WriteStatusCommon(&st, status->observed_generation, status->conditions, a);
    WriteMember(&d, "status", &st, a);
  }
  return d;
}

}  // namespace kcr::nginx
