// Query option parsing for resource requests, as kube-apiserver's
// endpoints/handlers (rest.go) decodes ListOptions, DeleteOptions and the
// boolean parameters.
#ifndef KCR_APISERVER_ENDPOINTS_REQUEST_OPTIONS_H_
#define KCR_APISERVER_ENDPOINTS_REQUEST_OPTIONS_H_

#include <string>

#include "absl/status/statusor.h"
#include "apiserver/endpoints/http_server.h"
#include "apiserver/registry/registry.h"

namespace kcr {
namespace apiserver {

// A boolean query value as Go's strconv.ParseBool reads it ("true", "1",
// "t", ...); anything else is false.
bool ParseBool(const std::string& v);

// labelSelector, fieldSelector, resourceVersion(Match), continue, limit,
// and a check of timeoutSeconds; 400 BadRequest for a value that does not
// parse.
absl::StatusOr<ListOptions> ParseListOptions(const HttpRequest& req);

// ?dryRun= with any value.
bool DryRun(const HttpRequest& req);

// A DeleteOptions body (optional) and the query parameters, which win.
absl::StatusOr<DeleteOptions> ParseDeleteOptions(const HttpRequest& req);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_REQUEST_OPTIONS_H_
