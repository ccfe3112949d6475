// The review APIs, answered from the server's own authenticator and
// authorizer, created (POST) and never stored, as in kube-apiserver:
//   authorization.k8s.io/v1  SelfSubjectAccessReview, SubjectAccessReview,
//                            LocalSubjectAccessReview, SelfSubjectRulesReview
//   authentication.k8s.io/v1 TokenReview, SelfSubjectReview
// With an authorizer that enforces nothing (AlwaysAllow), the self-subject
// access and rules reviews keep access_review.h's answers.
//
// Stateless functions; thread-safe.
#ifndef KCR_APISERVER_AUTH_REVIEWS_H_
#define KCR_APISERVER_AUTH_REVIEWS_H_

#include <string>

#include "absl/status/statusor.h"
#include "apiserver/auth/authenticator.h"
#include "apiserver/auth/authorizer.h"
#include "apiserver/registry/resources.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace auth {

inline constexpr char kAuthenticationGroup[] = "authentication.k8s.io";

// Whether `resource` is one of the reviews above.
bool IsReview(const ResourceInfo& resource);

// The answer (compact JSON, status 201) to `request` posted to `resource`
// in namespace `ns` by `requester`; 422 Invalid for a spec kube-apiserver
// refuses, 400 for a body of another kind.
absl::StatusOr<std::string> AnswerReview(const ResourceInfo& resource,
                                         const std::string& ns,
                                         const rapidjson::Value& request,
                                         const UserInfo& requester,
                                         const Authorizer& authorizer,
                                         const Authenticator& authenticator);

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_AUTH_REVIEWS_H_
