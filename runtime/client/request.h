// Request: one call to the API server as the REST client builds it, before
// any transport is involved (client-go's rest.Request): the verb, the path
// of the resource, the query parameters of the verb's options, the body,
// and whether it may be retried. The builders check their arguments and
// return kInvalidArgument before anything is sent. DecodeObject and
// DecodeList read a 2xx answer (client-go's Result).
#ifndef KCR_RUNTIME_CLIENT_REQUEST_H_
#define KCR_RUNTIME_CLIENT_REQUEST_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "runtime/client/options.h"

namespace kcr::client {

struct Request {
  std::string method;  // "GET", "POST", "PUT", "PATCH", "DELETE"
  std::string path;    // e.g. /api/v1/namespaces/default/pods/web-0
  std::vector<std::pair<std::string, std::string>> query;  // unescaped
  std::string body;
  std::string content_type;
  // Safe to send again after a 5xx or a transport error (GET, PUT, DELETE).
  bool idempotent = false;
  // The Accept header.
  std::string accept = "application/json";
  // A watch: the body of a 2xx answer is streamed, not read at once, on a
  // connection of its own.
  bool watch = false;
  // A list: the body of a 2xx answer is streamed (on the shared
  // connections) and decoded as it arrives.
  bool stream_body = false;
  // A watch's timeout for a silent connection: beyond the server's own
  // timeoutSeconds, or an hour.
  absl::Duration watch_timeout = absl::Hours(1);

  // The path and the percent-encoded query: what goes on the request line.
  std::string Target() const;
};

absl::StatusOr<Request> GetRequest(const Resource& resource,
                                   std::string_view name,
                                   const GetOptions& options);
absl::StatusOr<Request> ListRequest(const Resource& resource,
                                    const ListOptions& options);
absl::StatusOr<Request> WatchRequest(const Resource& resource,
                                     const ListOptions& options);
// The namespace is resource.namespace_ if set, else the object's; the two
// must agree.
absl::StatusOr<Request> CreateRequest(const Resource& resource,
                                      const api::Object& object,
                                      const CreateOptions& options);
// PUT of the object, or of its `subresource` (e.g. "status").
absl::StatusOr<Request> UpdateRequest(const Resource& resource,
                                      const api::Object& object,
                                      const UpdateOptions& options,
                                      std::string_view subresource);
absl::StatusOr<Request> PatchRequest(const Resource& resource,
                                     std::string_view name, PatchType type,
                                     std::string_view patch,
                                     const PatchOptions& options,
                                     std::string_view subresource);
absl::StatusOr<Request> DeleteRequest(const Resource& resource,
                                      std::string_view name,
                                      const DeleteOptions& options);
absl::StatusOr<Request> DeleteCollectionRequest(
    const Resource& resource, const DeleteOptions& options,
    const ListOptions& list_options);
// GET of `path`, which must start with '/'.
absl::StatusOr<Request> GetRawRequest(std::string_view path);

// The object in a 2xx answer's body.
absl::StatusOr<api::ObjectPtr> DecodeObject(
    const std::string& body, const api::ParseOptions& parse_options);
// The list in a 2xx answer's body (ListDecoder, list_decoder.h); items get
// the list's kind (less "List") and apiVersion when they carry none, as
// client-go's dynamic client does.
absl::StatusOr<ObjectList> DecodeList(std::string_view body,
                                      const api::ParseOptions& parse_options);

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_REQUEST_H_
