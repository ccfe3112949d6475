// The StatefulSet's revisions (kube's getStatefulSetRevisions and
// truncateHistory) over controller_history.h.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "api/types/field.h"
#include "apiserver/kube_controllers/controller_history.h"
#include "apiserver/kube_controllers/statefulset_controller.h"
#include "apiserver/kube_controllers/statefulset_internal.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {
namespace statefulset_internal {

namespace field = ::kcr::api::field;

absl::StatusOr<Revisions> ResolveRevisions(
    Registry* registry, const api::Object& set,
    const std::vector<api::ObjectPtr>& pods) {
  absl::StatusOr<History> history =
      SyncHistory(registry, set, kStatefulSetHistory);
  if (!history.ok()) return history.status();
  Revisions r;
  r.collision_count = history->collision_count;
  r.update_name = std::string(history->update->name());
  // The update revision holds the set's template as it is now.
  r.update_template =
      field::Object(field::Object(&set.json(), "spec"), "template");
  r.current_template = r.update_template;
  r.current_name = r.update_name;
  const std::string_view status_current =
      field::String(field::Object(&set.json(), "status"), "currentRevision");
  if (!status_current.empty() && status_current != r.update_name) {
    if (api::ObjectPtr current = FindRevision(*history, status_current);
        current != nullptr) {
      absl::StatusOr<rapidjson::Document> t = RevisionTemplate(*current);
      if (t.ok()) {
        r.current_doc = std::make_unique<rapidjson::Document>(std::move(*t));
        r.current_template = r.current_doc.get();
        r.current_name = std::string(status_current);
      }
    }
  }
  // kube truncates at the end of the sync with the pods it began with;
  // the revisions live then are the same.
  absl::flat_hash_set<std::string> live = {r.current_name, r.update_name};
  for (const api::ObjectPtr& pod : pods) {
    if (auto v = pod->Label(kControllerRevisionHashLabel); v.has_value()) {
      live.insert(std::string(*v));
    }
  }
  const int64_t limit =
      field::Int64(field::Object(&set.json(), "spec"), "revisionHistoryLimit")
          .value_or(10);
  if (absl::Status s = TruncateHistory(registry, *history, live, limit);
      !s.ok()) {
    LOG(WARNING) << "statefulset controller: history of set=" << set.Key()
                 << ": " << s;
  }
  return r;
}

}  // namespace statefulset_internal
}  // namespace apiserver
}  // namespace kcr
