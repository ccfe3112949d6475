#include "runtime/client/transport/http_client.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <boost/asio/ssl.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "glog/logging.h"
#include "runtime/base/mutex.h"

namespace kcr::client::transport {
namespace {

namespace http = web::http;
using http::client::http_client;

class ResponseBodyReader final : public BodyReader {
 public:
  ResponseBodyReader(std::shared_ptr<http_client> client,
                     http::http_response response,
                     pplx::cancellation_token_source cancel)
      : client_(std::move(client)),
        response_(std::move(response)),
        cancel_(cancel),
        buf_(response_.body().streambuf()) {}

  absl::StatusOr<size_t> Read(char* data, size_t size) override {
    try {
      // Wait for one byte, then take whatever else has arrived.
      auto c = buf_.bumpc().get();
      if (c == std::char_traits<char>::eof()) {
        // The end of the body: clean, or broken (content_ready carries the
        // transport error).
        response_.content_ready().get();
        return 0;
      }
      data[0] = static_cast<char>(c);
      size_t n = 1;
      size_t avail = buf_.in_avail();
      if (avail > 0) {
        n += buf_.getn(reinterpret_cast<uint8_t*>(data) + 1,
                       std::min(avail, size - 1))
                 .get();
      }
      return n;
    } catch (const std::exception& e) {
      return absl::UnavailableError(e.what());
    }
  }

  void Cancel() override { cancel_.cancel(); }

 private:
  std::shared_ptr<http_client> client_;
  http::http_response response_;
  pplx::cancellation_token_source cancel_;
  concurrency::streams::streambuf<uint8_t> buf_;
};

}  // namespace

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

std::unique_ptr<BodyReader> NewResponseBodyReader(
    std::shared_ptr<http_client> client, http::http_response response,
    pplx::cancellation_token_source cancel) {
  return std::make_unique<ResponseBodyReader>(
      std::move(client), std::move(response), std::move(cancel));
}

}  // namespace kcr::client::transport
