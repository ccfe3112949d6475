// Registry (registry.h): Create, and the preparation of a new object it
// shares with an apply that creates: type meta, namespace, uid,
// creationTimestamp, generation, the kind's defaults and validation, a
// generated name, Service allocations, 409 AlreadyExists.
#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "api/errors/errors.h"
#include "apiserver/internal/names.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/internal/write_context.h"
#include "apiserver/registry/builtin_conversion.h"
#include "apiserver/registry/core_strategy.h"
#include "apiserver/registry/managed_fields.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/registry_internal.h"
#include "base/status_macros.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using Mutation = Storage::Mutation;
using api::FieldError;
using registry_internal::CheckTypeMeta;
using registry_internal::DropBuiltinUnknownFields;
using registry_internal::IsCoreServices;
using registry_internal::RunWrite;
using registry_internal::SetRequestNamespace;
using registry_internal::StrategyFor;
using registry_internal::ValidateMeta;

}  // namespace

absl::Status Registry::PrepareCreate(const ResourceInfo& r, std::string_view ns,
                                     api::ObjectBuilder* b) const {
  KCR_RETURN_IF_ERROR(CheckTypeMeta(r, *b, r.api_version()));
  if (ConvertsBuiltin(r)) ConvertBuiltinToStorage(r, b);
  b->SetApiVersion(r.storage_api_version());
  b->SetKind(r.kind());
  if (b->Find("/metadata") == nullptr || !b->Find("/metadata")->IsObject()) {
    (void)b->SetJson("/metadata", "{}");
  }
  if (r.namespaced()) {
    KCR_RETURN_IF_ERROR(SetRequestNamespace(ns, b));
  } else {
    b->Remove("/metadata/namespace");
  }
  if (!StringAt(*b, "/metadata/resourceVersion").empty()) {
    return api::StatusError::InternalError(
               "resourceVersion should not be set on objects to be created")
        .ToStatus();
  }
  std::string name = StringAt(*b, "/metadata/name");
  if (name.empty() && StringAt(*b, "/metadata/generateName").empty()) {
    return api::StatusError::Invalid(
               r.group_kind(), "",
               {FieldErr(FieldError::Type::kRequired, "metadata.name", "",
                         "name or generateName is required")})
        .ToStatus();
  }
  b->SetUid(NewUid());
  (void)b->SetString("/metadata/creationTimestamp", Now());
  b->Remove("/metadata/deletionTimestamp");
  b->Remove("/metadata/deletionGracePeriodSeconds");
  b->Remove("/metadata/selfLink");
  if (r.generation != GenerationPolicy::kNone) {
    b->SetGeneration(1);
  } else {
    b->Remove("/metadata/generation");
  }
  const Strategy& strategy = StrategyFor(r);
  strategy.Default(b);
  DropEmptyMaps(r, b);
  strategy.PrepareForCreate(r, b, Now());
  // Validation (the name is checked once it is final, in Create).
  std::vector<FieldError> errors;
  strategy.Validate(r, b, &errors);
  if (!errors.empty()) {
    std::string n =
        name.empty() ? StringAt(*b, "/metadata/generateName") : name;
    return api::StatusError::Invalid(r.group_kind(), name, errors).ToStatus();
  }
  return absl::OkStatus();
}

absl::Status Registry::CheckNamespace(const ResourceInfo& r,
                                      std::string_view ns,
                                      std::string_view name) const {
  if (!r.namespaced()) return absl::OkStatus();
  return CheckNamespaceObject(r, ns, name,
                              storage_->Get("/namespaces", "", ns));
}

absl::Status Registry::CheckNamespaceObject(const ResourceInfo& r,
                                            std::string_view ns,
                                            std::string_view name,
                                            const api::ObjectPtr& n) {
  if (n == nullptr) {
    return api::StatusError::NotFound({"", "namespaces"}, ns).ToStatus();
  }
  if (n->being_deleted()) {
    api::StatusError e = api::StatusError::Forbidden(
        r.group_resource(), name,
        Cat("unable to create new content in namespace ", ns,
            " because it is being terminated"));
    // The cause kube-apiserver's NamespaceLifecycle admission adds, by which
    // clients tell this refusal from an authorization one.
    e.causes.push_back({"NamespaceTerminating",
                        Cat("namespace ", ns, " is being terminated"),
                        "metadata.namespace"});
    return e.ToStatus();
  }
  return absl::OkStatus();
}

absl::StatusOr<Mutation> Registry::CreateLocked(
    const ResourceInfo& r, const api::ObjectPtr& current,
    api::ObjectBuilder* object) const {
  if (current != nullptr) {
    api::StatusError e = api::StatusError::AlreadyExists(
        r.group_resource(), StringAt(*object, "/metadata/name"));
    if (current->being_deleted())
      e.message = "object is being deleted: " + e.message;
    return e.ToStatus();
  }
  return Mutation::Put(std::move(*object));
}

absl::StatusOr<WriteResult> Registry::Create(const ResourceInfo& r,
                                             std::string_view ns,
                                             api::ObjectBuilder object,
                                             const WriteOptions& options) {
  ScopedWriteContext context({.verb = "create"});
  if (!options.subresource.empty()) {
    return api::StatusError::MethodNotSupported(r.group_resource(), "create")
        .ToStatus();
  }
  std::vector<std::string> warnings;
  KCR_RETURN_IF_ERROR(CheckUnknownFields(r, object.json(),
                                         options.field_validation, &warnings));
  DropBuiltinUnknownFields(r, &object);
  KCR_RETURN_IF_ERROR(PrepareCreate(r, ns, &object));
  KCR_RETURN_IF_ERROR(RecordWriteManagedFields(
      r, nullptr, &object.json(), object.allocator(), options.field_manager,
      options.user_agent, "", options_.clock->Now()));
  std::string name = StringAt(object, "/metadata/name");
  std::string prefix = StringAt(object, "/metadata/generateName");
  bool generated = name.empty();
  // Cluster IP and node ports, given back unless the Service is stored.
  std::optional<ServiceAllocator::Allocation> allocation;
  if (IsCoreServices(r)) {
    // A missing namespace is told before an allocation's errors.
    KCR_RETURN_IF_ERROR(CheckNamespace(r, ns, name));
    KCR_ASSIGN_OR_RETURN(allocation, service_allocator_->Allocate(
                                         r.group_kind(), nullptr, &object));
  }
  auto release = absl::MakeCleanup([&] {
    if (allocation.has_value()) service_allocator_->Release(*allocation);
  });
  for (int attempt = 0;; ++attempt) {
    if (generated) {
      name = GenerateName(prefix);
      object.SetName(name);
      StrategyFor(r).NameGenerated(name, &object);
    }
    // The name is final: validated before the store is locked (as
    // kube-apiserver validates before it writes to etcd).
    // Told after the namespace check (as kube-apiserver's admission runs
    // before the store validates).
    std::vector<FieldError> errors;
    ValidateMeta(StrategyFor(r), object, &errors);
    std::string obj_ns = r.namespaced() ? std::string(ns) : "";
    // The namespace must exist and not be terminating when the object is
    // stored: checked in the write's own hold, not by a lookup before it.
    Storage::Precondition namespace_lives;
    if (r.namespaced()) {
      namespace_lives.collection = "/namespaces";
      namespace_lives.name = ns;
      namespace_lives.check = [&](const api::ObjectPtr& n) {
        return CheckNamespaceObject(r, ns, name, n);
      };
    }
    // Storage runs the function once; the object is moved into the write
    // only when there is nothing in its place, so that a generated name
    // taken already can be tried again with the same object.
    auto result = RunWrite(
        storage_, r.StorageKey(), obj_ns, name, options.dry_run,
        [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
          if (!errors.empty()) {
            return api::StatusError::Invalid(r.group_kind(), name, errors)
                .ToStatus();
          }
          return CreateLocked(r, cur, &object);
        },
        r.namespaced() ? &namespace_lives : nullptr);
    if (!result.ok()) {
      if (generated && api::IsAlreadyExists(result.status()) && attempt < 8) {
        continue;
      }
      return result.status();
    }
    if (!options.dry_run) {
      std::move(release).Cancel();
      AfterWrite(r, *result);
    }
    WriteResult out;
    out.object = AtVersion(result->object, r);
    out.created = true;
    out.warnings = warnings;
    return out;
  }
}

}  // namespace apiserver
}  // namespace kcr
