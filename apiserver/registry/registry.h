// Registry: kube-apiserver's REST semantics over Storage — what
// k8s.io/apiserver's generic registry Store plus each kind's strategy do.
// The HTTP handler decodes a request and calls one method here; in-process
// controllers (garbage collector, namespace deletion, simulated node) call
// the same methods and so see exactly what a client would.
//
// What each write does (details in docs/local-apiserver.md):
//   Create   fills uid (v4), creationTimestamp (RFC 3339, seconds, UTC),
//            generation (per kind), a generated name (generateName + 5
//            characters), namespace from the URL; checks the namespace
//            exists (404) and is not Terminating (403); validates custom
//            resources against their CRD schema (prune, default, 422 with
//            every cause); 409 AlreadyExists.
//   Update   409 Conflict on a stale metadata.resourceVersion; without one,
//            unconditional for built-ins and 422 for CRs and CRDs; a write
//            to the main resource keeps status, a write to /status keeps
//            everything else; generation bumps per kind; an update that
//            changes nothing writes nothing; once deleting, finalizers can
//            only be removed, and the object goes when they are gone.
//   Patch    json-patch and merge-patch here; strategic-merge and apply
//            through PatchHandlers (415 until wired); then as Update.
//   Delete   with finalizers (or a propagationPolicy that adds `orphan` /
//            `foregroundDeletion`): sets deletionTimestamp and keeps the
//            object; otherwise removes it.
// CRDs become served (ResourceRegistry) when created, and their objects are
// deleted when the CRD is.
//
// Errors are absl::Status carrying an api::StatusError (api/errors/errors.h).
// Thread-safe: every method may be called from any thread.
#ifndef KCR_APISERVER_REGISTRY_REGISTRY_H_
#define KCR_APISERVER_REGISTRY_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/patch/patch_type.h"
#include "api/selector/field_selector.h"
#include "api/selector/label_selector.h"
#include "api/selector/shard_selector.h"
#include "apiserver/registry/resources.h"
#include "apiserver/registry/service_allocator.h"
#include "apiserver/storage/storage.h"
#include "base/clock.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

using api::PatchType;

// The patch algorithms that live outside this package. Each takes the live
// object's JSON and the patch, and writes the patched object into *result.
// An error with an api::StatusError payload is returned as is; any other error
// becomes 422 Invalid (apply conflicts should carry a 409 api::StatusError).
struct PatchHandlers {
  // Strategic merge patch for built-in kinds (`resource` tells the kind).
  std::function<absl::Status(
      const ResourceInfo& resource, const rapidjson::Value& live,
      const rapidjson::Value& patch, rapidjson::Document* result)>
      strategic_merge;
  // Server-side apply. `live` is null when the object does not exist (apply
  // creates it).
  struct ApplyRequest {
    std::string field_manager;
    bool force = false;
    std::string subresource;
  };
  std::function<absl::Status(
      const ResourceInfo& resource, const rapidjson::Value* live,
      const rapidjson::Value& applied, const ApplyRequest& request,
      rapidjson::Document* result)>
      apply;
};

struct WriteOptions {
  bool dry_run = false;
  // ?fieldValidation=: "Strict" (unknown fields of a custom resource are
  // 400 BadRequest), "Warn" (the default: a Warning each), "Ignore".
  std::string field_validation;
  std::string field_manager;
  // Names the Update manager in managedFields when field_manager is empty.
  std::string user_agent;
  // "", "status", "finalize" (namespaces).
  std::string subresource;
};

struct PatchOptions {
  bool dry_run = false;
  // As WriteOptions::field_validation; checked on object-shaped patches.
  std::string field_validation;
  std::string field_manager;
  // Names the Update manager in managedFields when field_manager is empty.
  std::string user_agent;
  std::string subresource;
  // ?force= (apply only; 422 otherwise).
  std::optional<bool> force;
};

struct DeleteOptions {
  bool dry_run = false;
  // "Background", "Foreground", "Orphan"; empty: the resource's default
  // (Background).
  std::string propagation_policy;
  // Legacy orphanDependents.
  std::optional<bool> orphan_dependents;
  std::optional<int64_t> grace_period_seconds;
  // preconditions.uid / preconditions.resourceVersion (409 on mismatch).
  std::string precondition_uid;
  std::string precondition_resource_version;
};

struct ListOptions {
  api::LabelSelector label_selector;
  api::FieldSelector field_selector;
  // ?shardSelector= (KEP-5866; kube's ShardedListAndWatch gate, always on
  // here): only objects whose hashed uid or namespace is in its ranges.
  api::ShardSelector shard_selector;
  // Raw query values; validated by List.
  std::string resource_version;
  std::string resource_version_match;
  int64_t limit = 0;
  std::string continue_token;
  // True when the request carried sendInitialEvents (forbidden for list).
  bool send_initial_events_set = false;
};

struct ListResult {
  std::vector<api::ObjectPtr> items;
  std::string resource_version;
  std::string continue_token;
  std::optional<int64_t> remaining_item_count;
  // metadata.shardInfo.selector: the applied shard selector in canonical
  // form, set when the list was sharded (a client that sees it may trust
  // that the server filtered).
  std::string shard_selector;
};

struct WriteResult {
  api::ObjectPtr object;
  // Create, or an update/apply that created the object (201).
  bool created = false;
  // Warning header texts (`unknown field "spec.x"`).
  std::vector<std::string> warnings;
};

struct DeleteResult {
  // The removed object (last state), or the object now carrying a
  // deletionTimestamp and waiting for finalizers.
  api::ObjectPtr object;
  // True when the object is gone.
  bool removed = false;
};

// Who makes a write, for metadata.managedFields (registry_internal.h).
struct WriteManager;

struct RegistryOptions {
  const Clock* clock = Clock::Real();
  PatchHandlers patch_handlers;
};

class Registry {
 public:
  // `storage` and `resources` must outlive the Registry.
  Registry(Storage* storage, ResourceRegistry* resources,
           RegistryOptions options = {});
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Storage* storage() const { return storage_; }
  ResourceRegistry* resources() const { return resources_; }

  // Creates the namespaces every cluster has (default, kube-system,
  // kube-public, kube-node-lease), the system priority classes, the
  // mandatory flow-control configuration, the default ServiceCIDR and the
  // local APIServices of the built-in group-versions.
  absl::Status Bootstrap();

  absl::StatusOr<api::ObjectPtr> Get(const ResourceInfo& resource,
                                     std::string_view ns,
                                     std::string_view name) const;
  absl::StatusOr<ListResult> List(const ResourceInfo& resource,
                                  std::string_view ns,
                                  const ListOptions& options) const;
  absl::StatusOr<WriteResult> Create(const ResourceInfo& resource,
                                     std::string_view ns,
                                     api::ObjectBuilder object,
                                     const WriteOptions& options = {});
  absl::StatusOr<WriteResult> Update(const ResourceInfo& resource,
                                     std::string_view ns, std::string_view name,
                                     api::ObjectBuilder object,
                                     const WriteOptions& options = {});
  absl::StatusOr<WriteResult> Patch(const ResourceInfo& resource,
                                    std::string_view ns, std::string_view name,
                                    PatchType type, std::string_view patch,
                                    const PatchOptions& options = {});
  absl::StatusOr<DeleteResult> Delete(const ResourceInfo& resource,
                                      std::string_view ns,
                                      std::string_view name,
                                      const DeleteOptions& options = {});
  // Deletes every object a list with `list` would return; returns them.
  absl::StatusOr<ListResult> DeleteCollection(const ResourceInfo& resource,
                                              std::string_view ns,
                                              const ListOptions& list,
                                              const DeleteOptions& options);

  // The autoscaling/v1 Scale of an object with a scale subresource.
  absl::StatusOr<api::ObjectPtr> GetScale(const ResourceInfo& resource,
                                          std::string_view ns,
                                          std::string_view name) const;
  // PUT .../scale: sets the replicas from a Scale object.
  absl::StatusOr<WriteResult> UpdateScale(const ResourceInfo& resource,
                                          std::string_view ns,
                                          std::string_view name,
                                          const rapidjson::Value& scale,
                                          const WriteOptions& options);

  // Whether an object passes a list/watch's selectors.
  static bool Matches(const api::Object& object, const ListOptions& options);
  // Checks the selectors of a list or watch against the resource (400
  // `field label not supported: <f>` for an unknown field label) and
  // points its field labels at what they read (FieldLabel).
  static absl::Status ValidateSelectors(const ResourceInfo& resource,
                                        ListOptions* options);

  // Decoding and fieldValidation: the fields of `object` that the kind's
  // Go type (built-in kinds, builtin_schema.h) or the version's schema
  // (custom resources; pruning would drop them) does not know, as dotted
  // paths; Strict makes them a 400 BadRequest ("<Kind> in version \"v1\"
  // cannot be handled as a <Kind>: strict decoding error: unknown field
  // \"spec.x\""), Warn adds them to *warnings. A built-in object that
  // does not decode (a number for a string, bad base64) is a 400 whatever
  // the mode ("... cannot be handled as a ConfigMap: json: cannot
  // unmarshal number into Go struct field ConfigMap.data of type string").
  static absl::Status CheckUnknownFields(const ResourceInfo& resource,
                                         const rapidjson::Value& object,
                                         const std::string& field_validation,
                                         std::vector<std::string>* warnings);

  // CheckUnknownFields; a `patch` is only checked for unknown fields
  // (strategic merge directives allowed), as it decodes once applied, and
  // its Strict error is kube's patcher's: "strict decoding error: unknown
  // field \"spec.x\"", without the "cannot be handled" prefix.
  static absl::Status CheckFields(const ResourceInfo& resource,
                                  const rapidjson::Value& object,
                                  const std::string& field_validation,
                                  bool patch,
                                  std::vector<std::string>* warnings);

  // The object as served at `resource`'s version (custom resources are
  // stored at their storage version; only apiVersion differs).
  static api::ObjectPtr AtVersion(const api::ObjectPtr& object,
                                  const ResourceInfo& resource);

 private:
  // Everything Update does once the live object is known; runs inside a
  // Storage write.
  absl::StatusOr<Storage::Mutation> UpdateLocked(
      const ResourceInfo& resource, const api::ObjectPtr& current,
      api::ObjectBuilder object, const std::string& subresource, bool is_patch,
      const WriteManager* manager = nullptr) const;
  // Puts a new object (moved from *object) unless one is in its place
  // (409, *object left as it was); runs inside a Storage write.
  absl::StatusOr<Storage::Mutation> CreateLocked(
      const ResourceInfo& resource, const api::ObjectPtr& current,
      api::ObjectBuilder* object) const;
  // Fields of a new object that do not depend on the live state.
  // The APIService objects of the served built-in group-versions.
  absl::Status BootstrapAPIServices();
  absl::Status BootstrapClusterObjects();
  absl::Status PrepareCreate(const ResourceInfo& resource, std::string_view ns,
                             api::ObjectBuilder* object) const;
  absl::Status CheckNamespace(const ResourceInfo& resource, std::string_view ns,
                              std::string_view name) const;
  // The same given the namespace object (null when absent), as a create's
  // write checks it in its own storage hold.
  static absl::Status CheckNamespaceObject(const ResourceInfo& resource,
                                           std::string_view ns,
                                           std::string_view name,
                                           const api::ObjectPtr& namespace_);
  // After a write: keep the served resources in step with CRDs, and delete
  // the objects of a CRD that is being deleted.
  void AfterWrite(const ResourceInfo& resource,
                  const Storage::WriteResult& result);
  void CleanUpCRD(const api::ObjectPtr& crd);
  std::string Now() const;

  Storage* const storage_;
  ResourceRegistry* const resources_;
  const RegistryOptions options_;
  // Cluster IPs and node ports of Services.
  const std::unique_ptr<ServiceAllocator> service_allocator_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_REGISTRY_H_
