// The resources the local API server serves: the built-in kinds and those
// that CustomResourceDefinitions add at run time, with everything the REST
// layer needs to treat each one as kube-apiserver does (verbs, scope,
// subresources, generation rules, delete response, schema for custom
// resources) and what discovery reports about it.
//
// ResourceRegistry is thread-safe. Lookups hand out shared_ptr<const
// ResourceInfo>: an entry never changes once published, so a request keeps a
// consistent view even while a CRD update replaces it.
#ifndef KCR_APISERVER_REGISTRY_RESOURCES_H_
#define KCR_APISERVER_REGISTRY_RESOURCES_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/errors/errors.h"
#include "api/meta/group_version.h"
#include "api/meta/rest_mapper.h"
#include "api/schema/structural_schema.h"
#include "base/mutex.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// When metadata.generation is set and bumped.
enum class GenerationPolicy {
  kNone,                // no generation (configmaps, pods, ...)
  kSpec,                // 1 on create, +1 when spec changes (CRDs)
  kSpecAndAnnotations,  // +1 when spec or metadata.annotations change
                        // (deployments)
  kAllButMetadata,      // +1 when anything outside metadata changes (CRs)
};

// How a resource's scale subresource maps onto the object.
struct ScalePaths {
  std::string spec_replicas;    // JSON pointer, e.g. "/spec/replicas"
  std::string status_replicas;  // e.g. "/status/replicas"
  std::string label_selector;   // e.g. "/status/selector"; may be empty
};

// A field selector label a resource supports beyond metadata.name and
// metadata.namespace: its own path in the object, or `path`, with the value
// kube gives it when absent (a count's "0", a bool's "false").
struct FieldLabel {
  FieldLabel(const char* label) : label(label) {}  // NOLINT: a plain path
  FieldLabel(std::string label, std::string path,
             std::optional<std::string> if_absent)
      : label(std::move(label)),
        path(std::move(path)),
        if_absent(std::move(if_absent)) {}

  std::string label;
  std::string path;
  std::optional<std::string> if_absent;
};

struct ResourceInfo {
  // Group, version, resource, kind, singular, short names, list kind, scope
  // and subresources ("status", "scale", "finalize").
  api::RESTMapping mapping;
  std::vector<std::string> verbs;
  std::vector<std::string> categories;
  GenerationPolicy generation = GenerationPolicy::kNone;
  // DELETE answers with the deleted object (pods, services,
  // serviceaccounts) instead of a success Status.
  bool return_deleted_object = false;
  // PUT without metadata.resourceVersion is allowed (false for CRs and
  // CRDs, which answer 422).
  bool allow_unconditional_update = true;
  // A custom resource (served because of a CRD): no strategic merge patch,
  // validated and pruned by `schema`.
  bool custom = false;
  // The CRD's name for custom resources ("widgets.example.com").
  std::string crd_name;
  // The version objects are stored at; every served version of a CR shares
  // one collection (conversion strategy None: only apiVersion changes).
  std::string storage_version;
  std::shared_ptr<const api::StructuralSchema> schema;
  // spec.versions[].additionalPrinterColumns of the CRD version, as compact
  // JSON (an array), or empty.
  std::string printer_columns_json;
  ScalePaths scale;
  // Field selector labels beyond metadata.name and metadata.namespace.
  std::vector<FieldLabel> field_labels;

  const api::GroupVersionResource& gvr() const { return mapping.resource; }
  const api::GroupVersionKind& gvk() const { return mapping.kind; }
  const std::string& group() const { return mapping.resource.group; }
  const std::string& version() const { return mapping.resource.version; }
  const std::string& resource() const { return mapping.resource.resource; }
  const std::string& kind() const { return mapping.kind.kind; }
  bool namespaced() const { return mapping.namespaced(); }
  bool has_status() const { return mapping.HasSubresource("status"); }
  bool has_scale() const { return mapping.HasSubresource("scale"); }
  bool HasVerb(std::string_view verb) const;
  api::GroupResource group_resource() const { return {group(), resource()}; }
  api::GroupKind group_kind() const { return {group(), kind()}; }
  // The apiVersion objects of this resource carry ("apps/v1", "v1").
  std::string api_version() const { return mapping.kind.ApiVersion(); }
  // Objects are stored as the core group's (events.k8s.io/v1 Events are
  // core v1 Events, converted on the way in and out).
  bool stored_in_core_group = false;
  // The collection all versions share: "<group>/<resource>".
  std::string StorageKey() const {
    return (stored_in_core_group ? "" : group()) + "/" + resource();
  }
  // The apiVersion of stored objects ("v1", "autoscaling/v2").
  std::string storage_api_version() const {
    return stored_in_core_group || group().empty()
               ? storage_version
               : group() + "/" + storage_version;
  }
  // True when field selectors may use `label`.
  bool SupportsFieldLabel(std::string_view label) const;
};

using ResourceInfoPtr = std::shared_ptr<const ResourceInfo>;

class ResourceRegistry {
 public:
  // A registry holding the built-in resources: v1 namespaces, pods,
  // configmaps, secrets, services, serviceaccounts, events, nodes;
  // apps/v1 deployments and replicasets; authorization.k8s.io/v1
  // selfsubjectaccessreviews and selfsubjectrulesreviews;
  // rbac.authorization.k8s.io/v1
  // roles, rolebindings, clusterroles and clusterrolebindings;
  // coordination.k8s.io/v1 leases;
  // apiextensions.k8s.io/v1 customresourcedefinitions; and the workload,
  // policy, networking, storage, scheduling, admission, apiregistration,
  // certificates and events.k8s.io kinds of
  // AddWorkloadAndClusterKindsLocked (resources.cc).
  ResourceRegistry();
  ResourceRegistry(const ResourceRegistry&) = delete;
  ResourceRegistry& operator=(const ResourceRegistry&) = delete;

  // The resource served at group/version/resource, or null.
  ResourceInfoPtr Lookup(std::string_view group, std::string_view version,
                         std::string_view resource) const;
  ResourceInfoPtr Lookup(const api::GroupVersionResource& gvr) const {
    return Lookup(gvr.group, gvr.version, gvr.resource);
  }
  // The resource serving a kind, or null.
  ResourceInfoPtr LookupKind(const api::GroupVersionKind& gvk) const;
  // Every served version of the collection `storage_key`.
  std::vector<ResourceInfoPtr> VersionsOf(std::string_view storage_key) const;

  // Every resource, ordered: core first, then the built-in groups, then
  // custom groups by name; within a group versions by preference.
  std::vector<ResourceInfoPtr> All() const;
  // Groups in discovery order (without the core group), each with its
  // versions by preference.
  std::vector<std::pair<std::string, std::vector<std::string>>> Groups() const;

  // Builds the resources a CRD (apiextensions.k8s.io/v1 JSON) serves,
  // without registering them. Invalid field errors name the CRD field
  // (spec.group, spec.names.plural, spec.versions[0].schema...).
  static absl::StatusOr<std::vector<ResourceInfo>> FromCRD(
      const rapidjson::Value& crd, std::vector<api::FieldError>* errors);

  // Registers (or replaces) the resources of a CRD. Errors as FromCRD.
  absl::Status AddCRD(const rapidjson::Value& crd);
  // Removes every resource registered for the CRD `crd_name`.
  void RemoveCRD(std::string_view crd_name);

 private:
  void AddLocked(ResourceInfo info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddWorkloadAndClusterKindsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  std::map<api::GroupVersionResource, ResourceInfoPtr> by_gvr_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_RESOURCES_H_
