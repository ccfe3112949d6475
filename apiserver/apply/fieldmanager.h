// Server-side apply ("application/apply-patch+yaml") and the field
// ownership that kube-apiserver records in metadata.managedFields, in a
// simplified form (docs/deviations.md, "Server-side apply").
//
// Every write names a field manager. An apply merges the applied
// configuration into the live object (structurally: keyed lists by their
// merge key under the kind's PatchSchema, other lists and scalars
// replaced) and makes the applier the owner of exactly the fields its
// configuration sets. Changing a field that another manager owns is a
// conflict unless `force` moves the ownership; fields the applier owned
// before and no longer sets are removed unless another manager owns them.
// Non-apply writes (create, update, the other patch types) record an
// "Update" manager that takes over every field the write changed.
//
// Ownership is kept at leaf-field granularity: scalars, atomic lists and
// objects, and empty objects are fields; elements of keyed lists are owned
// as `k:{"<key>":<value>}` and elements of set lists as `v:<value>`, in
// kube-apiserver's FieldsV1 format, so `kubectl get -o yaml
// --show-managed-fields` reads naturally. Custom resources (no PatchSchema)
// have atomic lists.
//
// All functions are pure: thread-compatible, no shared state. Inputs
// nested deeper than kMaxJsonDepth are refused; nothing crashes on any
// input.
#ifndef KCR_APISERVER_APPLY_FIELDMANAGER_H_
#define KCR_APISERVER_APPLY_FIELDMANAGER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/patch/patch_schema.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// Which top-level fields a write may own.
enum class FieldScope {
  kAll,           // every field (custom resources without /status)
  kMainResource,  // all but `status` (kinds with a status subresource)
  kStatus,        // only `status` (writes to the /status subresource)
};

struct ApplyOptions {
  // The applier; required (1 to 128 characters).
  std::string field_manager;
  // Take the ownership of conflicting fields instead of failing.
  bool force = false;
  // "status" for an apply to the /status subresource, else empty.
  std::string subresource;
  FieldScope scope = FieldScope::kAll;
  // Recorded as the manager's time.
  absl::Time now = absl::UnixEpoch();
};

// A field the apply would change that another manager owns.
struct ApplyConflict {
  // The owner as kube-apiserver prints it: "\"mgr\"" for an applier,
  // "\"mgr\" using apps/v1" for an Update manager.
  std::string manager;
  // The field path as kube-apiserver prints it:
  // ".spec.template.spec.containers[name=\"a\"].image".
  std::string field;
};

struct ApplyResult {
  // The live object with the configuration applied and managedFields
  // updated. Null when `conflicts` is not empty.
  rapidjson::Document object;
  // Non-empty when the apply was refused (HTTP 409); see
  // ApplyConflictMessage.
  std::vector<ApplyConflict> conflicts;
  // True when there was no live object.
  bool created = false;
};

// Parses an apply body: JSON, or YAML (one document, kubectl's scalar
// rules). InvalidArgument unless it is a single object.
absl::StatusOr<rapidjson::Document> ParseApplyConfiguration(
    std::string_view body);

// Applies `config` to `live` (nullptr: the object does not exist and is
// created from `config`). `schema` is the kind's patch metadata, nullptr
// for custom resources. `config` must be an object with apiVersion and
// kind and without metadata.managedFields. InvalidArgument for a bad
// configuration or field manager; conflicts are reported in the result,
// not as an error. The result keeps the live object's identity fields
// (name, uid, resourceVersion...) as merged from both; the caller checks
// them.
absl::StatusOr<ApplyResult> ServerSideApply(const rapidjson::Value* live,
                                            const rapidjson::Value& config,
                                            const api::PatchSchema* schema,
                                            const ApplyOptions& options);

// kube-apiserver's 409 message for `conflicts`, e.g.
//   Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas
//   Apply failed with 2 conflicts: conflicts with "a":\n- .x\n- .y
std::string ApplyConflictMessage(const std::vector<ApplyConflict>& conflicts);

struct UpdateOptions {
  // The writer: the request's fieldManager, else
  // FieldManagerFromUserAgent(User-Agent). Required.
  std::string field_manager;
  std::string subresource;
  FieldScope scope = FieldScope::kAll;
  absl::Time now = absl::UnixEpoch();
};

// Records a non-apply write of `*object` (the new state) over `old_object`
// (nullptr for a create) as an "Update" by `options.field_manager`: the
// manager owns every field it changed, other managers lose those fields,
// removed fields leave every manager. Managed fields come from `*object`
// when the writer sent a non-empty list, else from `old_object`; a writer
// that sends `managedFields: [{}]` clears them. InvalidArgument for a bad
// manager name or input nested too deeply.
absl::Status RecordUpdateManagedFields(const rapidjson::Value* old_object,
                                       rapidjson::Document* object,
                                       const api::PatchSchema* schema,
                                       const UpdateOptions& options);

// As above for a value inside a document: new values are allocated from
// `allocator`, the allocator of the document that owns `*object`.
absl::Status RecordUpdateManagedFields(
    const rapidjson::Value* old_object, rapidjson::Value* object,
    rapidjson::Value::AllocatorType& allocator, const api::PatchSchema* schema,
    const UpdateOptions& options);

// kube-apiserver's default manager name for a non-apply write without
// fieldManager: the User-Agent up to its first '/', printable characters
// only, at most 128 bytes ("kubectl.1.32/v1.32.0 (linux/amd64) ..." gives
// "kubectl.1.32").
std::string FieldManagerFromUserAgent(std::string_view user_agent);

// OK when `manager` is a valid field manager name; for apply it is
// required. The message is kube-apiserver's ("fieldManager: Required
// value: is required for apply patch").
absl::Status ValidateFieldManager(std::string_view manager, bool apply);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_APPLY_FIELDMANAGER_H_
