#include "runtime/client/transport/http_client.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ssl.hpp>
#include <chrono>
#include <string>
#include <utility>

#include "base/mutex.h"
#include "glog/logging.h"

namespace kcr::client::transport {

namespace http = web::http;
using http::client::http_client;

std::unique_ptr<http_client> NewHttpClient(const Config& config,
                                           absl::Duration timeout,
                                           std::shared_ptr<TlsMaterial> tls) {
  http::client::http_client_config cfg;
  cfg.set_timeout(
      std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout)));
  cfg.set_validate_certificates(!config.tls.insecure);
  cfg.set_ssl_context_callback([tls](boost::asio::ssl::context& ctx) {
    boost::system::error_code ec;
    if (!tls->ca_pem.empty()) {
      // Trust only the configured CA, as client-go does.
      SSL_CTX_set_cert_store(ctx.native_handle(), X509_STORE_new());
      ctx.add_certificate_authority(boost::asio::buffer(tls->ca_pem), ec);
      if (ec) LOG(WARNING) << "cannot use the configured CA: " << ec.message();
    }
    MutexLock lock(&tls->mu);
    if (!tls->cert_pem.empty()) {
      ctx.use_certificate_chain(boost::asio::buffer(tls->cert_pem), ec);
      if (ec)
        LOG(WARNING) << "cannot use the client certificate: " << ec.message();
      ctx.use_private_key(boost::asio::buffer(tls->key_pem),
                          boost::asio::ssl::context::pem, ec);
      if (ec) LOG(WARNING) << "cannot use the client key: " << ec.message();
    }
  });
  return std::make_unique<http_client>(
      utility::conversions::to_string_t(config.host), cfg);
}

}  // namespace kcr::client::transport
