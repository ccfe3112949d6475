// URL paths of the Kubernetes REST API, as client-go's request builder
// forms them:
//   core group:  /api/v1[/namespaces/{ns}]/{resource}[/{name}[/{sub}]]
//   other:       /apis/{group}/{version}[/namespaces/{ns}]/{resource}[...]
// Namespaced resources with an empty namespace give the all-namespaces
// collection (for list and watch); cluster-scoped resources never carry a
// namespace segment. Path segments are percent-escaped (RFC 3986), so a
// name like "system:node:a" is safe.
#ifndef KCR_API_META_API_PATH_H_
#define KCR_API_META_API_PATH_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/meta/group_version.h"
#include "api/meta/rest_mapper.h"

namespace kcr {
namespace api {

// "/api/v1" for the core group, "/apis/{group}/{version}" otherwise.
std::string GroupVersionPath(const GroupVersion& gv);

// The collection path of `resource`. For a namespaced resource, `ns` empty
// means all namespaces; for a cluster-scoped one `ns` must be empty
// (InvalidArgument otherwise). InvalidArgument for a namespace that is not
// a valid path segment name.
absl::StatusOr<std::string> CollectionPath(const GroupVersionResource& resource,
                                           bool namespaced,
                                           std::string_view ns);
absl::StatusOr<std::string> CollectionPath(const RESTMapping& mapping,
                                           std::string_view ns);

// The path of one object, with an optional subresource suffix ("status",
// "scale"). A namespaced resource needs a namespace; a cluster-scoped one
// must have none. InvalidArgument if `name` is empty, "." or "..", or
// holds '/' or '%' (kube-apiserver's path segment rule), or the namespace
// breaks the same rule. The overload taking a RESTMapping also checks that
// the mapping declares `subresource`.
absl::StatusOr<std::string> ItemPath(const GroupVersionResource& resource,
                                     bool namespaced, std::string_view ns,
                                     std::string_view name,
                                     std::string_view subresource = "");
absl::StatusOr<std::string> ItemPath(const RESTMapping& mapping,
                                     std::string_view ns, std::string_view name,
                                     std::string_view subresource = "");

// Percent-escapes one path segment: unreserved characters, sub-delims, ':'
// and '@' stay as they are (RFC 3986 pchar).
std::string EscapePathSegment(std::string_view segment);

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_META_API_PATH_H_
