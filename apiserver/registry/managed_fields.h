// Field ownership (metadata.managedFields) for the local API server's
// writes: which patch metadata and field scope a resource has, and the
// "Update" manager that every create, update and non-apply patch records
// (from ?fieldManager=, else the User-Agent's prefix), as kube-apiserver's
// field manager does. The algorithms live in apiserver/fieldmanager.h.
//
// Stateless; thread-safe.
#ifndef KCR_APISERVER_REGISTRY_MANAGED_FIELDS_H_
#define KCR_APISERVER_REGISTRY_MANAGED_FIELDS_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "api/patch/patch_schema.h"
#include "apiserver/apply/fieldmanager.h"
#include "apiserver/registry/resources.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// The patch metadata of `resource`'s kind; nullptr for custom resources.
const api::PatchSchema* PatchSchemaFor(const ResourceInfo& resource);

// Which fields a write through `subresource` may own: only status through
// /status, all but status on the main resource of a kind with a status
// subresource, everything otherwise.
FieldScope FieldScopeFor(const ResourceInfo& resource,
                         std::string_view subresource);

// kube-apiserver's cap on "Update" managers per object (its
// DefaultMaxUpdateManagers): past it the oldest are merged into
// kAncientChangesManager, so that writers with ever new fieldManager names
// cannot grow an object's managedFields without bound.
inline constexpr size_t kMaxUpdateManagers = 10;
inline constexpr char kAncientChangesManager[] = "ancient-changes";

// Records a non-apply write of `*object` over `old_object` (nullptr: a
// create) in metadata.managedFields, as kube-apiserver does for every
// create, update and patch, then caps the Update managers as
// CapUpdateManagers does. The manager is `field_manager`, else the
// User-Agent's prefix; with neither nothing is recorded. 422 Invalid
// PatchOptions/CreateOptions style error for a bad manager name.
absl::Status RecordWriteManagedFields(
    const ResourceInfo& resource, const rapidjson::Value* old_object,
    rapidjson::Value* object, rapidjson::Value::AllocatorType& allocator,
    std::string_view field_manager, std::string_view user_agent,
    std::string_view subresource, absl::Time now);

// Merges the oldest "Update" entries of `*object`'s managedFields, one
// bucket per (apiVersion, subresource) named kAncientChangesManager, until
// at most `max` remain, as kube-apiserver's capManagersManager: entries
// oldest first by time (then by manager name); the first of a version
// seen becomes its bucket when a second one is merged into it (a bucket
// left by an earlier cap takes the merges of its version instead); a
// bucket owns the union of the merged fields and takes the newest merged
// time.
// "Apply" entries are never merged.
void CapUpdateManagers(rapidjson::Value* object,
                       rapidjson::Value::AllocatorType& allocator,
                       size_t max = kMaxUpdateManagers);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_MANAGED_FIELDS_H_
