#include "controllers/simpledeployment/simpledeployment_handlers.h"

#include <string>
#include <utility>
#include <vector>

#include "api/errors/errors.h"
#include "api/object.h"
#include "api/types/owner_reference.h"
#include "api/types/pod.h"
#include "base/status_macros.h"
#include "base/str_cat.h"
#include "controllers/simpledeployment/simpledeployment_types.h"
#include "rapidjson/document.h"
#include "runtime/client/typed_client.h"

namespace kcr::simpledeployment {
namespace {

using handlers::HandlerContext;
using handlers::Outcome;

// {"children": [uids...]}, the tutorial's result.
rapidjson::Document ChildrenJson(const std::vector<std::string>& uids) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  rapidjson::Value list(rapidjson::kArrayType);
  for (const std::string& uid : uids) {
    list.PushBack(
        rapidjson::Value(uid.data(),
                         static_cast<rapidjson::SizeType>(uid.size()), a),
        a);
  }
  d.AddMember("children", list, a);
  return d;
}

client::Resource PodsOf(const HandlerContext& ctx) {
  return client::ResourceFor<api::PodView>(std::string(ctx.namespace_()));
}

// Makes the pod that sleeps `sleepytime` seconds; returns it as created.
absl::StatusOr<api::ObjectPtr> CreatePod(HandlerContext& ctx,
                                         int64_t sleepytime,
                                         const SimpleDeploymentOptions& o) {
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr pod,
                       BuildPod(ctx.body(), sleepytime, o.pod));
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr created,
                       ctx.client().Create(ctx.ctx(), PodsOf(ctx), *pod));
  ctx.logger().Info(
      Cat("created pod ", created->name(), " sleepytime=", sleepytime));
  return created;
}

// The pods this SimpleDeployment controls and that are not being deleted
// (found by its uid label, checked by their owner reference).
absl::StatusOr<std::vector<api::ObjectPtr>> OwnPods(HandlerContext& ctx) {
  client::ListOptions list;
  list.label_selector = Cat(kOwnerUidLabel, "=", ctx.uid());
  KCR_ASSIGN_OR_RETURN(client::ObjectList pods,
                       ctx.client().List(ctx.ctx(), PodsOf(ctx), list));
  std::vector<api::ObjectPtr> out;
  for (api::ObjectPtr& pod : pods.items) {
    if (api::IsControlledBy(*pod, ctx.body()) && !pod->being_deleted()) {
      out.push_back(std::move(pod));
    }
  }
  return out;
}

// Deletes every pod of OwnPods.
absl::Status DeletePods(HandlerContext& ctx) {
  KCR_ASSIGN_OR_RETURN(std::vector<api::ObjectPtr> pods, OwnPods(ctx));
  for (const api::ObjectPtr& pod : pods) {
    client::DeleteOptions del;
    // Not a pod of the same name made since the list.
    del.preconditions.uid = std::string(pod->uid());
    const absl::Status s =
        ctx.client().Delete(ctx.ctx(), PodsOf(ctx), pod->name(), del);
    if (!s.ok() && !api::IsNotFound(s) && !api::IsConflict(s)) return s;
    ctx.logger().Info(Cat("deleted pod ", pod->name()));
  }
  return absl::OkStatus();
}

Outcome CreateFn(HandlerContext& ctx, const SimpleDeploymentOptions& o) {
  absl::StatusOr<SimpleDeployment> sd =
      SimpleDeployment::FromObject(ctx.body());
  if (!sd.ok()) return Outcome::Permanent(std::string(sd.status().message()));
  absl::StatusOr<int64_t> sleepytime = sd->SleepytimeSeconds();
  if (!sleepytime.ok()) {
    return Outcome::Permanent(std::string(sleepytime.status().message()));
  }
  // A try whose pod was made but whose success was not recorded (the
  // operator stopped, the status write failed) is not repeated: that pod
  // is the child.
  KCR_ASSIGN_OR_RETURN(std::vector<api::ObjectPtr> made, OwnPods(ctx));
  if (!made.empty()) {
    std::vector<std::string> uids;
    for (const api::ObjectPtr& pod : made) uids.emplace_back(pod->uid());
    ctx.logger().Info(Cat("pod ", made.front()->name(), " exists already"));
    return Outcome(ChildrenJson(uids));
  }
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr pod, CreatePod(ctx, *sleepytime, o));
  return Outcome(ChildrenJson({std::string(pod->uid())}));
}

Outcome SleepytimeFn(HandlerContext& ctx, const SimpleDeploymentOptions& o) {
  // A field handler runs on create too; create_fn makes that pod.
  if (ctx.reason() == handlers::Reason::kCreate) return Outcome::Success();
  absl::StatusOr<int64_t> before = ParseSleepytime(ctx.old_value());
  absl::StatusOr<int64_t> after = ParseSleepytime(ctx.new_value());
  if (!after.ok())
    return Outcome::Permanent(std::string(after.status().message()));
  if (before.ok() && *before == *after) {
    // "120" became 120: the same pod would run.
    ctx.logger().Info(Cat("sleepytime still ", *after, " seconds"));
    return Outcome::Success();
  }
  ctx.logger().Info(
      Cat("sleepytime ",
          before.ok() ? std::to_string(*before) : std::string("invalid"),
          " -> ", *after, ": replacing the pod"));
  // Delete first, then create: a retry after a failure half-way deletes
  // what an earlier try made and makes one pod again.
  KCR_RETURN_IF_ERROR(DeletePods(ctx));
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr pod, CreatePod(ctx, *after, o));
  rapidjson::Document children = ChildrenJson({std::string(pod->uid())});
  ctx.patch().SetStatus("create_fn.children", children["children"]);
  return Outcome(std::move(children));
}

Outcome DeleteFn(HandlerContext& ctx) {
  ctx.logger().Info(
      "deleted; its pod goes with it (the garbage collector follows the "
      "owner reference)");
  return Outcome::Success();
}

}  // namespace

void RegisterSimpleDeploymentHandlers(handlers::Registry& registry,
                                      SimpleDeploymentOptions options) {
  handlers::HandlerOptions h;
  h.backoff = options.backoff;
  handlers::ResourceHandlers& sd = registry.For<SimpleDeployment>();
  sd.OnCreate(
      kCreateHandlerId,
      [options](HandlerContext& ctx) { return CreateFn(ctx, options); }, h);
  sd.OnField(
      kSleepytimeHandlerId, kSleepytimeField,
      [options](HandlerContext& ctx) { return SleepytimeFn(ctx, options); }, h);
  sd.OnDelete(kDeleteHandlerId, DeleteFn, h);
}

}  // namespace kcr::simpledeployment
