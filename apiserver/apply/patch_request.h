// One PATCH request as kube-apiserver handles it, minus HTTP and storage:
// pick the patch type from the Content-Type, apply the body to the live
// object (JSON patch, JSON merge patch, strategic merge patch or
// server-side apply), and record the field manager in managedFields. The
// result is the new object or the error kube-apiserver would answer, an
// api::StatusError ready to be written as a Status object.
//
// Pure functions: thread-compatible, no shared state, nothing crashes on
// any body.
#ifndef KCR_APISERVER_APPLY_PATCH_REQUEST_H_
#define KCR_APISERVER_APPLY_PATCH_REQUEST_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "api/errors/errors.h"
#include "api/patch/patch_schema.h"
#include "api/patch/patch_type.h"
#include "apiserver/apply/fieldmanager.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// kube-apiserver's 415 message for a PATCH with an unaccepted media type:
// "the body of the request was in an unknown format - accepted media types
// include: application/json-patch+json, application/merge-patch+json,
// application/apply-patch+yaml" (with strategic-merge-patch+json listed
// for built-in kinds).
std::string UnsupportedPatchMediaTypeMessage(bool strategic_allowed);

struct PatchRequest {
  api::PatchType type = api::PatchType::kMerge;
  std::string_view body;
  // The current object; nullptr when it does not exist, which only an
  // apply may create.
  const rapidjson::Value* live = nullptr;
  // BuiltinPatchSchema(group, kind); nullptr for custom resources, which
  // refuse strategic merge patches (415).
  const api::PatchSchema* schema = nullptr;
  // The fieldManager query parameter (may be empty for non-apply patches:
  // the manager is then derived from `user_agent`).
  std::string field_manager;
  std::string user_agent;
  // The force query parameter: true or false when given, nullopt when not.
  std::optional<bool> force;
  // "status" for the /status subresource, else empty.
  std::string subresource;
  FieldScope scope = FieldScope::kAll;
  absl::Time now = absl::UnixEpoch();
};

struct PatchResult {
  // The new state of the object, managedFields updated; null on error.
  rapidjson::Document object;
  // True when an apply created the object (answer 201).
  bool created = false;
  // The error kube-apiserver answers ("BadRequest", "Invalid", "Conflict",
  // "UnsupportedMediaType"); for 422 on the request options, details name
  // the kind "PatchOptions" in group "meta.k8s.io".
  std::optional<api::StatusError> error;
};

// Applies `request`. The caller checks preconditions and identity (name,
// namespace, resourceVersion, immutable fields) on the result and stores
// it. A non-apply patch without a live object is answered as a
// BadRequest; the caller answers 404 before getting here.
PatchResult ApplyPatchRequest(const PatchRequest& request);

// Records a create or update (POST, PUT) as an Update by the request's
// field manager (`field_manager`, else the User-Agent's prefix); a write
// without either name records nothing. New values come from `allocator`,
// the allocator of the document owning `*object`. InvalidArgument for an
// invalid fieldManager, with kube-apiserver's message; the caller answers 422.
absl::Status RecordWriteManager(
    const rapidjson::Value* old_object, rapidjson::Value* object,
    rapidjson::Value::AllocatorType& allocator, const api::PatchSchema* schema,
    std::string_view field_manager, std::string_view user_agent,
    std::string_view subresource, FieldScope scope, absl::Time now);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_APPLY_PATCH_REQUEST_H_
