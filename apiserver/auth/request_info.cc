#include "apiserver/auth/request_info.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"

namespace kcr {
namespace apiserver {
namespace auth {

Attributes RequestAttributes(const std::string& method, const std::string& path,
                             bool watch, UserInfo user) {
  Attributes a;
  a.user = std::move(user);
  a.path = path;
  a.resource_request = false;
  a.verb = absl::AsciiStrToLower(method);
  std::vector<std::string> parts = absl::StrSplit(path, '/', absl::SkipEmpty());
  if (parts.size() < 3 || (parts[0] != "api" && parts[0] != "apis")) {
    return a;
  }
  size_t i = 1;
  if (parts[0] == "apis") {
    if (parts.size() < 4) return a;
    a.api_group = parts[i++];
  }
  a.api_version = parts[i++];
  a.resource_request = true;
  bool watch_path = false;
  if (i < parts.size() && parts[i] == "watch") {
    watch_path = true;
    ++i;
  }
  std::vector<std::string> rest(parts.begin() + i, parts.end());
  if (!rest.empty() && rest[0] == "namespaces" && rest.size() > 1) {
    a.ns = rest[1];
    if (rest.size() > 2 && rest[2] != "status" && rest[2] != "finalize") {
      rest.erase(rest.begin(), rest.begin() + 2);
    }
  }
  if (!rest.empty()) a.resource = rest[0];
  if (rest.size() > 1) a.name = rest[1];
  if (rest.size() > 2) a.subresource = rest[2];
  if (watch_path) {
    a.verb = "watch";
  } else if (method == "GET" || method == "HEAD") {
    a.verb = a.name.empty() ? (watch ? "watch" : "list") : "get";
  } else if (method == "POST") {
    a.verb = "create";
  } else if (method == "PUT") {
    a.verb = "update";
  } else if (method == "PATCH") {
    a.verb = "patch";
  } else if (method == "DELETE") {
    a.verb = a.name.empty() ? "deletecollection" : "delete";
  }
  return a;
}

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr
