// Authenticator: who sent a request, as kube-apiserver's authenticator
// union: a client certificate verified against the client CA (CN = user,
// O = groups), then a bearer token — one of the static token file
// (token_file.h) or a service-account token (service_account_token.h) whose
// ServiceAccount still exists with the token's uid — and, for a request
// with no credential, system:anonymous in system:unauthenticated when
// anonymous requests are allowed.
//
// Every authenticated user is also in system:authenticated; a
// ServiceAccount's user is system:serviceaccount:<ns>:<name> in
// system:serviceaccounts and system:serviceaccounts:<ns>.
//
// Thread-safe.
#ifndef KCR_APISERVER_AUTH_AUTHENTICATOR_H_
#define KCR_APISERVER_AUTH_AUTHENTICATOR_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "apiserver/auth/service_account_token.h"
#include "apiserver/auth/user_info.h"

namespace kcr {
namespace apiserver {
namespace auth {

struct AuthenticatorOptions {
  // Static tokens (ParseTokenFile).
  std::map<std::string, UserInfo> tokens;
  // Service-account tokens; null: none are accepted.
  std::shared_ptr<const ServiceAccountTokens> service_account_tokens;
  // The audiences a service-account token must carry one of (kube's
  // --api-audiences; default: the issuer).
  std::vector<std::string> api_audiences;
  // The uid of ServiceAccount <ns>/<name>, "" when it does not exist.
  std::function<std::string(const std::string& ns, const std::string& name)>
      service_account_uid;
  // Requests without a credential are system:anonymous (else 401).
  bool anonymous = true;
};

struct Authentication {
  enum class Outcome {
    kAuthenticated,  // `user` holds who
    kAnonymous,      // no credential; `user` is system:anonymous
    kRejected,       // no credential and anonymous is off, or a bad one
  };
  Outcome outcome = Outcome::kRejected;
  UserInfo user;
  // For a token: the API audiences it was accepted for.
  std::vector<std::string> audiences;
  // Why it was rejected (for logs, never for the client).
  std::string error;
};

class Authenticator {
 public:
  explicit Authenticator(AuthenticatorOptions options);

  // A request with this Authorization header and the client certificate's
  // verified subject (empty common name: none).
  Authentication AuthenticateRequest(
      const std::string& authorization_header, const std::string& cert_cn,
      const std::vector<std::string>& cert_organizations) const;

  // A bearer token, accepted for one of `audiences` (empty: the API
  // audiences), as TokenReview asks.
  Authentication AuthenticateToken(
      const std::string& token,
      const std::vector<std::string>& audiences = {}) const;

  const std::vector<std::string>& api_audiences() const {
    return options_.api_audiences;
  }

 private:
  const AuthenticatorOptions options_;
};

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_AUTH_AUTHENTICATOR_H_
