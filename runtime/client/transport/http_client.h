// The cpprestsdk side of the REST client's transport: the http_client it
// sends requests on, configured from the Config (timeout, certificate
// verification, the TLS material at each handshake), and the body of a
// streamed response (a list, a watch) as a BodyReader with flow control.
//
// This header includes cpprestsdk, and so Boost.Asio, which compile
// slowly: only .cc files that talk to cpprestsdk include it, never another
// header. Private to runtime/client.
#ifndef KCR_RUNTIME_CLIENT_TRANSPORT_HTTP_CLIENT_H_
#define KCR_RUNTIME_CLIENT_TRANSPORT_HTTP_CLIENT_H_

#include <cpprest/http_client.h>
#include <cpprest/producerconsumerstream.h>

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "runtime/base/mutex.h"
#include "runtime/client/rest_config.h"
#include "runtime/client/stream_watcher.h"
#include "runtime/client/transport/tls.h"

namespace kcr::client::transport {

// A client for config.host whose requests time out after `timeout`, which
// verifies the server's certificate unless config.tls.insecure, trusting
// only tls->ca_pem when set, and presents the client certificate in `tls`
// at each new connection's handshake.
std::unique_ptr<web::http::client::http_client> NewHttpClient(
    const Config& config, absl::Duration timeout,
    std::shared_ptr<TlsMaterial> tls);

// A response body buffer with flow control, for lists and watches:
// cpprestsdk writes the body into it as the socket delivers, but a write
// that finds more than `limit` bytes unread completes only once the reader
// has taken them down to limit / 2. Until then cpprestsdk reads no
// further, so the socket's receive window fills and TCP slows the server:
// a reader slower than the network bounds memory instead of buffering the
// whole body (cpprestsdk's own response buffer has no bound).
class BoundedBody final
    : public concurrency::streams::details::basic_producer_consumer_buffer<
          uint8_t> {
 public:
  explicit BoundedBody(size_t limit);

  // The reader took `n` bytes: may let a waiting write complete.
  void Drained(size_t n);
  // Nothing more will be read: a waiting write completes, later ones are
  // dropped, so the connection's task can end.
  void Abort();

 protected:
  pplx::task<size_t> _putn(const uint8_t* ptr, size_t count) override;

 private:
  using Base =
      concurrency::streams::details::basic_producer_consumer_buffer<uint8_t>;
  const size_t limit_;
  Mutex mu_;
  size_t unread_ ABSL_GUARDED_BY(mu_) = 0;
  bool aborted_ ABSL_GUARDED_BY(mu_) = false;
  // A write waiting for the reader, completed with its byte count.
  std::unique_ptr<pplx::task_completion_event<size_t>> waiting_
      ABSL_GUARDED_BY(mu_);
  size_t waiting_count_ ABSL_GUARDED_BY(mu_) = 0;
};

// Makes `request` write its response body into `body` (a new one).
std::shared_ptr<BoundedBody> StreamResponseBody(
    web::http::http_request& request, size_t limit);

// After the headers of `response` arrived: closes `body` for writing when
// the response completes (it is not cpprestsdk's own buffer, so cpprestsdk
// does not close it).
void CloseBodyWhenComplete(web::http::http_response response,
                           std::shared_ptr<BoundedBody> body);

// The whole of `body` (a short answer: an error's Status).
absl::StatusOr<std::string> ReadWholeBody(web::http::http_response response,
                                          std::shared_ptr<BoundedBody> body);

// The body of `response`, streamed into `body` on a connection of `client`;
// `cancel` closes that connection.
std::unique_ptr<BodyReader> NewBoundedBodyReader(
    std::shared_ptr<web::http::client::http_client> client,
    web::http::http_response response, std::shared_ptr<BoundedBody> body,
    pplx::cancellation_token_source cancel);

}  // namespace kcr::client::transport

#endif  // KCR_RUNTIME_CLIENT_TRANSPORT_HTTP_CLIENT_H_
