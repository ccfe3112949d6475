// RESTMapper: which resource (URL collection) serves which kind, whether it
// is namespaced, its singular name, short names and subresources — what
// client-go's RESTMapper and kubectl's resource resolution provide.
//
// A mapper starts with the built-in kinds kcr uses (NewDefault) and grows at
// run time from CustomResourceDefinitions (AddFromCRD) and API discovery
// documents (AddFromDiscovery). All methods are thread-safe; lookups return
// copies, so a mapping stays valid while another thread changes the mapper.
#ifndef KCR_API_META_REST_MAPPER_H_
#define KCR_API_META_REST_MAPPER_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/meta/group_version.h"
#include "base/mutex.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {

enum class ResourceScope { kNamespaced, kCluster };

// Everything known about one resource in one group and version.
struct RESTMapping {
  GroupVersionResource resource;         // e.g. apps/v1 deployments
  GroupVersionKind kind;                 // e.g. apps/v1 Deployment
  std::string singular;                  // e.g. deployment (lower case)
  std::vector<std::string> short_names;  // e.g. {"deploy"}
  std::string list_kind;                 // e.g. DeploymentList
  ResourceScope scope = ResourceScope::kNamespaced;
  // Subresource names without the parent: {"status", "scale"}.
  std::vector<std::string> subresources;

  bool namespaced() const { return scope == ResourceScope::kNamespaced; }
  bool HasSubresource(std::string_view name) const;
};

class RESTMapper {
 public:
  // An empty mapper.
  RESTMapper() = default;
  RESTMapper(const RESTMapper&) = delete;
  RESTMapper& operator=(const RESTMapper&) = delete;

  // A mapper preloaded with v1 pods, configmaps, secrets, namespaces,
  // services, serviceaccounts, events; apps/v1 deployments;
  // coordination.k8s.io/v1 leases; apiextensions.k8s.io/v1
  // customresourcedefinitions (with the short names and subresources
  // kube-apiserver reports for them).
  static std::unique_ptr<RESTMapper> NewDefault();

  // Adds or replaces a mapping. A mapping with the same GroupVersionResource
  // or the same GroupVersionKind as an existing one replaces it (a CRD
  // that is updated re-adds its resources). InvalidArgument if the
  // resource, kind or version is empty.
  absl::Status Add(RESTMapping mapping);

  // Adds one mapping per served version of an apiextensions.k8s.io/v1
  // CustomResourceDefinition: spec.group, spec.names {plural, singular,
  // kind, shortNames, listKind}, spec.scope (Namespaced | Cluster) and
  // spec.versions[] {name, served, subresources {status, scale}}.
  // singular defaults to lower-case kind and listKind to kind + "List", as
  // the API server defaults them. InvalidArgument naming the field when a
  // required field is missing or of the wrong type; nothing is added then.
  absl::Status AddFromCRD(const rapidjson::Value& crd);

  // Adds the resources of a discovery document (an APIResourceList, as
  // served at /api/v1 or /apis/<group>/<version>): groupVersion and
  // resources[] {name, singularName, namespaced, kind, shortNames}; entries
  // named "<resource>/<sub>" become subresources of <resource>.
  // InvalidArgument naming the field on malformed input; nothing is added
  // then.
  absl::Status AddFromDiscovery(const rapidjson::Value& api_resource_list);

  // The kind served by `resource`. NotFound if unknown.
  absl::StatusOr<GroupVersionKind> KindFor(
      const GroupVersionResource& resource) const;
  // The resource serving `kind`. NotFound if unknown.
  absl::StatusOr<GroupVersionResource> ResourceFor(
      const GroupVersionKind& kind) const;

  // The full mapping by kind or by resource. NotFound if unknown.
  absl::StatusOr<RESTMapping> MappingFor(const GroupVersionKind& kind) const;
  absl::StatusOr<RESTMapping> MappingForResource(
      const GroupVersionResource& resource) const;

  // Resolves what a user types after `kubectl get`: a plural, a singular, a
  // short name or a kind, compared case-insensitively, optionally qualified
  // as "<name>.<group>" or "<name>.<version>.<group>" (e.g.
  // "deployments.apps", "ngx.example.org", "nginxes.v1.example.org").
  // Plural names win over singular names, which win over short names, which
  // win over kinds. When several groups match at the best tier, the core
  // group wins; otherwise the answer is InvalidArgument (ambiguous) listing
  // the candidates. When one resource is served at several versions, the
  // preferred version (KubeVersionLess) is returned. NotFound if nothing
  // matches.
  absl::StatusOr<RESTMapping> Resolve(std::string_view user_input) const;

  // Every mapping, ordered by GroupVersionResource.
  std::vector<RESTMapping> Mappings() const;

 private:
  void AddLocked(RESTMapping mapping) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  std::map<GroupVersionResource, RESTMapping> by_resource_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<GroupVersionKind, GroupVersionResource> by_kind_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_META_REST_MAPPER_H_
