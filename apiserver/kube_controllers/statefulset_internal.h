// The parts of the statefulset controller (statefulset_controller.h) its
// files share and its tests reach: pod names and ordinals, claims, and the
// set's revisions.
#ifndef KCR_APISERVER_KUBE_CONTROLLERS_STATEFULSET_INTERNAL_H_
#define KCR_APISERVER_KUBE_CONTROLLERS_STATEFULSET_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "apiserver/registry/registry.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace statefulset_internal {

// kube's getParentNameAndOrdinal: `<parent>-<ordinal>`, or nullopt when the
// name does not end in an int32 ordinal.
std::optional<std::pair<std::string_view, int64_t>> ParentAndOrdinal(
    std::string_view pod_name);

// The names of the set's volumeClaimTemplates, in order.
std::vector<std::string> ClaimTemplateNames(const api::Object& set);

// `<template>-<set>-<ordinal>`.
std::string ClaimName(std::string_view template_name, std::string_view set,
                      int64_t ordinal);

// kube's isRunningAndAvailable: Running and Ready for `min_ready_seconds`
// at `now`. When ready but not yet available, lowers `*next` (if given) to
// when it will be.
bool IsAvailable(const api::Object& pod, int64_t min_ready_seconds,
                 absl::Time now, absl::Time* next);

// The ownerReferences `claim` (of `pod`) should carry under the set's
// persistentVolumeClaimRetentionPolicy (kube's isClaimOwnerUpToDate and
// updateClaimOwnerRefForSetAndPod): whenDeleted Delete makes the set the
// claim's controller; whenScaled Delete makes the pod the controller of a
// `scaled_down` ordinal's claims instead; Retain neither. Other owners are
// kept; when another controller owns the claim, the set and pod are only
// removed; a reference to an earlier set or pod of the same name leaves
// the claim as it is. The views point into the three objects.
std::vector<api::OwnerReferenceView> ClaimOwners(const api::Object& claim,
                                                 const api::Object& set,
                                                 const api::Object& pod,
                                                 bool scaled_down);

// The set's current and update revisions: their names (the pods'
// controller-revision-hash) and pod templates.
struct Revisions {
  std::string current_name;
  std::string update_name;
  // Point into the set or `current_doc`.
  const rapidjson::Value* current_template = nullptr;
  const rapidjson::Value* update_template = nullptr;
  int64_t collision_count = 0;
  // The current revision's template when it is not the set's.
  std::unique_ptr<rapidjson::Document> current_doc;
};

// kube's getStatefulSetRevisions and truncateHistory: claims the set's
// ControllerRevisions, finds or records the one of its template (the
// update revision), finds the current one (status.currentRevision, or the
// update revision when there is none), and deletes the oldest beyond
// spec.revisionHistoryLimit that neither they nor `pods` use.
absl::StatusOr<Revisions> ResolveRevisions(
    Registry* registry, const api::Object& set,
    const std::vector<api::ObjectPtr>& pods);

}  // namespace statefulset_internal
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_KUBE_CONTROLLERS_STATEFULSET_INTERNAL_H_
