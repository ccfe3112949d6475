#include "apiserver/kube_controllers/clusterrole_aggregation_controller.h"

#include <utility>
#include <vector>

#include "api/json/json_util.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "glog/logging.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";

const rapidjson::Value* Field(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(key);
  return it == v.MemberEnd() ? nullptr : &it->value;
}

bool Aggregates(const api::ObjectPtr& o) {
  if (o == nullptr) return false;
  const rapidjson::Value* rule = Field(o->json(), "aggregationRule");
  return rule != nullptr && rule->IsObject();
}

}  // namespace

ClusterRoleAggregationController::ClusterRoleAggregationController(
    Registry* registry, const Clock* clock,
    IncrementalControllerOptions options)
    : IncrementalController(registry, clock, options),
      collection_(registry->resources()
                      ->Lookup(kRbacGroup, "v1", "clusterroles")
                      ->StorageKey()) {}

bool ClusterRoleAggregationController::Wants(const StoredEvent& event) const {
  return event.collection == collection_;
}

void ClusterRoleAggregationController::OnEvent(const StoredEvent& event) {
  if (event.collection != collection_) return;
  if (Aggregates(event.object) || Aggregates(event.previous)) {
    aggregated_.insert(std::string(event.object->name()));
  }
  // Any ClusterRole's labels or rules may feed an aggregated one.
  for (const std::string& name : aggregated_) Enqueue(name);
}

void ClusterRoleAggregationController::EnqueueAll() {
  for (const api::ObjectPtr& o : storage()->Snapshot(collection_)) {
    if (Aggregates(o)) aggregated_.insert(std::string(o->name()));
  }
  for (const std::string& name : aggregated_) Enqueue(name);
}

absl::Time ClusterRoleAggregationController::SyncKey(const std::string& key,
                                                     absl::Time now) {
  api::ObjectPtr role = storage()->Get(collection_, "", key);
  if (!Aggregates(role) || role->being_deleted()) {
    aggregated_.erase(key);
    return absl::InfiniteFuture();
  }
  std::vector<api::LabelSelector> selectors;
  const rapidjson::Value* list =
      Field(*Field(role->json(), "aggregationRule"), "clusterRoleSelectors");
  if (list != nullptr && list->IsArray()) {
    for (const auto& s : list->GetArray()) {
      auto selector = api::LabelSelector::FromLabelSelector(s);
      if (selector.ok()) selectors.push_back(std::move(*selector));
    }
  }
  rapidjson::Document rules(rapidjson::kArrayType);
  auto& a = rules.GetAllocator();
  for (const api::ObjectPtr& other : storage()->Snapshot(collection_)) {
    if (other->name() == role->name()) continue;
    const rapidjson::Value* metadata = Field(other->json(), "metadata");
    const rapidjson::Value* labels =
        metadata != nullptr ? Field(*metadata, "labels") : nullptr;
    bool matches = false;
    for (const api::LabelSelector& s : selectors) {
      if (s.Matches(labels)) {
        matches = true;
        break;
      }
    }
    if (!matches) continue;
    const rapidjson::Value* other_rules = Field(other->json(), "rules");
    if (other_rules == nullptr || !other_rules->IsArray()) continue;
    for (const auto& rule : other_rules->GetArray()) {
      bool seen = false;
      for (const auto& have : rules.GetArray()) {
        if (json::JsonDeepEqual(have, rule)) {
          seen = true;
          break;
        }
      }
      if (!seen) rules.PushBack(rapidjson::Value(rule, a), a);
    }
  }
  const rapidjson::Value* current = Field(role->json(), "rules");
  if (current != nullptr && json::JsonDeepEqual(*current, rules)) {
    return absl::InfiniteFuture();
  }
  if ((current == nullptr || current->Empty()) && rules.Empty()) {
    return absl::InfiniteFuture();
  }
  api::ObjectBuilder b;
  b.json().CopyFrom(role->json(), b.allocator());
  if (b.json().HasMember("rules")) b.json().RemoveMember("rules");
  b.json().AddMember("rules", rapidjson::Value(rules, b.allocator()),
                     b.allocator());
  ResourceInfoPtr r =
      registry()->resources()->Lookup(kRbacGroup, "v1", "clusterroles");
  auto w = registry()->Update(*r, "", key, std::move(b));
  if (!w.ok()) {
    // A write in between (409): the next pass sees it.
    VLOG(2) << "clusterrole aggregation retry name=" << key
            << " error=" << w.status();
    return now + absl::Milliseconds(100);
  }
  return absl::InfiniteFuture();
}

}  // namespace apiserver
}  // namespace kcr
