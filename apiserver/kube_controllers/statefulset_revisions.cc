// The StatefulSet's revisions (kube's getStatefulSetRevisions).
#include <string>
#include <vector>

#include "api/json/json_util.h"
#include "api/types/field.h"
#include "apiserver/kube_controllers/statefulset_internal.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace statefulset_internal {

absl::StatusOr<Revisions> ResolveRevisions(
    Registry* registry, const api::Object& set,
    const std::vector<api::ObjectPtr>& pods, absl::Time now) {
  (void)registry;
  (void)pods;
  (void)now;
  Revisions r;
  const rapidjson::Value* spec = api::field::Object(&set.json(), "spec");
  r.update_template = api::field::Object(spec, "template");
  r.collision_count =
      api::field::Int64(api::field::Object(&set.json(), "status"),
                        "collisionCount")
          .value_or(0);
  absl::StatusOr<std::string> text =
      r.update_template == nullptr ? absl::StatusOr<std::string>("{}")
                                   : json::JsonToString(*r.update_template);
  if (!text.ok()) return text.status();
  uint32_t h = 2166136261u;
  for (unsigned char c : *text) {
    h ^= c;
    h *= 16777619u;
  }
  r.update_name = Cat(set.name(), "-", h);
  r.current_name = r.update_name;
  r.current_template = r.update_template;
  return r;
}

}  // namespace statefulset_internal
}  // namespace apiserver
}  // namespace kcr
