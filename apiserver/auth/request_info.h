// The authorization attributes of an HTTP request, as kube-apiserver's
// RequestInfoFactory reads them from the method and path:
//   /api/v1/namespaces/ns/pods/p/log         get pods/log "p" in ns
//   /apis/apps/v1/deployments                list (watch with ?watch=true)
//   /api/v1/watch/namespaces/ns/pods         watch
//   /api/v1/namespaces/ns                    namespaces "ns" (ns too)
//   /api, /apis/apps/v1, /healthz, /metrics  non-resource: verb = method
#ifndef KCR_APISERVER_AUTH_REQUEST_INFO_H_
#define KCR_APISERVER_AUTH_REQUEST_INFO_H_

#include <string>

#include "apiserver/auth/authorizer.h"

namespace kcr {
namespace apiserver {
namespace auth {

// `path` percent-decoded, without the query; `watch` is ?watch's value
// read as a bool.
Attributes RequestAttributes(const std::string& method, const std::string& path,
                             bool watch, UserInfo user);

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_AUTH_REQUEST_INFO_H_
