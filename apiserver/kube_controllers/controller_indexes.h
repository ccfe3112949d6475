// The Storage indexes the built-in controllers look objects up by, as
// kube-controller-manager's informers index theirs: a sync reads the objects
// of its key, never a whole collection.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_CONTROLLER_INDEXES_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_CONTROLLER_INDEXES_H_

#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "apiserver/storage/storage.h"

namespace kcr {
namespace apiserver {

// metadata.uid.
inline constexpr char kUidIndex[] = "uid";
// The uid of every owner reference (the garbage collector's graph: owner
// uid -> dependents).
inline constexpr char kOwnerIndex[] = "owner";
// The uid of the controller owner reference, or OrphanKey(namespace) for
// the kinds owners adopt (Pods, ReplicaSets, ControllerRevisions) without
// one (kube's controllerUIDIndex): a ReplicaSet's pods are those filed
// under its uid plus the orphans of its namespace, and a Deployment's
// ReplicaSets, a StatefulSet's revisions the same. Orphans of other kinds
// are not filed: nothing adopts them, and every Event, ConfigMap or custom
// resource would otherwise join one entry per namespace.
inline constexpr char kControllerIndex[] = "controller";
// Pods by PodLabelKey(namespace, key, value) of each label: the pods a
// selector may match are those filed under one of its requirements.
inline constexpr char kPodLabelIndex[] = "pod-label";
// Services by PodLabelKey(namespace, key, value) of each entry of
// spec.selector: the Services that may select a pod are those filed under
// one of its labels.
inline constexpr char kServiceSelectorIndex[] = "service-selector";

// The owners by selector — Deployments, ReplicaSets, StatefulSets,
// DaemonSets, Jobs and ReplicationControllers — by one entry of
// spec.selector.matchLabels (of the ReplicationController's map selector),
// as PodLabelKey(namespace, key, value), or by AnySelectorKey(namespace)
// when the selector has no matchLabels. An object such a selector matches
// carries every matchLabels entry, so the owners that may adopt an orphan
// are those filed under one of its labels or under AnySelectorKey
// (SelectorCandidates). The entry is the longest, so that a label many
// selectors share (app: nginx) files none of them when a specific one is
// there.
inline constexpr char kSelectorIndex[] = "selector";

// The kControllerIndex value of the objects of `ns` without a controller.
std::string OrphanKey(std::string_view ns);
// The kPodLabelIndex / kServiceSelectorIndex value of one label.
std::string PodLabelKey(std::string_view ns, std::string_view key,
                        std::string_view value);

// The kSelectorIndex value of the selectors of `ns` without matchLabels.
std::string AnySelectorKey(std::string_view ns);

// The objects of `collection` (one of the owners above) whose selector
// may match `selected`, an object of the same namespace, through
// kSelectorIndex; the caller matches the selectors. Costs the candidates,
// not the namespace.
std::vector<api::ObjectPtr> SelectorCandidates(const Storage& storage,
                                               std::string_view collection,
                                               const api::Object& selected);

// Adds the indexes above to `storage` (those it has already are kept).
void AddControllerIndexes(Storage* storage);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_CONTROLLER_INDEXES_H_
