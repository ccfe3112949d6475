#include "runtime/client/rest_client.h"

#include <openssl/err.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "runtime/base/mutex.h"
#include "runtime/base/status_macros.h"
#include "runtime/base/token_bucket.h"
#include "runtime/client/api_errors.h"
#include "runtime/client/list_reader.h"
#include "runtime/client/request.h"
#include "runtime/client/stream_watcher.h"
#include "runtime/client/transport/auth.h"
#include "runtime/client/transport/http_client.h"
#include "runtime/client/transport/tls.h"
#include "runtime/client/with_retry.h"

namespace kcr::client {
namespace {

namespace http = web::http;
using http::client::http_client;
using transport::Credentials;
using transport::TlsMaterial;

// What one attempt produced.
struct Attempt {
  absl::Status transport;  // not OK: no response
  // The transport error will not go away by retrying (TLS verification).
  bool permanent = false;
  int code = 0;
  std::string body;
  std::string retry_after;
  // Kept for a streamed body (a watch, a list).
  std::optional<http::http_response> response;
  // The client whose connection carries `response`.
  std::shared_ptr<http_client> client;
  // A list's or a watch's body, which `response` writes into.
  std::shared_ptr<transport::BoundedBody> list_body;
};

// How far cpprestsdk may read a list body ahead of its decoder.
constexpr size_t kListBodyAhead = 1 << 20;
// How far it may read a watch body ahead of the stream's decoder: without
// a bound a consumer slower than the network buffers the whole stream.
constexpr size_t kWatchBodyAhead = 1 << 20;

// The timeout of the shared client: config.timeout, or an hour when it is
// zero (none).
absl::Duration SharedClientTimeout(const Config& config) {
  return config.timeout > absl::ZeroDuration() ? config.timeout
                                               : absl::Hours(1);
}

RetryOptions RetryOptionsOf(const ClientOptions& o) {
  return RetryOptions{
      .max_retry_after_retries = o.max_retry_after_retries,
      .max_backoff_retries = o.max_backoff_retries,
      .initial_backoff = o.initial_backoff,
      .max_backoff = o.max_backoff,
      .default_retry_after = o.default_retry_after,
  };
}

class CppRestClient final : public RestClient {
 public:
  static absl::StatusOr<std::unique_ptr<RestClient>> New(
      const Config& config, const ClientOptions& options);

  absl::StatusOr<api::ObjectPtr> Get(const Context& ctx,
                                     const Resource& resource,
                                     std::string_view name,
                                     const GetOptions& options) override {
    KCR_ASSIGN_OR_RETURN(Request r, GetRequest(resource, name, options));
    return CallForObject(ctx, r);
  }
  absl::StatusOr<ObjectList> List(const Context& ctx, const Resource& resource,
                                  const ListOptions& options) override {
    ObjectList list;
    KCR_ASSIGN_OR_RETURN(
        ListMeta meta,
        ListEach(ctx, resource, options, [&list](api::ObjectPtr item) {
          list.items.push_back(std::move(item));
          return absl::OkStatus();
        }));
    list.api_version = std::move(meta.api_version);
    list.kind = std::move(meta.kind);
    list.resource_version = std::move(meta.resource_version);
    list.continue_token = std::move(meta.continue_token);
    list.remaining_item_count = meta.remaining_item_count;
    return list;
  }
  absl::StatusOr<ListMeta> ListEach(
      const Context& ctx, const Resource& resource, const ListOptions& options,
      const std::function<absl::Status(api::ObjectPtr)>& on_item) override;
  absl::StatusOr<std::unique_ptr<WatchStream>> Watch(
      const Context& ctx, const Resource& resource,
      const ListOptions& options) override;
  absl::StatusOr<api::ObjectPtr> Create(const Context& ctx,
                                        const Resource& resource,
                                        const api::Object& object,
                                        const CreateOptions& options) override {
    KCR_ASSIGN_OR_RETURN(Request r, CreateRequest(resource, object, options));
    return CallForObject(ctx, r);
  }
  absl::StatusOr<api::ObjectPtr> Update(const Context& ctx,
                                        const Resource& resource,
                                        const api::Object& object,
                                        const UpdateOptions& options) override {
    KCR_ASSIGN_OR_RETURN(Request r,
                         UpdateRequest(resource, object, options, ""));
    return CallForObject(ctx, r);
  }
  absl::StatusOr<api::ObjectPtr> UpdateStatus(
      const Context& ctx, const Resource& resource, const api::Object& object,
      const UpdateOptions& options) override {
    KCR_ASSIGN_OR_RETURN(Request r,
                         UpdateRequest(resource, object, options, "status"));
    return CallForObject(ctx, r);
  }
  absl::StatusOr<api::ObjectPtr> Patch(const Context& ctx,
                                       const Resource& resource,
                                       std::string_view name, PatchType type,
                                       std::string_view patch,
                                       const PatchOptions& options,
                                       std::string_view subresource) override {
    KCR_ASSIGN_OR_RETURN(Request r, PatchRequest(resource, name, type, patch,
                                                 options, subresource));
    return CallForObject(ctx, r);
  }
  absl::Status Delete(const Context& ctx, const Resource& resource,
                      std::string_view name,
                      const DeleteOptions& options) override {
    KCR_ASSIGN_OR_RETURN(Request r, DeleteRequest(resource, name, options));
    return Call(ctx, r).status();
  }
  absl::Status DeleteCollection(const Context& ctx, const Resource& resource,
                                const DeleteOptions& options,
                                const ListOptions& list_options) override {
    KCR_ASSIGN_OR_RETURN(
        Request r, DeleteCollectionRequest(resource, options, list_options));
    return Call(ctx, r).status();
  }
  absl::StatusOr<std::string> GetRaw(const Context& ctx,
                                     std::string_view path) override {
    KCR_ASSIGN_OR_RETURN(Request r, GetRawRequest(path));
    return Call(ctx, r);
  }

 private:
  CppRestClient(const Config& config, const ClientOptions& options);

  // The client to send one attempt of `request` on: the shared one, or a
  // new one for a watch, whose connection its stream keeps.
  std::shared_ptr<http_client> ClientFor(const Request& request);
  // Starts a new connection pool (after the client certificate changed).
  void RenewSharedClient();
  Attempt SendOnce(http_client& client, const Request& request,
                   const pplx::cancellation_token& cancel,
                   const std::string& authorization);
  // Rate limit, send, retry; a response with any HTTP code, a transport
  // error, or the error of `ctx` once it is done. Cancelling `cancel`
  // closes the connection, also while its body is being read; a watch
  // passes the source its stream keeps, every other call gets its own.
  absl::StatusOr<Attempt> Execute(const Context& ctx, const Request& request,
                                  pplx::cancellation_token_source cancel =
                                      pplx::cancellation_token_source());
  // Waits for the rate limiter (when there is one).
  absl::Status Throttle(const Context& ctx, const Request& request);
  // Waits `d` before a retry, or until `ctx` ends.
  absl::Status Sleep(const Context& ctx, absl::Duration d);
  // Execute and turn non-2xx into the server's Status.
  absl::StatusOr<std::string> Call(const Context& ctx, const Request& request);
  absl::StatusOr<api::ObjectPtr> CallForObject(const Context& ctx,
                                               const Request& request);

  const Config config_;
  const ClientOptions options_;
  const Clock* const clock_;
  std::string host_label_;  // host:port for metrics
  std::string sni_host_;    // Host header for tls-server-name
  std::string user_agent_;
  std::shared_ptr<TlsMaterial> tls_;
  // Null when Config::qps is negative: no client-side throttling.
  std::unique_ptr<TokenBucket> limiter_;
  std::unique_ptr<Credentials> credentials_;
  std::unique_ptr<RequestResultMetric> result_metric_;
  std::unique_ptr<RequestLatencyMetric> latency_metric_;
  // Last: destroyed first, before the state its callbacks use. Replaced
  // when the client certificate changes; requests in flight keep theirs.
  Mutex http_mu_;
  std::shared_ptr<http_client> http_ ABSL_GUARDED_BY(http_mu_);
};

CppRestClient::CppRestClient(const Config& config, const ClientOptions& options)
    : config_(config),
      options_(options),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      user_agent_(config.user_agent.empty() ? DefaultUserAgent()
                                            : config.user_agent),
      tls_(std::make_shared<TlsMaterial>()),
      limiter_(config.qps < 0
                   ? nullptr
                   : std::make_unique<TokenBucket>(
                         config.qps > 0 ? config.qps : 5,
                         config.burst > 0 ? config.burst : 10, options.clock)) {
  MetricsProvider* metrics =
      options.metrics != nullptr ? options.metrics : GlobalMetricsProvider();
  if (metrics != nullptr) {
    result_metric_ = metrics->NewRequestResultMetric();
    latency_metric_ = metrics->NewRequestLatencyMetric();
  }
}

absl::StatusOr<std::unique_ptr<RestClient>> CppRestClient::New(
    const Config& config, const ClientOptions& options) {
  KCR_RETURN_IF_ERROR(ValidateConfig(config));
  std::unique_ptr<CppRestClient> c(new CppRestClient(config, options));
  web::uri uri;
  try {
    uri = web::uri(utility::conversions::to_string_t(config.host));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "config: host \"", config.host, "\" is not a URL: ", e.what()));
  }
  if (uri.scheme() != "https" && uri.scheme() != "http") {
    return absl::InvalidArgumentError(
        absl::StrCat("config: host \"", config.host,
                     "\" must start with https:// or http://"));
  }
  c->host_label_ = absl::StrCat(
      uri.host(), ":",
      uri.port() > 0 ? uri.port() : (uri.scheme() == "https" ? 443 : 80));
  if (uri.scheme() == "https" && !config.tls.server_name.empty()) {
    c->sni_host_ = config.tls.server_name;
  }
  KCR_RETURN_IF_ERROR(transport::LoadTlsMaterial(config.tls, c->tls_.get()));
  CppRestClient* self = c.get();
  c->credentials_ =
      std::make_unique<Credentials>(c->config_, c->tls_, options.clock,
                                    [self] { self->RenewSharedClient(); });
  {
    MutexLock lock(&c->http_mu_);
    c->http_ =
        transport::NewHttpClient(config, SharedClientTimeout(config), c->tls_);
  }
  return std::unique_ptr<RestClient>(std::move(c));
}

void CppRestClient::RenewSharedClient() {
  std::shared_ptr<http_client> fresh =
      transport::NewHttpClient(config_, SharedClientTimeout(config_), tls_);
  MutexLock lock(&http_mu_);
  http_ = std::move(fresh);
}

std::shared_ptr<http_client> CppRestClient::ClientFor(const Request& request) {
  if (request.watch) {
    return transport::NewHttpClient(config_, request.watch_timeout, tls_);
  }
  MutexLock lock(&http_mu_);
  return http_;
}

absl::Status CppRestClient::Sleep(const Context& ctx, absl::Duration d) {
  if (options_.sleep) {
    if (d > absl::ZeroDuration()) options_.sleep(d);
    return ctx.Err();
  }
  return clock_->Sleep(ctx, d);
}

absl::Status CppRestClient::Throttle(const Context& ctx,
                                     const Request& request) {
  if (limiter_ == nullptr) return absl::OkStatus();
  absl::Duration waited;
  if (options_.sleep) {
    waited = limiter_->Reserve();
    KCR_RETURN_IF_ERROR(Sleep(ctx, waited));
  } else {
    const absl::Time start = clock_->Now();
    KCR_RETURN_IF_ERROR(limiter_->Wait(ctx));
    waited = clock_->Now() - start;
  }
  if (waited > absl::Seconds(1)) {
    LOG(INFO) << "waited " << waited
              << " due to client-side throttling, not priority "
              << "and fairness, request: " << request.method << ":"
              << request.path;
  }
  return absl::OkStatus();
}

Attempt CppRestClient::SendOnce(http_client& client, const Request& request,
                                const pplx::cancellation_token& cancel,
                                const std::string& authorization) {
  Attempt a;
  const std::string target = request.Target();
  const absl::Time start = clock_->Now();
  try {
    http::http_request req(request.method);
    req.set_request_uri(utility::conversions::to_string_t(target));
    auto& h = req.headers();
    h.add("User-Agent", user_agent_);
    h.add("Accept", request.accept);
    if (!authorization.empty()) h.add("Authorization", authorization);
    if (!config_.impersonate.empty())
      h.add("Impersonate-User", config_.impersonate);
    for (const auto& g : config_.impersonate_groups)
      h.add("Impersonate-Group", g);
    if (!sni_host_.empty()) h.add("Host", sni_host_);
    std::shared_ptr<transport::BoundedBody> list_body;
    if (request.stream_body || request.watch) {
      list_body = transport::StreamResponseBody(
          req, request.watch ? kWatchBodyAhead : kListBodyAhead);
    }
    if (!request.body.empty() || !request.content_type.empty()) {
      req.set_body(request.body, request.content_type);
      h.set_content_type(request.content_type);
    }
    http::http_response resp = client.request(req, cancel).get();
    a.code = resp.status_code();
    auto ra = resp.headers().find("Retry-After");
    if (ra != resp.headers().end()) a.retry_after = ra->second;
    const bool success = a.code >= 200 && a.code <= 299;
    if (list_body != nullptr) {
      transport::CloseBodyWhenComplete(resp, list_body);
      if (success) {
        a.response = resp;
        a.list_body = std::move(list_body);
      } else {
        absl::StatusOr<std::string> body =
            transport::ReadWholeBody(resp, std::move(list_body));
        if (body.ok()) {
          a.body = *std::move(body);
        } else {
          a.transport = absl::UnavailableError(
              absl::StrCat(request.method, " ", config_.host, target, ": ",
                           body.status().message()));
        }
      }
    } else {
      a.body = resp.extract_utf8string(true).get();
    }
  } catch (const http::http_exception& e) {
    std::string cause = e.what();
    std::string detail = e.error_code().message();
    // TLS failures carry OpenSSL's packed error code, which the generic
    // category prints as "Unknown error N".
    if (absl::StartsWith(detail, "Unknown error") &&
        e.error_code().value() > 0) {
      const char* reason = ERR_reason_error_string(
          static_cast<unsigned long>(e.error_code().value()));
      if (reason != nullptr) detail = reason;
    }
    if (!detail.empty() && cause.find(detail) == std::string::npos) {
      absl::StrAppend(&cause, ": ", detail);
    }
    if (absl::StrContains(cause, "certificate verify failed")) {
      a.permanent = true;
      a.transport = absl::UnavailableError(absl::StrCat(
          "TLS handshake with ", config_.host,
          " failed: the server's certificate is not ", "trusted (",
          config_.tls.ca_file.empty() && config_.tls.ca_data.empty()
              ? "system certificate store"
              : "only the configured certificate authority is trusted",
          ", name checked: ",
          config_.tls.server_name.empty() ? "the host in the URL"
                                          : config_.tls.server_name,
          "): ", cause));
    } else if (absl::StrContains(cause, "handshake")) {
      a.transport = absl::UnavailableError(absl::StrCat(
          "TLS handshake with ", config_.host, " failed: ", cause));
    } else {
      a.transport = absl::UnavailableError(
          absl::StrCat(request.method, " ", config_.host, target, ": ", cause));
    }
  } catch (const std::exception& e) {
    a.transport = absl::UnavailableError(absl::StrCat(
        request.method, " ", config_.host, target, ": ", e.what()));
  }
  if (result_metric_ != nullptr) {
    result_metric_->Increment(
        a.transport.ok() ? absl::StrCat(a.code) : "<error>", request.method,
        host_label_);
  }
  if (latency_metric_ != nullptr) {
    latency_metric_->Observe(request.method, host_label_,
                             clock_->Now() - start);
  }
  return a;
}

absl::StatusOr<Attempt> CppRestClient::Execute(
    const Context& ctx, const Request& request,
    pplx::cancellation_token_source cancel) {
  // The context's end closes the connection of the attempt in flight (and
  // of a watch's stream, until the stream takes over).
  Context::DoneCallback cancel_on_done =
      ctx.OnDone([cancel]() mutable { cancel.cancel(); });
  // The caller's error, saying what was cut short.
  auto ended = [&]() {
    const absl::Status err = ctx.Err();
    return absl::Status(
        err.code(),
        absl::StrCat(request.method, " ", request.path, ": ", err.message()));
  };
  auto wait = [&](absl::Duration d) -> absl::Status {
    absl::Status slept = Sleep(ctx, d);
    return slept.ok() ? slept : ended();
  };
  WithRetry retry(RetryOptionsOf(options_));
  bool auth_retried = false;
  while (true) {
    if (ctx.done()) return ended();
    if (absl::Status throttled = Throttle(ctx, request); !throttled.ok()) {
      if (ctx.done()) return ended();
      // The limiter's DeadlineExceeded: the wait would outlast the deadline.
      return absl::Status(throttled.code(),
                          absl::StrCat(request.method, " ", request.path, ": ",
                                       throttled.message()));
    }
    KCR_ASSIGN_OR_RETURN(std::string authorization,
                         credentials_->Authorization());
    const uint64_t cert_generation = credentials_->CertGeneration();
    const absl::Time start = clock_->Now();
    std::shared_ptr<http_client> client = ClientFor(request);
    Attempt a = SendOnce(*client, request, cancel.get_token(), authorization);
    // Whatever the attempt says (a closed connection, a half-read body), a
    // call whose context ended reports that.
    if (ctx.done()) return ended();
    if (request.watch || request.stream_body) a.client = std::move(client);
    if (!a.transport.ok()) {
      std::optional<absl::Duration> delay = retry.AfterTransportError(
          a.transport, request.idempotent, a.permanent);
      if (!delay.has_value()) return a.transport;
      KCR_RETURN_IF_ERROR(wait(*delay));
      continue;
    }
    if (a.code == 401 && !auth_retried && credentials_->Refreshable()) {
      auth_retried = true;
      credentials_->Invalidate(start);
      auto fresh = credentials_->Authorization();
      if (fresh.ok() && (*fresh != authorization ||
                         credentials_->CertGeneration() != cert_generation)) {
        VLOG(2) << "401: retrying with a refreshed credential";
        continue;
      }
      return a;
    }
    std::optional<absl::Duration> delay =
        retry.AfterResponse(a.code, a.retry_after, request.idempotent);
    if (!delay.has_value()) return a;
    KCR_RETURN_IF_ERROR(wait(*delay));
  }
}

absl::StatusOr<std::string> CppRestClient::Call(const Context& ctx,
                                                const Request& request) {
  KCR_ASSIGN_OR_RETURN(Attempt a, Execute(ctx, request));
  if (a.code < 200 || a.code > 299)
    return StatusFromResponse(a.code, a.body, a.retry_after);
  return std::move(a.body);
}

absl::StatusOr<api::ObjectPtr> CppRestClient::CallForObject(
    const Context& ctx, const Request& request) {
  KCR_ASSIGN_OR_RETURN(std::string body, Call(ctx, request));
  return DecodeObject(body, options_.parse_options);
}

absl::StatusOr<ListMeta> CppRestClient::ListEach(
    const Context& ctx, const Resource& resource, const ListOptions& options,
    const std::function<absl::Status(api::ObjectPtr)>& on_item) {
  KCR_ASSIGN_OR_RETURN(Request r, ListRequest(resource, options));
  // Shared with the body reader: cancelling it closes the connection while
  // the body is read.
  pplx::cancellation_token_source cancel;
  KCR_ASSIGN_OR_RETURN(Attempt a, Execute(ctx, r, cancel));
  if (a.code < 200 || a.code > 299)
    return StatusFromResponse(a.code, a.body, a.retry_after);
  std::unique_ptr<BodyReader> body = transport::NewBoundedBodyReader(
      std::move(a.client), std::move(*a.response), std::move(a.list_body),
      cancel);
  ListReaderOptions reader_options;
  reader_options.decoder.parse_options = options_.parse_options;
  bool item_failed = false;
  absl::StatusOr<ListMeta> meta =
      ReadList(ctx, *body, reader_options, [&](api::ObjectPtr item) {
        absl::Status s = on_item(std::move(item));
        item_failed = !s.ok();
        return s;
      });
  if (!meta.ok() && !item_failed) {
    const absl::Status& s = meta.status();
    return absl::Status(s.code(),
                        absl::StrCat(r.method, " ", r.path, ": ", s.message()));
  }
  return meta;
}

absl::StatusOr<std::unique_ptr<WatchStream>> CppRestClient::Watch(
    const Context& ctx, const Resource& resource, const ListOptions& options) {
  KCR_ASSIGN_OR_RETURN(Request r, WatchRequest(resource, options));
  // Shared with the stream, whose Stop closes the connection with it.
  pplx::cancellation_token_source cancel;
  KCR_ASSIGN_OR_RETURN(Attempt a, Execute(ctx, r, cancel));
  if (a.code < 200 || a.code > 299)
    return StatusFromResponse(a.code, a.body, a.retry_after);
  VLOG(2) << "watch started path=" << r.path;
  return NewStreamWatcher(ctx,
                          transport::NewBoundedBodyReader(
                              std::move(a.client), std::move(*a.response),
                              std::move(a.list_body), cancel),
                          options_.parse_options);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RestClient>> NewRestClient(
    const Config& config, const ClientOptions& options) {
  return CppRestClient::New(config, options);
}

}  // namespace kcr::client
