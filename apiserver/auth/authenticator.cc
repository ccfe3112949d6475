#include "apiserver/auth/authenticator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace auth {
namespace {

void AddGroup(UserInfo* user, const std::string& group) {
  if (!user->InGroup(group)) user->groups.push_back(group);
}

Authentication Rejected(std::string why) {
  Authentication a;
  a.outcome = Authentication::Outcome::kRejected;
  a.error = std::move(why);
  return a;
}

}  // namespace

Authenticator::Authenticator(AuthenticatorOptions options)
    : options_(std::move(options)) {}

Authentication Authenticator::AuthenticateRequest(
    const std::string& header, const std::string& cert_cn,
    const std::vector<std::string>& cert_organizations) const {
  if (!cert_cn.empty()) {
    Authentication a;
    a.outcome = Authentication::Outcome::kAuthenticated;
    a.user.name = cert_cn;
    a.user.groups = cert_organizations;
    AddGroup(&a.user, kAllAuthenticated);
    return a;
  }
  // kube's bearer token authenticator: "Bearer <token>" (the scheme in any
  // case); any other header is no credential at all.
  const std::string trimmed(absl::StripAsciiWhitespace(header));
  std::string token;
  const size_t space = trimmed.find(' ');
  if (space != std::string::npos &&
      absl::AsciiStrToLower(trimmed.substr(0, space)) == "bearer") {
    token = trimmed.substr(space + 1);
    const size_t end = token.find(' ');
    if (end != std::string::npos) token.resize(end);
  }
  if (!token.empty()) return AuthenticateToken(token);
  if (!options_.anonymous) return Rejected("no credential");
  Authentication a;
  a.outcome = Authentication::Outcome::kAnonymous;
  a.user.name = kAnonymousUser;
  a.user.groups = {kAllUnauthenticated};
  return a;
}

Authentication Authenticator::AuthenticateToken(
    const std::string& token, const std::vector<std::string>& audiences) const {
  if (auto it = options_.tokens.find(token); it != options_.tokens.end()) {
    Authentication a;
    a.outcome = Authentication::Outcome::kAuthenticated;
    a.user = it->second;
    AddGroup(&a.user, kAllAuthenticated);
    a.audiences = audiences.empty() ? options_.api_audiences : audiences;
    return a;
  }
  if (options_.service_account_tokens == nullptr) {
    return Rejected("unknown token");
  }
  auto claims = options_.service_account_tokens->Verify(token);
  if (!claims.ok()) return Rejected(std::string(claims.status().message()));
  const std::vector<std::string>& wanted =
      audiences.empty() ? options_.api_audiences : audiences;
  Authentication a;
  for (const std::string& aud : claims->audiences) {
    if (std::find(wanted.begin(), wanted.end(), aud) != wanted.end()) {
      a.audiences.push_back(aud);
    }
  }
  if (a.audiences.empty()) return Rejected("token audiences are not accepted");
  const std::string uid =
      options_.service_account_uid
          ? options_.service_account_uid(claims->ns, claims->name)
          : "";
  if (uid.empty()) {
    return Rejected(Cat("service account ", claims->ns, "/", claims->name,
                        " has been deleted"));
  }
  if (uid != claims->uid) {
    return Rejected(Cat("service account ", claims->ns, "/", claims->name,
                        " uid ", uid, " is not the token's ", claims->uid));
  }
  a.outcome = Authentication::Outcome::kAuthenticated;
  a.user.name = ServiceAccountUserName(claims->ns, claims->name);
  a.user.uid = claims->uid;
  a.user.groups = {kAllServiceAccounts,
                   Cat(kAllServiceAccounts, ":", claims->ns),
                   kAllAuthenticated};
  return a;
}

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr
