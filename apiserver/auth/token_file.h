// The static token file of kube-apiserver's --token-auth-file: CSV lines
//   token,user,uid,"group1,group2"
// (at least three columns; the fourth, optional, is a comma-separated group
// list). Blank lines are skipped; a line with an empty token is skipped, as
// kube does; a later duplicate token wins.
#ifndef KCR_APISERVER_AUTH_TOKEN_FILE_H_
#define KCR_APISERVER_AUTH_TOKEN_FILE_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "apiserver/auth/user_info.h"

namespace kcr {
namespace apiserver {
namespace auth {

// The users by token of `text`, read from `path` (named in errors).
// InvalidArgument naming the file and line for a line that is not valid
// CSV, has fewer than three columns or no user name.
absl::StatusOr<std::map<std::string, UserInfo>> ParseTokenFile(
    std::string_view text, const std::string& path);

// Reads and parses the file; NotFound when it cannot be read.
absl::StatusOr<std::map<std::string, UserInfo>> ReadTokenFile(
    const std::string& path);

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_AUTH_TOKEN_FILE_H_
