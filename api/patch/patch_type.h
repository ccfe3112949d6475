// PatchType: the kinds of PATCH a Kubernetes API server accepts, named by
// the request's Content-Type (apimachinery's types.PatchType). Used by the
// REST client to send a patch and by the local API server to read one.
#ifndef KCR_API_PATCH_PATCH_TYPE_H_
#define KCR_API_PATCH_PATCH_TYPE_H_

#include <optional>
#include <string_view>

namespace kcr {
namespace api {

enum class PatchType {
  kJson,            // application/json-patch+json (RFC 6902)
  kMerge,           // application/merge-patch+json (RFC 7386)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-ins)
  kApply,           // application/apply-patch+yaml (server-side apply)
};

// The Content-Type a patch of `type` is sent with.
std::string_view ContentType(PatchType type);

// The patch type of a Content-Type header value (media type parameters and
// case ignored; application/apply-patch+cbor is an apply too), or nullopt
// for any other media type.
std::optional<PatchType> PatchTypeFromContentType(
    std::string_view content_type);

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_PATCH_PATCH_TYPE_H_
