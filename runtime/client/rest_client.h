// RestClient: the dynamic client for any GroupVersionResource on a
// Kubernetes API server (client-go's dynamic.Interface plus the request
// machinery of rest.RESTClient), and NewRestClient, its implementation on
// transport::HttpStream.
//
// Every call is synchronous and thread-safe; the caller's thread sends the
// request and reads the answer itself (no thread pool in between), over a
// kept-alive connection (a list or a watch: one of its own). Every call takes a
// Context first, as client-go's: when it is cancelled or its deadline
// passes, the call returns within moments with kCancelled or
// kDeadlineExceeded (message: the verb, the path and "context canceled" or
// "context deadline exceeded") — wherever it is: waiting for the rate
// limiter, sleeping before a retry, with the request in flight (its
// connection is closed) or reading the answer. A context that is already
// done sends nothing. Results:
//   - a 2xx answer is decoded into Objects;
//   - any other answer becomes the server's Status as an absl::Status
//     (api/errors/errors.h: api::IsNotFound, api::IsConflict, ...);
//   - a transport failure (refused, reset, TLS verification, timeout) is
//     kUnavailable with the cause; a bad argument is kInvalidArgument
//     before anything is sent.
// Nothing from a cancelled call is retried: the retries below stop as soon
// as the context is done.
//
// Flow control, as client-go: a token bucket (Config::qps / burst, 5/10 by
// default; a negative qps turns it off) delays requests before they are
// sent, giving its token back when the context ends first; 429 answers are
// retried after their Retry-After (default 1 s), as are 5xx answers that carry
// one; GET, PUT and DELETE are also retried with exponential backoff after
// other 5xx answers and transport errors (but not after a failed TLS
// verification, which retrying cannot fix). A 401 makes the client re-read its
// token file or re-run its exec plugin and, when that gives a different
// credential, send the request once more.
#ifndef KCR_RUNTIME_CLIENT_REST_CLIENT_H_
#define KCR_RUNTIME_CLIENT_REST_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "base/clock.h"
#include "base/context.h"
#include "runtime/client/metrics.h"
#include "runtime/client/options.h"
#include "runtime/client/rest_config.h"
#include "runtime/client/watch.h"

namespace kcr::client {

class RestClient {
 public:
  virtual ~RestClient() = default;

  virtual absl::StatusOr<api::ObjectPtr> Get(
      const Context& ctx, const Resource& resource, std::string_view name,
      const GetOptions& options = {}) = 0;

  // One page (or everything when options.limit is 0). See ListPager for
  // following continue tokens.
  virtual absl::StatusOr<ObjectList> List(const Context& ctx,
                                          const Resource& resource,
                                          const ListOptions& options = {}) = 0;

  // One page (or everything when options.limit is 0), handing each item to
  // `on_item` in order, on the caller's thread, as it is decoded from the
  // body streaming in (list_reader.h), so a large answer is never held
  // whole: the items already handed over are the caller's, and an error
  // (from the server, the stream, or `on_item`, which stops the list and
  // is returned as is) may come after some items. Cancelling `ctx` closes
  // the connection mid-body. Returns the list's metadata. List decodes the
  // same way and collects the items.
  virtual absl::StatusOr<ListMeta> ListEach(
      const Context& ctx, const Resource& resource, const ListOptions& options,
      const std::function<absl::Status(api::ObjectPtr)>& on_item) = 0;

  // Starts a watch (the request has `watch=true`). The returned stream is
  // independent of the client's other requests; it holds its own
  // connection, and the client must outlive it. `ctx` bounds the whole
  // watch, as the request context does in client-go: when it ends, the
  // stream ends too (a Next blocked on it returns false, and status() is
  // ctx.Err()).
  virtual absl::StatusOr<std::unique_ptr<WatchStream>> Watch(
      const Context& ctx, const Resource& resource,
      const ListOptions& options = {}) = 0;

  // POST to the collection. The namespace is resource.namespace_ if set,
  // else the object's.
  virtual absl::StatusOr<api::ObjectPtr> Create(
      const Context& ctx, const Resource& resource, const api::Object& object,
      const CreateOptions& options = {}) = 0;

  // PUT of the whole object (metadata.resourceVersion makes it conditional:
  // a stale one gives IsConflict).
  virtual absl::StatusOr<api::ObjectPtr> Update(
      const Context& ctx, const Resource& resource, const api::Object& object,
      const UpdateOptions& options = {}) = 0;

  // PUT to the object's status subresource.
  virtual absl::StatusOr<api::ObjectPtr> UpdateStatus(
      const Context& ctx, const Resource& resource, const api::Object& object,
      const UpdateOptions& options = {}) = 0;

  // PATCH `name` (or its `subresource`, e.g. "status") with `patch`, JSON
  // (or YAML for kApply) of the given type. kApply needs a field manager.
  virtual absl::StatusOr<api::ObjectPtr> Patch(
      const Context& ctx, const Resource& resource, std::string_view name,
      PatchType type, std::string_view patch, const PatchOptions& options = {},
      std::string_view subresource = "") = 0;

  // DELETE. OK also when the object stays because of finalizers (it then
  // has a deletionTimestamp).
  virtual absl::Status Delete(const Context& ctx, const Resource& resource,
                              std::string_view name,
                              const DeleteOptions& options = {}) = 0;

  // DELETE on the collection, selecting with `list_options`.
  virtual absl::Status DeleteCollection(const Context& ctx,
                                        const Resource& resource,
                                        const DeleteOptions& options,
                                        const ListOptions& list_options) = 0;

  // GET of any path under the server ("/version", "/apis"), returning the
  // body of a 2xx answer.
  virtual absl::StatusOr<std::string> GetRaw(const Context& ctx,
                                             std::string_view path) = 0;
};

// Knobs of NewRestClient beyond Config; defaults suit production.
struct ClientOptions {
  // Time for the rate limiter, credential caches and backoff. Not owned;
  // null means the real clock.
  const Clock* clock = nullptr;
  // How the client waits before a retry or for the rate limiter. Null:
  // wait on `clock` until the time passes or the call's context ends.
  // Tests record the waits instead; the call still ends if its context is
  // done when the hook returns.
  std::function<void(absl::Duration)> sleep;
  // Metrics; null means GlobalMetricsProvider() (and none if unset).
  MetricsProvider* metrics = nullptr;
  // Retries of answers that carry Retry-After (and 429s without):
  // client-go's 10.
  int max_retry_after_retries = 10;
  // Retries of idempotent requests after 5xx or transport errors.
  int max_backoff_retries = 4;
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(5);
  // Used when a 429 has no Retry-After.
  absl::Duration default_retry_after = absl::Seconds(1);
  // How every object in an answer is parsed (Get, List, Watch and writes);
  // e.g. strip_managed_fields for a client that feeds a cache.
  api::ParseOptions parse_options;
};

// A client for the server in `config`. Checks the config (ValidateConfig),
// reads the CA and client certificate files and checks they are PEM
// (errors name the file); does not contact the server.
absl::StatusOr<std::unique_ptr<RestClient>> NewRestClient(
    const Config& config, const ClientOptions& options = {});

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_REST_CLIENT_H_
