#include "test/runtime/explorer/planted_controller.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/errors/errors.h"
#include "api/object.h"
#include "api/selector/label_selector.h"
#include "base/mutex.h"
#include "base/status_macros.h"
#include "base/string_view.h"
#include "glog/logging.h"
#include "runtime/cache/lister.h"
#include "runtime/client/options.h"
#include "runtime/client/rest_client.h"
#include "runtime/controller/builder.h"
#include "runtime/controller/predicate.h"
#include "runtime/controller/reconciler.h"

namespace kcr::explorer::testing {
namespace {

constexpr char kRole[] = "explorer.kcr.dev/role";
constexpr char kParent[] = "explorer.kcr.dev/parent";
constexpr char kMember[] = "explorer.kcr.dev/member";
constexpr char kReady[] = "explorer.kcr.dev/ready";
constexpr char kNamespace[] = "default";

client::Resource ConfigMaps() {
  return client::Resource::Namespaced({"", "v1", "configmaps"}, kNamespace);
}
client::Resource Secrets() {
  return client::Resource::Namespaced({"", "v1", "secrets"}, kNamespace);
}
// What the controller's informers watch: every namespace.
client::Resource AllConfigMaps() { return ConfigMaps().InNamespace(""); }
client::Resource AllSecrets() { return Secrets().InNamespace(""); }

std::set<std::string> Split(const api::Object& o, const char* pointer) {
  std::set<std::string> out;
  const rapidjson::Value* v = o.Find(pointer);
  if (v == nullptr || !v->IsString()) return out;
  for (absl::string_view s :
       absl::StrSplit(absl::string_view(v->GetString(), v->GetStringLength()),
                      ',', absl::SkipWhitespace())) {
    out.insert(std::string(s));
  }
  return out;
}

std::string Label(const api::Object& o, const char* key) {
  auto v = o.Label(key);
  return v.has_value() ? std::string(*v) : "";
}

class PlantedReconciler : public controller::Reconciler {
 public:
  PlantedReconciler(controller::Manager& mgr, PlantedBugs bugs)
      : bugs_(bugs),
        client_(mgr.GetClient()),
        parents_(mgr.GetInformerFactory()
                     ->InformerFor(AllConfigMaps())
                     ->GetIndexer(),
                 {"", "configmaps"}),
        children_(
            mgr.GetInformerFactory()->InformerFor(AllSecrets())->GetIndexer(),
            {"", "secrets"}) {}

  absl::StatusOr<controller::Result> Reconcile(
      const controller::Request& req,
      controller::ReconcileContext& rc) override {
    const Context& ctx = rc.ctx();
    {
      MutexLock lock(&mu_);
      if (given_up_.contains(req.ToString())) return controller::Result::Done();
    }
    auto parent = parents_.Get(req.namespace_, req.name);
    if (!parent.ok()) {
      if (api::IsNotFound(parent.status())) return controller::Result::Done();
      return parent.status();
    }
    const std::set<std::string> members = Split(**parent, "/data/members");
    const std::set<std::string> adopted = Split(**parent, "/data/adopted");
    std::map<std::string, std::vector<api::ObjectPtr>> by_member;
    for (api::ObjectPtr& child :
         children_.List(api::LabelSelector::SelectorFromSet(
             {{kRole, "child"}, {kParent, req.name}}))) {
      if (child->namespace_() != req.namespace_) continue;
      by_member[Label(*child, kMember)].push_back(std::move(child));
    }

    controller::Result result;
    for (const std::string& m : members) {
      if (bugs_.progress_in_memory) {
        const std::string key = absl::StrCat(req.ToString(), "/", m);
        {
          MutexLock lock(&mu_);
          if (made_.contains(key)) continue;
        }
        if (absl::Status e = CreateChild(ctx, **parent, m, true); !e.ok()) {
          return Failed(req, e);
        }
        MutexLock lock(&mu_);
        made_.insert(key);
        continue;
      }
      if (!by_member[m].empty()) continue;
      if (bugs_.forget_created_child) {
        if (absl::Status e = CreateChild(ctx, **parent, m, true); !e.ok()) {
          return Failed(req, e);
        }
        result = controller::Result::RequeueAfter(absl::Milliseconds(200));
        continue;
      }
      absl::Status s = CreateChild(ctx, **parent, m, false);
      if (!s.ok() && !api::IsAlreadyExists(s)) return Failed(req, s);
    }

    // Children of members in neither list go; a cached parent may be
    // behind its children, so the fixed controller reads it afresh first.
    std::optional<api::ObjectPtr> live;
    std::vector<std::string> ready;
    for (auto& [m, children] : by_member) {
      if (children.empty()) continue;
      bool keep = members.count(m) > 0 || adopted.count(m) > 0;
      if (!keep && !bugs_.delete_from_stale_list) {
        if (!live.has_value()) {
          auto got = client_->Get(ctx, ConfigMaps(), req.name);
          if (!got.ok()) return got.status();
          live = *got;
        }
        keep = Split(**live, "/data/members").count(m) > 0 ||
               Split(**live, "/data/adopted").count(m) > 0;
      }
      if (keep) {
        ready.push_back(m);
        continue;
      }
      for (const api::ObjectPtr& child : children) {
        absl::Status s = client_->Delete(ctx, Secrets(), child->name());
        if (!s.ok() && !api::IsNotFound(s)) return Failed(req, s);
      }
    }

    const std::string want = absl::StrJoin(ready, ",");
    auto have = (*parent)->Annotation(kReady);
    if (std::string(have.value_or("")) != want) {
      const std::string patch = absl::StrCat(R"({"metadata":{"annotations":{")",
                                             kReady, R"(":")", want, R"("}}})");
      auto patched = client_->Patch(ctx, ConfigMaps(), req.name,
                                    client::PatchType::kMerge, patch);
      if (!patched.ok() && !api::IsNotFound(patched.status())) {
        return Failed(req, patched.status());
      }
    }
    return result;
  }

 private:
  // The reconcile's end after a failed write `s`: its error (retried with
  // backoff); with conflict_is_fatal, a conflict makes the controller give
  // the parent up for good instead.
  absl::StatusOr<controller::Result> Failed(const controller::Request& req,
                                            absl::Status s) {
    if (!bugs_.conflict_is_fatal || !api::IsConflict(s)) return s;
    LOG(ERROR) << "planted controller: giving up " << req << ": " << s;
    MutexLock lock(&mu_);
    given_up_.insert(req.ToString());
    return controller::Result::Done();
  }

  absl::Status CreateChild(const Context& ctx, const api::Object& parent,
                           const std::string& member, bool generate) {
    const std::string name =
        absl::StrCat(ToAbsl(parent.name()), "-", member, generate ? "-" : "");
    const std::string json = absl::StrCat(
        R"({"apiVersion":"v1","kind":"Secret","metadata":{)",
        generate ? R"("generateName":")" : R"("name":")", name,
        R"(","namespace":")", ToAbsl(parent.namespace_()), R"(","labels":{")",
        kRole, R"(":"child",")", kParent, R"(":")", ToAbsl(parent.name()),
        R"(",")", kMember, R"(":")", member,
        R"("},"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":")",
        ToAbsl(parent.name()), R"(","uid":")", ToAbsl(parent.uid()),
        R"(","controller":true}]},"stringData":{"origin":"controller"}})");
    KCR_ASSIGN_OR_RETURN(api::ObjectPtr child, api::Object::Parse(json));
    return client_->Create(ctx, Secrets(), *child).status();
  }

  const PlantedBugs bugs_;
  client::RestClient* const client_;
  const cache::Lister parents_;
  const cache::Lister children_;
  Mutex mu_;
  absl::flat_hash_set<std::string> made_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> given_up_ ABSL_GUARDED_BY(mu_);
};

// The parent of a child, from its labels.
std::vector<controller::Request> ParentOf(const api::Object& child) {
  const std::string parent = Label(child, kParent);
  if (Label(child, kRole) != "child" || parent.empty()) return {};
  return {controller::Request{std::string(child.namespace_()), parent}};
}

Step CreateParent(const std::string& name, const std::string& members) {
  return Step::Create(
      ConfigMaps(),
      absl::StrCat(R"({"apiVersion":"v1","kind":"ConfigMap",)",
                   R"("metadata":{"name":")", name, R"(","labels":{")", kRole,
                   R"(":"parent"}},"data":{"members":")", members, R"("}})"));
}

}  // namespace

absl::Status AddPlantedController(controller::Manager& mgr, PlantedBugs bugs) {
  auto parents = controller::MatchingLabels(
      api::LabelSelector::SelectorFromSet({{kRole, "parent"}}));
  return controller::ControllerBuilder(mgr)
      .Named("planted")
      .For(AllConfigMaps(), {parents})
      .Watches(AllSecrets(), controller::MapFunc(ParentOf))
      .Complete(std::make_shared<PlantedReconciler>(mgr, bugs));
}

Scenario PlantedScenario(const std::string& name, PlantedBugs bugs) {
  Scenario s;
  s.name = name;
  s.add_controllers = [bugs](controller::Manager* mgr) {
    return AddPlantedController(*mgr, bugs);
  };
  s.steps = {
      CreateParent("p", "a"),
      Step::Patch(ConfigMaps(), "p", R"({"data":{"adopted":"b"}})"),
      Step::Create(
          Secrets(),
          absl::StrCat(R"({"apiVersion":"v1","kind":"Secret",)",
                       R"("metadata":{"name":"p-b","labels":{")", kRole,
                       R"(":"child",")", kParent, R"(":"p",")", kMember,
                       R"(":"b"}},)", R"("stringData":{"origin":"user"}})")),
      Step::Patch(ConfigMaps(), "p", R"({"data":{"members":"a,c"}})"),
  };
  s.invariants = {
      {"at most one child per member",
       [](const Context& ctx, client::RestClient& client) -> absl::Status {
         auto list = client.List(ctx, Secrets());
         if (!list.ok()) return list.status();
         std::map<std::string, int> count;
         for (const api::ObjectPtr& child : list->items) {
           if (Label(*child, kRole) != "child") continue;
           const std::string key = absl::StrCat(Label(*child, kParent), "/",
                                                Label(*child, kMember));
           if (++count[key] > 1) {
             return absl::FailedPreconditionError(absl::StrCat(
                 "member ", key, " has ", count[key], " children"));
           }
         }
         return absl::OkStatus();
       }},
  };
  // The parents and children (not the namespace's kube-root-ca.crt).
  s.state = {Collection(ConfigMaps(), std::string(kRole) + "=parent"),
             Collection(Secrets(), std::string(kRole) + "=child")};
  return s;
}

}  // namespace kcr::explorer::testing
