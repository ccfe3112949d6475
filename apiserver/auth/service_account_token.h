// ServiceAccountTokens: issues and verifies the service-account tokens of
// the TokenRequest API (POST .../serviceaccounts/<name>/token, `kubectl
// create token`): JWTs signed RS256 with kube's claims
//   iss, sub (system:serviceaccount:<ns>:<name>), aud, exp, iat, nbf, jti,
//   kubernetes.io {namespace, serviceaccount {name, uid}}
// The key is an RSA private key (PEM) from a file, or one generated at
// start. Verify checks the signature, issuer and time window; that the
// ServiceAccount still exists with the token's uid is the authenticator's
// check (a deleted and recreated ServiceAccount has another uid).
//
// Thread-safe.
#ifndef KCR_APISERVER_AUTH_SERVICE_ACCOUNT_TOKEN_H_
#define KCR_APISERVER_AUTH_SERVICE_ACCOUNT_TOKEN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"

struct evp_pkey_st;  // OpenSSL's EVP_PKEY

namespace kcr {
namespace apiserver {
namespace auth {

// kind's and kubeadm's issuer.
inline constexpr char kDefaultServiceAccountIssuer[] =
    "https://kubernetes.default.svc.cluster.local";

struct ServiceAccountTokenOptions {
  std::string issuer = kDefaultServiceAccountIssuer;
  // PEM RSA private key; empty: a 2048-bit key generated at Create.
  std::string key_file;
  // Tokens' exp, iat and nbf follow this clock.
  const Clock* clock = Clock::Real();
};

struct ServiceAccountClaims {
  std::string ns;
  std::string name;
  std::string uid;
  std::vector<std::string> audiences;
  absl::Time issued_at;
  absl::Time expiry;
};

class ServiceAccountTokens {
 public:
  static absl::StatusOr<std::unique_ptr<ServiceAccountTokens>> Create(
      ServiceAccountTokenOptions options);
  ~ServiceAccountTokens();
  ServiceAccountTokens(const ServiceAccountTokens&) = delete;
  ServiceAccountTokens& operator=(const ServiceAccountTokens&) = delete;

  // A token for the ServiceAccount, valid from now for `ttl`.
  absl::StatusOr<std::string> Issue(const std::string& ns,
                                    const std::string& name,
                                    const std::string& uid,
                                    const std::vector<std::string>& audiences,
                                    absl::Duration ttl,
                                    absl::Time* expiry) const;

  // The claims of a token this issuer signed that is valid now;
  // Unauthenticated (with why) otherwise: malformed, forged, another
  // issuer, expired, not yet valid.
  absl::StatusOr<ServiceAccountClaims> Verify(const std::string& token) const;

  const std::string& issuer() const { return options_.issuer; }
  const Clock* clock() const { return options_.clock; }

 private:
  struct Key;
  // The key, generated on first use when no file was given; null when
  // generating failed.
  ::evp_pkey_st* SigningKey() const;
  ServiceAccountTokens(ServiceAccountTokenOptions options,
                       std::unique_ptr<Key> key);
  const ServiceAccountTokenOptions options_;
  const std::unique_ptr<Key> key_;
};

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_AUTH_SERVICE_ACCOUNT_TOKEN_H_
