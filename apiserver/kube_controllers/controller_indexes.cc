#include "apiserver/kube_controllers/controller_indexes.h"

#include <optional>
#include <vector>

#include "api/object.h"
#include "api/types/field.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {

std::string OrphanKey(std::string_view ns) { return Cat("orphan:", ns); }

std::string PodLabelKey(std::string_view ns, std::string_view key,
                        std::string_view value) {
  return Cat(ns, "/", key, "=", value);
}

std::string AnySelectorKey(std::string_view ns) {
  return Cat("any-selector:", ns);
}

namespace {

bool IsCoreKind(const api::Object& o, std::string_view kind) {
  return o.kind() == kind && o.api_version() == "v1";
}

// The kinds whose spec.selector picks pods (or, for Deployments,
// ReplicaSets) to own: their selector is a LabelSelector, but for the
// ReplicationController's plain map.
bool HasOwnerSelector(const api::Object& o) {
  const std::string_view kind = o.kind();
  if (o.api_version() == "apps/v1") {
    return kind == "Deployment" || kind == "ReplicaSet" ||
           kind == "StatefulSet" || kind == "DaemonSet";
  }
  if (o.api_version() == "batch/v1") return kind == "Job";
  return IsCoreKind(o, "ReplicationController");
}

// The kinds an owner adopts when its selector matches them.
bool Adoptable(const api::Object& o) {
  if (o.api_version() == "apps/v1") {
    return o.kind() == "ReplicaSet" || o.kind() == "ControllerRevision";
  }
  return IsCoreKind(o, "Pod");
}

void IndexSelector(const api::Object& o, std::vector<std::string>* out) {
  if (!HasOwnerSelector(o)) return;
  const rapidjson::Value* selector =
      api::field::Object(api::field::Object(&o.json(), "spec"), "selector");
  if (selector == nullptr) return;
  const rapidjson::Value* match_labels =
      IsCoreKind(o, "ReplicationController")
          ? selector
          : api::field::Object(selector, "matchLabels");
  const rapidjson::Value::Member* best = nullptr;
  size_t best_size = 0;
  if (match_labels != nullptr) {
    for (const auto& entry : match_labels->GetObject()) {
      if (!entry.value.IsString()) continue;
      const size_t size =
          entry.name.GetStringLength() + entry.value.GetStringLength();
      if (best == nullptr || size > best_size) {
        best = &entry;
        best_size = size;
      }
    }
  }
  if (best == nullptr) {
    out->push_back(AnySelectorKey(o.namespace_()));
    return;
  }
  out->push_back(PodLabelKey(o.namespace_(), api::field::View(best->name),
                             api::field::View(best->value)));
}

}  // namespace

std::vector<api::ObjectPtr> SelectorCandidates(const Storage& storage,
                                               std::string_view collection,
                                               const api::Object& selected) {
  std::vector<api::ObjectPtr> candidates = storage.ByIndex(
      collection, kSelectorIndex, AnySelectorKey(selected.namespace_()));
  for (const auto& [k, v] : selected.labels()) {
    for (api::ObjectPtr& o :
         storage.ByIndex(collection, kSelectorIndex,
                         PodLabelKey(selected.namespace_(), k, v))) {
      candidates.push_back(std::move(o));
    }
  }
  return candidates;
}

void AddControllerIndexes(Storage* storage) {
  storage->AddIndex(kUidIndex,
                    [](const api::Object& o, std::vector<std::string>* out) {
                      if (!o.uid().empty()) out->emplace_back(o.uid());
                    });
  storage->AddIndex(
      kOwnerIndex, [](const api::Object& o, std::vector<std::string>* out) {
        for (const api::OwnerReferenceView& ref : o.owner_references()) {
          out->emplace_back(ref.uid);
        }
      });
  storage->AddIndex(kControllerIndex, [](const api::Object& o,
                                         std::vector<std::string>* out) {
    const std::optional<api::OwnerReferenceView> ref = o.controller_reference();
    if (ref.has_value()) {
      out->emplace_back(ref->uid);
    } else if (Adoptable(o)) {
      out->push_back(OrphanKey(o.namespace_()));
    }
  });
  storage->AddIndex(kPodLabelIndex,
                    [](const api::Object& o, std::vector<std::string>* out) {
                      if (!IsCoreKind(o, "Pod")) return;
                      for (const auto& [k, v] : o.labels()) {
                        out->push_back(PodLabelKey(o.namespace_(), k, v));
                      }
                    });
  storage->AddIndex(kSelectorIndex, IndexSelector);
  storage->AddIndex(kServiceSelectorIndex, [](const api::Object& o,
                                              std::vector<std::string>* out) {
    if (!IsCoreKind(o, "Service")) return;
    const rapidjson::Value* selector =
        api::field::Object(api::field::Object(&o.json(), "spec"), "selector");
    if (selector == nullptr) return;
    for (const auto& m : selector->GetObject()) {
      if (!m.value.IsString()) continue;
      out->push_back(PodLabelKey(o.namespace_(), api::field::View(m.name),
                                 api::field::View(m.value)));
    }
  });
}

}  // namespace apiserver
}  // namespace kcr
