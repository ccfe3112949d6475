// The helpers of registry_internal.h.
#include "apiserver/registry/registry_internal.h"

#include <utility>

#include "api/errors/errors.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/registry/apps_strategy.h"
#include "apiserver/registry/core_strategy.h"
#include "apiserver/registry/crd_strategy.h"
#include "apiserver/registry/custom_resource_strategy.h"
#include "apiserver/registry/object_meta_validation.h"
#include "apiserver/registry/rbac_strategy.h"
#include "apiserver/registry/time_fields_strategy.h"
#include "apiserver/registry/workload_strategy.h"
#include "base/status_macros.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace registry_internal {

using Mutation = Storage::Mutation;
using api::FieldError;

const Strategy& StrategyFor(const ResourceInfo& r) {
  if (r.custom) return CustomResourceStrategy();
  if (IsCRDResource(r)) return CRDStrategy();
  if (r.group() == "apps" && r.resource() == "deployments") {
    return DeploymentStrategy();
  }
  if (r.group() == "apps" && r.resource() == "replicasets") {
    return ReplicaSetStrategy();
  }
  if (const Strategy* s = WorkloadStrategyFor(r); s != nullptr) return *s;
  if (r.group() == "coordination.k8s.io" && r.resource() == "leases") {
    return LeaseStrategy();
  }
  if (r.group() == kRbacGroup) {
    if (r.resource() == "roles") return RoleStrategy();
    if (r.resource() == "clusterroles") return ClusterRoleStrategy();
    if (r.resource() == "rolebindings") return RoleBindingStrategy();
    if (r.resource() == "clusterrolebindings") {
      return ClusterRoleBindingStrategy();
    }
  }
  // events.k8s.io/v1 Events are core Events by the time a strategy runs.
  if (r.stored_in_core_group && r.resource() == "events") {
    return EventStrategy();
  }
  if (!r.group().empty()) return DefaultStrategy();
  if (r.resource() == "events") return EventStrategy();
  if (r.resource() == "namespaces") return NamespaceStrategy();
  if (r.resource() == "pods") return PodStrategy();
  if (r.resource() == "services") return ServiceStrategy();
  if (r.resource() == "secrets") return SecretStrategy();
  if (r.resource() == "configmaps") return ConfigMapStrategy();
  return DefaultStrategy();
}

void ValidateMeta(const Strategy& strategy, const api::ObjectBuilder& b,
                  std::vector<FieldError>* errors) {
  strategy.ValidateName(StringAt(b, "/metadata/name"), errors);
  ValidateLabels(b, errors);
}

absl::Status CheckTypeMeta(const ResourceInfo& r, const api::ObjectBuilder& b,
                           std::string_view also_accepted) {
  std::string api_version = StringAt(b, "/apiVersion");
  std::string kind = StringAt(b, "/kind");
  if (!api_version.empty() && api_version != r.api_version() &&
      api_version != also_accepted) {
    return api::StatusError::BadRequest(
               Cat("the API version in the data (", api_version,
                   ") does not match the expected API version (",
                   r.api_version(), ")"))
        .ToStatus();
  }
  if (!kind.empty() && kind != r.kind()) {
    return api::StatusError::BadRequest(
               Cat("the kind in the data (", kind,
                   ") does not match the expected kind (", r.kind(), ")"))
        .ToStatus();
  }
  return absl::OkStatus();
}

absl::Status SetRequestNamespace(std::string_view ns, api::ObjectBuilder* b) {
  std::string body_ns = StringAt(*b, "/metadata/namespace");
  if (body_ns.empty()) {
    b->SetNamespace(ns);
  } else if (body_ns != ns) {
    return api::StatusError::BadRequest(
               "the namespace of the provided object does not match the "
               "namespace sent on the request")
        .ToStatus();
  }
  return absl::OkStatus();
}

absl::Status NameMismatch(std::string_view body_name,
                          std::string_view url_name) {
  return api::StatusError::BadRequest(
             Cat("the name of the object (", body_name,
                 ") does not match the name on the URL (", url_name, ")"))
      .ToStatus();
}

bool IsCoreServices(const ResourceInfo& r) {
  return r.group().empty() && r.resource() == "services";
}

absl::StatusOr<Storage::WriteResult> RunWrite(
    Storage* storage, const std::string& collection, std::string_view ns,
    std::string_view name, bool dry_run, const Storage::UpdateFunc& fn,
    const Storage::Precondition* precondition) {
  if (!dry_run) return storage->Write(collection, ns, name, fn, precondition);
  api::ObjectPtr preview;
  Mutation::Op op = Mutation::Op::kKeep;
  auto result = storage->Write(
      collection, ns, name,
      [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
        KCR_ASSIGN_OR_RETURN(Mutation m, fn(cur));
        op = m.op;
        if (m.op == Mutation::Op::kPut) {
          if (cur != nullptr) {
            m.object->SetResourceVersion(cur->resource_version());
          }
          KCR_ASSIGN_OR_RETURN(preview, m.object->Build());
        } else {
          preview = cur;
        }
        return Mutation::Keep();
      },
      precondition);
  if (!result.ok()) return result.status();
  result->object = preview;
  result->op = op;
  return result;
}

}  // namespace registry_internal
}  // namespace apiserver
}  // namespace kcr
