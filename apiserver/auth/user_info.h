// UserInfo: who a request comes from, as kube-apiserver's user.Info: a
// name, a uid, groups and extra attributes. The authenticators
// (authenticator.h) produce it; the authorizers (authorizer.h) and the
// reviews (reviews.h) read it.
#ifndef KCR_APISERVER_AUTH_USER_INFO_H_
#define KCR_APISERVER_AUTH_USER_INFO_H_

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace kcr {
namespace apiserver {
namespace auth {

// The names kube-apiserver gives.
inline constexpr char kAnonymousUser[] = "system:anonymous";
inline constexpr char kAllAuthenticated[] = "system:authenticated";
inline constexpr char kAllUnauthenticated[] = "system:unauthenticated";
inline constexpr char kSystemMasters[] = "system:masters";
inline constexpr char kAllServiceAccounts[] = "system:serviceaccounts";
inline constexpr char kServiceAccountPrefix[] = "system:serviceaccount:";

struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;

  bool InGroup(const std::string& group) const {
    return std::find(groups.begin(), groups.end(), group) != groups.end();
  }
};

// "system:serviceaccount:<ns>:<name>".
inline std::string ServiceAccountUserName(const std::string& ns,
                                          const std::string& name) {
  return kServiceAccountPrefix + ns + ":" + name;
}

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_AUTH_USER_INFO_H_
