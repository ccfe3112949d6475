// The ControllerRevisions (apps/v1) of a StatefulSet or DaemonSet, as
// kube-controller-manager keeps them (pkg/controller/history, the
// statefulset controller's getStatefulSetRevisions and the daemonset
// controller's constructHistory).
//
// A revision snapshots the owner's pod template: its data is the patch
// {"spec":{"template":{...,"$patch":"replace"}}}, its `revision` a number
// one above the highest of the owner's other revisions, its labels the
// template's labels plus the hash label, its annotations the owner's, and a
// controller ownerReference (blockOwnerDeletion) names the owner. Its name
// is `<owner>-<hash>`, the hash a SafeEncodedHash of the template (with
// status.collisionCount when set); a name taken by a revision with other
// data raises the collision count and hashes again.
//
// SyncHistory, per sync of the owner:
//   1. claims: the owner's revisions are those filed under its uid
//      (kControllerIndex); orphans of its namespace that its selector
//      matches are adopted (a controller ownerReference added), owned ones
//      it no longer matches released;
//   2. finds the revision holding the current template: the newest such
//      is reused; an older one (a rollback) gets the next revision number;
//      otherwise a new one is created. Duplicates of the current template
//      (DaemonSets) are deleted but the newest.
// TruncateHistory then deletes the oldest revisions beyond
// spec.revisionHistoryLimit that no pod and neither the current nor the
// update revision uses.
//
// Reads the owner's revisions through the index, never the collection.
// Stateless; thread-safe as the Registry is.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_CONTROLLER_HISTORY_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_CONTROLLER_HISTORY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/object.h"
#include "apiserver/registry/registry.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// How one owner kind names and labels its revisions.
struct HistoryStyle {
  // The owner's kind (apps/v1).
  std::string_view owner_kind;
  // The label carrying the revision's hash: the StatefulSet's
  // controller.kubernetes.io/hash, the DaemonSet's controller-revision-hash
  // (the label its pods carry too).
  std::string_view hash_label;
};
inline constexpr HistoryStyle kStatefulSetHistory{
    "StatefulSet", "controller.kubernetes.io/hash"};
inline constexpr HistoryStyle kDaemonSetHistory{"DaemonSet",
                                                "controller-revision-hash"};

struct History {
  // The owner's revisions, lowest `revision` first (then by name); `update`
  // is among them.
  std::vector<api::ObjectPtr> revisions;
  // The revision holding the owner's spec.template now.
  api::ObjectPtr update;
  // update's hash: a DaemonSet's pods carry it as controller-revision-hash
  // (a StatefulSet's carry the revision's name).
  std::string hash;
  // status.collisionCount to report (raised by a name collision).
  int64_t collision_count = 0;
};

// Claims the owner's revisions and ensures the one holding its current
// template (see above). `owner` is the stored StatefulSet or DaemonSet.
absl::StatusOr<History> SyncHistory(Registry* registry,
                                    const api::Object& owner,
                                    const HistoryStyle& style);

// The revision of `history` named `name`, or null.
api::ObjectPtr FindRevision(const History& history, std::string_view name);

// The `revision` number of a ControllerRevision (0 when missing).
int64_t RevisionNumber(const api::Object& revision);

// Deletes the oldest of history.revisions beyond `limit` that are not
// history.update and not named in `live` (the revisions the pods and the
// owner's status still name). A revision already gone is no error.
absl::Status TruncateHistory(Registry* registry, const History& history,
                             const absl::flat_hash_set<std::string>& live,
                             int64_t limit);

// The pod template a revision holds (its data's spec.template without
// "$patch"); InvalidArgument when the data holds none.
absl::StatusOr<rapidjson::Document> RevisionTemplate(
    const api::Object& revision);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_CONTROLLER_HISTORY_H_
