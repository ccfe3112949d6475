// Registry (registry.h): Delete and DeleteCollection. Preconditions, the
// propagation policy's finalizers (orphan, foregroundDeletion), and
// graceful deletion: an object with finalizers gets a deletionTimestamp
// and stays until they are gone; any other is removed.
#include <string>
#include <utility>

#include "api/errors/errors.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/internal/write_context.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/registry_internal.h"
#include "base/status_macros.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using Mutation = Storage::Mutation;
using api::FieldError;
using registry_internal::RunWrite;
using registry_internal::StrategyFor;

constexpr char kOrphanFinalizer[] = "orphan";
constexpr char kForegroundFinalizer[] = "foregroundDeletion";

}  // namespace

absl::StatusOr<DeleteResult> Registry::Delete(const ResourceInfo& r,
                                              std::string_view ns,
                                              std::string_view name,
                                              const DeleteOptions& options) {
  ScopedWriteContext context({.verb = "delete"});
  if (!options.propagation_policy.empty() &&
      options.propagation_policy != "Background" &&
      options.propagation_policy != "Foreground" &&
      options.propagation_policy != "Orphan") {
    return api::StatusError::Invalid(
               {"meta.k8s.io", "DeleteOptions"}, "",
               {FieldErr(FieldError::Type::kNotSupported, "propagationPolicy",
                         Quote(options.propagation_policy),
                         "supported values: \"Foreground\", \"Background\", "
                         "\"Orphan\", \"nil\"")})
        .ToStatus();
  }
  if (options.orphan_dependents.has_value() &&
      !options.propagation_policy.empty()) {
    return api::StatusError::Invalid(
               {"meta.k8s.io", "DeleteOptions"}, "",
               {FieldErr(
                   FieldError::Type::kInvalid, "propagationPolicy",
                   Quote(options.propagation_policy),
                   "orphanDependents and deletionPropagation cannot be both "
                   "set")})
        .ToStatus();
  }
  std::string obj_ns = r.namespaced() ? std::string(ns) : "";
  std::string now = Now();
  auto result = RunWrite(
      storage_, r.StorageKey(), obj_ns, name, options.dry_run,
      [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
        if (cur == nullptr) {
          return api::StatusError::NotFound(r.group_resource(), name)
              .ToStatus();
        }
        if (!options.precondition_uid.empty() &&
            options.precondition_uid != cur->uid()) {
          return api::StatusError::Conflict(
                     r.group_resource(), name,
                     Cat("Precondition failed: UID in precondition: ",
                         options.precondition_uid,
                         ", UID in object meta: ", cur->uid()))
              .ToStatus();
        }
        if (!options.precondition_resource_version.empty() &&
            options.precondition_resource_version != cur->resource_version()) {
          return api::StatusError::Conflict(
                     r.group_resource(), name,
                     Cat("Precondition failed: ResourceVersion in "
                         "precondition: ",
                         options.precondition_resource_version,
                         ", ResourceVersion in object meta: ",
                         cur->resource_version()))
              .ToStatus();
        }
        if (cur->being_deleted()) return Mutation::Keep();
        api::ObjectBuilder b = cur->ToBuilder();
        bool orphan = options.propagation_policy == "Orphan" ||
                      options.orphan_dependents.value_or(false);
        if (orphan) b.AddFinalizer(kOrphanFinalizer);
        if (options.propagation_policy == "Foreground") {
          b.AddFinalizer(kForegroundFinalizer);
        }
        const Strategy& strategy = StrategyFor(r);
        bool wait = !StringsAt(b, "/metadata/finalizers").empty() ||
                    strategy.WaitsForFinalize(b);
        if (!wait) return Mutation::Remove();
        (void)b.SetString("/metadata/deletionTimestamp", now);
        (void)b.SetInt("/metadata/deletionGracePeriodSeconds", 0);
        if (cur->generation() > 0) b.SetGeneration(cur->generation() + 1);
        strategy.PrepareForDelete(cur->json(), &b, now);
        return Mutation::Put(std::move(b));
      });
  if (!result.ok()) return result.status();
  if (!options.dry_run) AfterWrite(r, *result);
  DeleteResult out;
  out.object = AtVersion(result->object, r);
  out.removed = result->op == Mutation::Op::kRemove;
  return out;
}

absl::StatusOr<ListResult> Registry::DeleteCollection(
    const ResourceInfo& r, std::string_view ns, const ListOptions& list,
    const DeleteOptions& options) {
  ScopedWriteContext context({.verb = "deletecollection"});
  ListOptions all = list;
  all.limit = 0;
  all.continue_token.clear();
  KCR_ASSIGN_OR_RETURN(ListResult items, List(r, ns, all));
  ListResult out;
  out.resource_version = items.resource_version;
  for (const api::ObjectPtr& o : items.items) {
    auto d = Delete(r, o->namespace_(), o->name(), options);
    if (!d.ok()) {
      if (api::IsNotFound(d.status())) continue;
      return d.status();
    }
    out.items.push_back(d->object);
  }
  out.resource_version = Cat(storage_->CurrentResourceVersion());
  return out;
}

}  // namespace apiserver
}  // namespace kcr
