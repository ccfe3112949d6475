// Patch metadata of the built-in Kubernetes kinds: which lists merge by a
// key, which lists of scalars merge as sets, and which fields are atomic.
// This is the part of the Go struct tags (`patchStrategy`,
// `patchMergeKey`, `+listType`, `+structType`) that strategic merge patch
// and server-side apply need, written as a table of field paths instead of
// Go types.
//
// A path names a field from the object's root by member names joined with
// '.'; list elements add no component, so the env list of every container
// of a Deployment is "spec.template.spec.containers.env". A field that is
// not in a kind's table merges member by member when it is an object and
// is replaced whole when it is a list, as for a Go field without patch
// tags. Custom resources have no table: kube-apiserver refuses strategic
// merge patches for them (415), and server-side apply treats their lists
// as atomic.
//
// Tables are built once and immutable; lookups are thread-safe.
#ifndef KCR_API_PATCH_PATCH_SCHEMA_H_
#define KCR_API_PATCH_PATCH_SCHEMA_H_

#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace kcr {
namespace api {

// How one field merges.
enum class FieldStrategy {
  // A list of objects merged element by element, matched by `merge_key`
  // (patchStrategy "merge" with a patchMergeKey; `+listType=map`).
  kMergeByKey,
  // A list of scalars merged as a set: union without duplicates
  // (patchStrategy "merge" without a key; `+listType=set`).
  kMergePrimitives,
  // Replaced whole. The default for lists; for an object it matters only to
  // server-side apply, which owns it as one field (`+structType=atomic`,
  // e.g. a Deployment's spec.selector); strategic merge patch still merges
  // it member by member, as kube-apiserver does.
  kAtomic,
};

struct FieldPatchMeta {
  FieldStrategy strategy = FieldStrategy::kAtomic;
  // The member that identifies an element; only for kMergeByKey.
  std::string merge_key;
};

// The patch metadata of one kind.
class PatchSchema {
 public:
  PatchSchema() = default;

  // Declares the field at `path`; a later declaration of the same path
  // replaces the earlier one.
  void Add(std::string_view path, FieldPatchMeta meta);

  // Declares every field of `sub` under `prefix` ("spec.template.spec").
  void Mount(std::string_view prefix, const PatchSchema& sub);

  // The metadata of the field at `path`, or nullptr when it has none.
  const FieldPatchMeta* Find(std::string_view path) const;

 private:
  absl::flat_hash_map<std::string, FieldPatchMeta> fields_;
};

// The table of a built-in kind served by the local API server (Pod,
// Deployment, ConfigMap, Secret, Service, ServiceAccount, Namespace, Node,
// Event, Lease, Role, ClusterRole, RoleBinding, ClusterRoleBinding,
// CustomResourceDefinition, Scale, and the workload, policy, autoscaling,
// networking, storage, scheduling, admission, apiregistration and
// certificates kinds), or nullptr for any other kind.
// `group` is the API group ("" for the core group, "apps", ...). The
// returned table lives for the whole program.
const PatchSchema* BuiltinPatchSchema(std::string_view group,
                                      std::string_view kind);

// True when kube-apiserver accepts "application/strategic-merge-patch+json"
// for the kind: the built-in kinds above. Custom resources get 415.
bool SupportsStrategicMergePatch(std::string_view group, std::string_view kind);

// The group of an apiVersion: "" for "v1", "apps" for "apps/v1".
std::string_view GroupOfApiVersion(std::string_view api_version);

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_PATCH_PATCH_SCHEMA_H_
