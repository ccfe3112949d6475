#include "apiserver/registry/scale.h"

#include <string>

#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "api/patch/json_patch.h"
#include "api/selector/label_selector.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {

using rapidjson::Value;

absl::StatusOr<api::ObjectPtr> ScaleOf(const ResourceInfo& r,
                                       const api::ObjectPtr& o) {
  api::ObjectBuilder b("autoscaling/v1", "Scale");
  b.SetName(o->name());
  if (!o->namespace_().empty()) b.SetNamespace(o->namespace_());
  b.SetUid(o->uid());
  b.SetResourceVersion(o->resource_version());
  (void)b.SetString("/metadata/creationTimestamp", o->creation_timestamp());
  const Value* spec_replicas = o->Find(r.scale.spec_replicas);
  (void)b.SetInt("/spec/replicas",
                 spec_replicas != nullptr && spec_replicas->IsInt64()
                     ? spec_replicas->GetInt64()
                     : 0);
  const Value* status_replicas = o->Find(r.scale.status_replicas);
  (void)b.SetInt("/status/replicas",
                 status_replicas != nullptr && status_replicas->IsInt64()
                     ? status_replicas->GetInt64()
                     : 0);
  std::string selector;
  if (!r.custom && r.group().empty()) {
    // A ReplicationController selects by a plain label map.
    const Value* sel = o->Find("/spec/selector");
    if (sel != nullptr && sel->IsObject()) {
      api::LabelMap set;
      for (const auto& m : sel->GetObject()) {
        if (m.value.IsString()) set[m.name.GetString()] = m.value.GetString();
      }
      selector = api::LabelSelector::SelectorFromSet(set).ToString();
    }
  } else if (!r.custom) {
    const Value* sel = o->Find("/spec/selector");
    if (sel != nullptr) {
      auto s = api::LabelSelector::FromLabelSelector(*sel);
      if (s.ok()) selector = s->ToString();
    }
  } else if (!r.scale.label_selector.empty()) {
    const Value* sel = o->Find(r.scale.label_selector);
    if (sel != nullptr && sel->IsString()) selector = sel->GetString();
  }
  if (!selector.empty()) (void)b.SetString("/status/selector", selector);
  return b.Build();
}

absl::StatusOr<int64_t> ScaleReplicas(const Value& scale,
                                      std::string_view name) {
  const Value* replicas = api::ResolveJsonPointer(scale, "/spec/replicas");
  if (replicas == nullptr || !replicas->IsInt64() || replicas->GetInt64() < 0) {
    return api::StatusError::Invalid(
               {"autoscaling", "Scale"}, name,
               {FieldErr(api::FieldError::Type::kInvalid, "spec.replicas",
                         replicas != nullptr && replicas->IsInt64()
                             ? Cat(replicas->GetInt64())
                             : "null",
                         "must be greater than or equal to 0")})
        .ToStatus();
  }
  return replicas->GetInt64();
}

}  // namespace apiserver
}  // namespace kcr
