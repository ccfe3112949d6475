#include "apiserver/kube_controllers/namespace_controller.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/object_builder.h"
#include "api/types/time.h"
#include "apiserver/kube_controllers/stored_objects.h"
#include "base/str_cat.h"
#include "glog/logging.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace {

constexpr char kKubernetesFinalizer[] = "kubernetes";

struct Condition {
  const char* type;
  bool status;
  std::string reason;
  std::string message;
};

// The conditions kube-controller-manager's namespace deleter reports, in its
// order.
std::vector<Condition> Conditions(
    const std::map<std::string, int>& remaining_by_resource,
    const std::map<std::string, int>& remaining_by_finalizer) {
  std::vector<Condition> out = {
      {"NamespaceDeletionDiscoveryFailure", false, "ResourcesDiscovered",
       "All resources successfully discovered"},
      {"NamespaceDeletionGroupVersionParsingFailure", false,
       "ParsedGroupVersions", "All legacy kube types successfully parsed"},
      {"NamespaceDeletionContentFailure", false, "ContentDeleted",
       "All content successfully deleted, may be waiting on finalization"},
  };
  if (remaining_by_resource.empty()) {
    out.push_back({"NamespaceContentRemaining", false, "ContentRemoved",
                   "All content successfully removed"});
  } else {
    std::vector<std::string> parts;
    for (const auto& [resource, n] : remaining_by_resource) {
      parts.push_back(Cat(resource, " has ", n, " resource instances"));
    }
    out.push_back(
        {"NamespaceContentRemaining", true, "SomeResourcesRemain",
         Cat("Some resources are remaining: ", absl::StrJoin(parts, ", "))});
  }
  if (remaining_by_finalizer.empty()) {
    out.push_back({"NamespaceFinalizersRemaining", false,
                   "ContentHasNoFinalizers",
                   "All content-preserving finalizers finished"});
  } else {
    std::vector<std::string> parts;
    for (const auto& [finalizer, n] : remaining_by_finalizer) {
      parts.push_back(Cat(finalizer, " in ", n, " resource instances"));
    }
    out.push_back({"NamespaceFinalizersRemaining", true, "SomeFinalizersRemain",
                   Cat("Some content in the namespace has finalizers "
                       "remaining: ",
                       absl::StrJoin(parts, ", "))});
  }
  return out;
}

// The lastTransitionTime of condition `type` in `status` if its status is
// unchanged, else `now`.
std::string TransitionTime(const rapidjson::Value* conditions,
                           const Condition& c, const std::string& now) {
  if (conditions == nullptr || !conditions->IsArray()) return now;
  for (const auto& old : conditions->GetArray()) {
    if (!old.IsObject()) continue;
    auto t = old.FindMember("type");
    auto s = old.FindMember("status");
    auto l = old.FindMember("lastTransitionTime");
    if (t == old.MemberEnd() || !t->value.IsString() ||
        std::string(t->value.GetString()) != c.type) {
      continue;
    }
    if (s != old.MemberEnd() && s->value.IsString() &&
        std::string(s->value.GetString()) == (c.status ? "True" : "False") &&
        l != old.MemberEnd() && l->value.IsString()) {
      return l->value.GetString();
    }
  }
  return now;
}

}  // namespace

absl::Time NamespaceController::Sync() {
  ResourceInfoPtr namespaces =
      registry_->resources()->Lookup("", "v1", "namespaces");
  if (namespaces == nullptr) return absl::InfiniteFuture();
  std::vector<StoredCollection> collections =
      StoredCollections(*registry_->resources());
  terminating_.clear();
  const absl::Time now_time = clock_->Now();
  absl::Time next = absl::InfiniteFuture();
  std::unordered_map<std::string, absl::Time> seen;
  for (const api::ObjectPtr& ns :
       registry_->storage()->Snapshot(namespaces->StorageKey())) {
    if (!ns->being_deleted()) continue;
    const std::string name(ns->name());
    terminating_.insert(name);
    const std::string uid(ns->uid());
    auto it = first_seen_.find(uid);
    const absl::Time first = it == first_seen_.end() ? now_time : it->second;
    seen[uid] = first;
    if (now_time < first + deletion_grace_period_) {
      next = std::min(next, first + deletion_grace_period_);
      continue;
    }

    std::map<std::string, int> by_resource;
    std::map<std::string, int> by_finalizer;
    for (const StoredCollection& c : collections) {
      if (!c.resource->namespaced()) continue;
      for (const api::ObjectPtr& o :
           registry_->storage()->Snapshot(c.key, name)) {
        ++by_resource[Cat(c.resource->resource(), ".", c.resource->group())];
        for (std::string_view f : o->finalizers())
          ++by_finalizer[std::string(f)];
        if (o->being_deleted()) continue;
        DeleteOptions options;
        options.propagation_policy = "Background";
        options.precondition_uid = std::string(o->uid());
        absl::Status s =
            registry_->Delete(*c.resource, name, o->name(), options).status();
        if (!s.ok() && !IsRaceError(s)) {
          LOG(WARNING) << "namespace controller: delete failed namespace="
                       << name << " resource=" << c.resource->resource()
                       << " name=" << o->name() << ": " << s;
        }
      }
    }
    // Recount after the deletes: objects without finalizers are gone now.
    by_resource.clear();
    by_finalizer.clear();
    for (const StoredCollection& c : collections) {
      if (!c.resource->namespaced()) continue;
      for (const api::ObjectPtr& o :
           registry_->storage()->Snapshot(c.key, name)) {
        ++by_resource[Cat(c.resource->resource(), ".", c.resource->group())];
        for (std::string_view f : o->finalizers())
          ++by_finalizer[std::string(f)];
      }
    }

    // Status conditions, written only when they change.
    const std::string now = api::FormatRfc3339(clock_->Now());
    api::ObjectBuilder b = ns->ToBuilder();
    const rapidjson::Value* old = ns->Find("/status/conditions");
    rapidjson::Value list(rapidjson::kArrayType);
    auto& a = b.allocator();
    for (const Condition& c : Conditions(by_resource, by_finalizer)) {
      rapidjson::Value v(rapidjson::kObjectType);
      v.AddMember("type", rapidjson::Value(c.type, a), a);
      v.AddMember("status", rapidjson::Value(c.status ? "True" : "False", a),
                  a);
      v.AddMember("lastTransitionTime",
                  rapidjson::Value(TransitionTime(old, c, now).c_str(), a), a);
      v.AddMember("reason", rapidjson::Value(c.reason.c_str(), a), a);
      v.AddMember("message", rapidjson::Value(c.message.c_str(), a), a);
      list.PushBack(v, a);
    }
    (void)b.Set("/status/conditions", list);
    (void)b.SetString("/status/phase", "Terminating");
    WriteOptions status_write;
    status_write.subresource = "status";
    absl::StatusOr<WriteResult> updated =
        registry_->Update(*namespaces, "", name, std::move(b), status_write);
    if (!updated.ok()) {
      if (!IsRaceError(updated.status())) {
        LOG(WARNING) << "namespace controller: status update failed namespace="
                     << name << ": " << updated.status();
      }
      continue;
    }
    if (by_resource.empty()) Finalize(*namespaces, *updated->object);
  }
  first_seen_ = std::move(seen);
  return next;
}

bool NamespaceController::Wants(const StoredEvent& event) const {
  if (event.collection == "/namespaces") return true;
  return event.object != nullptr &&
         terminating_.count(std::string(event.object->namespace_())) > 0;
}

void NamespaceController::Finalize(const ResourceInfo& namespaces,
                                   const api::Object& ns) {
  const rapidjson::Value* finalizers = ns.Find("/spec/finalizers");
  if (finalizers == nullptr || !finalizers->IsArray()) return;
  api::ObjectBuilder b = ns.ToBuilder();
  rapidjson::Value kept(rapidjson::kArrayType);
  bool found = false;
  for (const auto& f : finalizers->GetArray()) {
    if (f.IsString() && std::string(f.GetString()) == kKubernetesFinalizer) {
      found = true;
      continue;
    }
    kept.PushBack(rapidjson::Value(f, b.allocator()), b.allocator());
  }
  if (!found) return;
  if (kept.Empty()) {
    b.Remove("/spec/finalizers");
  } else {
    (void)b.Set("/spec/finalizers", kept);
  }
  VLOG(2) << "namespace controller: finalizing namespace=" << ns.name();
  WriteOptions finalize;
  finalize.subresource = "finalize";
  absl::Status s =
      registry_->Update(namespaces, "", ns.name(), std::move(b), finalize)
          .status();
  if (!s.ok() && !IsRaceError(s)) {
    LOG(WARNING) << "namespace controller: finalize failed namespace="
                 << ns.name() << ": " << s;
  }
}

}  // namespace apiserver
}  // namespace kcr
