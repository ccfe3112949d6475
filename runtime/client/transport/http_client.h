// The cpprestsdk side of the REST client's transport: the http_client it
// sends every request but lists and watches on (those go on HttpStream,
// transport/http_stream.h), configured from the Config (timeout,
// certificate verification, the TLS material at each handshake).
//
// This header includes cpprestsdk, and so Boost.Asio, which compile
// slowly: only .cc files that talk to cpprestsdk include it, never another
// header. Private to runtime/client.
#ifndef KCR_RUNTIME_CLIENT_TRANSPORT_HTTP_CLIENT_H_
#define KCR_RUNTIME_CLIENT_TRANSPORT_HTTP_CLIENT_H_

#include <cpprest/http_client.h>

#include <memory>

#include "absl/time/time.h"
#include "runtime/client/rest_config.h"
#include "runtime/client/transport/tls.h"

namespace kcr::client::transport {

// A client for config.host whose requests time out after `timeout`, which
// verifies the server's certificate unless config.tls.insecure, trusting
// only tls->ca_pem when set, and presents the client certificate in `tls`
// at each new connection's handshake.
std::unique_ptr<web::http::client::http_client> NewHttpClient(
    const Config& config, absl::Duration timeout,
    std::shared_ptr<TlsMaterial> tls);

}  // namespace kcr::client::transport

#endif  // KCR_RUNTIME_CLIENT_TRANSPORT_HTTP_CLIENT_H_
