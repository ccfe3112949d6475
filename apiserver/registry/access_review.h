// authorization.k8s.io/v1 SelfSubjectAccessReview and
// SelfSubjectRulesReview: what `kubectl auth can-i` asks. The local API
// server enforces no authorization (RBAC objects are stored only,
// rbac_strategy.h), so every review answers that the request is allowed,
// and says why; the rules review lists "*" for every resource and
// non-resource URL. The reviews are created (POST) and never stored, as
// in kube-apiserver; their spec is validated as kube-apiserver does.
//
// Stateless functions; thread-safe.
#ifndef KCR_APISERVER_REGISTRY_ACCESS_REVIEW_H_
#define KCR_APISERVER_REGISTRY_ACCESS_REVIEW_H_

#include <string>

#include "absl/status/statusor.h"
#include "apiserver/registry/resources.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

inline constexpr char kAuthorizationGroup[] = "authorization.k8s.io";

// status.reason of every SelfSubjectAccessReview.
inline constexpr char kNoAuthorizationReason[] =
    "no authorization is enforced by the local API server: every request "
    "is allowed";

// The answer (compact JSON, status 201) to a review `request` posted to
// `resource` (selfsubjectaccessreviews or selfsubjectrulesreviews); 422
// Invalid for a spec kube-apiserver refuses, 400 for a body of another
// kind.
absl::StatusOr<std::string> ReviewAccess(const ResourceInfo& resource,
                                         const rapidjson::Value& request);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_REGISTRY_ACCESS_REVIEW_H_
