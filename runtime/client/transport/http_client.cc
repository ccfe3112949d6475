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

// Reads a BoundedBody, telling it what was taken.
class BoundedBodyReader final : public BodyReader {
 public:
  BoundedBodyReader(std::shared_ptr<http_client> client,
                    http::http_response response,
                    std::shared_ptr<BoundedBody> body,
                    pplx::cancellation_token_source cancel)
      : client_(std::move(client)),
        response_(std::move(response)),
        body_(std::move(body)),
        cancel_(cancel) {}

  ~BoundedBodyReader() override {
    // Cut short: end the request rather than let it read on into a body
    // nobody reads.
    if (!at_end_) Cancel();
  }

  absl::StatusOr<size_t> Read(char* data, size_t size) override {
    try {
      // Wait for one byte, then take whatever else has arrived.
      auto c = body_->bumpc().get();
      if (c == std::char_traits<char>::eof()) {
        at_end_ = true;
        response_.content_ready().get();  // throws if the body broke
        return 0;
      }
      data[0] = static_cast<char>(c);
      size_t n = 1;
      const size_t avail = body_->in_avail();
      if (avail > 0) {
        n += body_
                 ->getn(reinterpret_cast<uint8_t*>(data) + 1,
                        std::min(avail, size - 1))
                 .get();
      }
      body_->Drained(n);
      return n;
    } catch (const std::exception& e) {
      return absl::UnavailableError(e.what());
    }
  }

  void Cancel() override {
    cancel_.cancel();
    body_->Abort();
  }

 private:
  std::shared_ptr<http_client> client_;
  http::http_response response_;
  std::shared_ptr<BoundedBody> body_;
  pplx::cancellation_token_source cancel_;
  bool at_end_ = false;  // the reading thread's
};

}  // namespace

BoundedBody::BoundedBody(size_t limit) : Base(64 << 10), limit_(limit) {}

pplx::task<size_t> BoundedBody::_putn(const uint8_t* ptr, size_t count) {
  MutexLock lock(&mu_);
  if (aborted_) return pplx::task_from_result(count);
  // Base::_putn copies at once (a completed task).
  pplx::task<size_t> written = Base::_putn(ptr, count);
  unread_ += count;
  if (unread_ <= limit_) return written;
  waiting_ = std::make_unique<pplx::task_completion_event<size_t>>();
  waiting_count_ = count;
  return pplx::create_task(*waiting_);
}

void BoundedBody::Drained(size_t n) {
  std::unique_ptr<pplx::task_completion_event<size_t>> wake;
  size_t count = 0;
  {
    MutexLock lock(&mu_);
    unread_ -= std::min(n, unread_);
    if (waiting_ == nullptr || unread_ > limit_ / 2) return;
    wake = std::move(waiting_);
    count = waiting_count_;
  }
  // Outside mu_: the write's continuation may run here and write again.
  wake->set(count);
}

void BoundedBody::Abort() {
  std::unique_ptr<pplx::task_completion_event<size_t>> wake;
  size_t count = 0;
  {
    MutexLock lock(&mu_);
    aborted_ = true;
    wake = std::move(waiting_);
    count = waiting_count_;
  }
  if (wake != nullptr) wake->set(count);
}

std::shared_ptr<BoundedBody> StreamResponseBody(http::http_request& request,
                                                size_t limit) {
  auto body = std::make_shared<BoundedBody>(limit);
  request.set_response_stream(
      concurrency::streams::streambuf<uint8_t>(body).create_ostream());
  return body;
}

void CloseBodyWhenComplete(http::http_response response,
                           std::shared_ptr<BoundedBody> body) {
  response.content_ready().then([body](pplx::task<http::http_response> done) {
    try {
      done.get();
      body->close(std::ios_base::out);
    } catch (...) {
      body->close(std::ios_base::out, std::current_exception());
    }
  });
}

absl::StatusOr<std::string> ReadWholeBody(http::http_response response,
                                          std::shared_ptr<BoundedBody> body) {
  BoundedBodyReader reader(nullptr, std::move(response), std::move(body),
                           pplx::cancellation_token_source());
  std::string out;
  char data[16 << 10];
  while (true) {
    absl::StatusOr<size_t> n = reader.Read(data, sizeof(data));
    if (!n.ok()) return n.status();
    if (*n == 0) return out;
    out.append(data, *n);
  }
}

std::unique_ptr<BodyReader> NewBoundedBodyReader(
    std::shared_ptr<http_client> client, http::http_response response,
    std::shared_ptr<BoundedBody> body, pplx::cancellation_token_source cancel) {
  return std::make_unique<BoundedBodyReader>(
      std::move(client), std::move(response), std::move(body),
      std::move(cancel));
}

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
