#include "runtime/client/rest_client.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/token_bucket.h"
#include "cpprest/base_uri.h"
#include "glog/logging.h"
#include "runtime/client/api_errors.h"
#include "runtime/client/list_reader.h"
#include "runtime/client/request.h"
#include "runtime/client/stream_watcher.h"
#include "runtime/client/transport/auth.h"
#include "runtime/client/transport/http_stream.h"
#include "runtime/client/transport/tls.h"
#include "runtime/client/with_retry.h"

namespace kcr::client {
namespace {

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
  // A 2xx answer to a list or a watch: its body, not yet read.
  std::unique_ptr<transport::HttpStream> stream;
};

// The most of an error answer's body that a list or a watch reads (a
// Status is a few hundred bytes).
constexpr size_t kMaxErrorBody = 1 << 20;

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

class HttpRestClient final : public RestClient {
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
  HttpRestClient(const Config& config, const ClientOptions& options);

  // The request headers every attempt sends.
  std::vector<std::pair<std::string, std::string>> Headers(
      const Request& request, const std::string& authorization) const;
  // One attempt of any other request, on the caller's thread, over a
  // kept-alive connection of the dialer's (transport/http_stream.h) that
  // the end of `ctx` closes.
  Attempt SendPooled(const Context& ctx, const Request& request,
                     const std::string& authorization);
  // One attempt of a list or a watch, on a connection of its own
  // (transport/http_stream.h) that the end of `ctx` closes; a 2xx answer
  // keeps it in Attempt::stream.
  Attempt SendStreamed(const Context& ctx, const Request& request,
                       const std::string& authorization);
  // The Attempt of a request that got no answer because of `cause`.
  void SetTransportError(const Request& request, const std::string& target,
                         std::string cause, Attempt* a) const;
  // Counts one attempt that started at `start` in the metrics.
  void Record(const Request& request, const Attempt& a, absl::Time start);
  // Rate limit, send, retry; a response with any HTTP code, a transport
  // error, or the error of `ctx` once it is done, which closes the
  // connection of the attempt in flight.
  absl::StatusOr<Attempt> Execute(const Context& ctx, const Request& request);
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
  std::unique_ptr<transport::StreamDialer> dialer_;
  std::unique_ptr<RequestResultMetric> result_metric_;
  std::unique_ptr<RequestLatencyMetric> latency_metric_;
};

HttpRestClient::HttpRestClient(const Config& config,
                               const ClientOptions& options)
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

absl::StatusOr<std::unique_ptr<RestClient>> HttpRestClient::New(
    const Config& config, const ClientOptions& options) {
  KCR_RETURN_IF_ERROR(ValidateConfig(config));
  std::unique_ptr<HttpRestClient> c(new HttpRestClient(config, options));
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
  KCR_ASSIGN_OR_RETURN(c->dialer_,
                       transport::StreamDialer::Create(config, c->tls_));
  transport::StreamDialer* dialer = c->dialer_.get();
  // Connections made with the old certificate are not reused.
  c->credentials_ = std::make_unique<Credentials>(
      c->config_, c->tls_, options.clock, [dialer] { dialer->CloseIdle(); });
  return std::unique_ptr<RestClient>(std::move(c));
}

absl::Status HttpRestClient::Sleep(const Context& ctx, absl::Duration d) {
  if (options_.sleep) {
    if (d > absl::ZeroDuration()) options_.sleep(d);
    return ctx.Err();
  }
  return clock_->Sleep(ctx, d);
}

absl::Status HttpRestClient::Throttle(const Context& ctx,
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

std::vector<std::pair<std::string, std::string>> HttpRestClient::Headers(
    const Request& request, const std::string& authorization) const {
  std::vector<std::pair<std::string, std::string>> h;
  h.emplace_back("User-Agent", user_agent_);
  h.emplace_back("Accept", request.accept);
  if (!authorization.empty()) h.emplace_back("Authorization", authorization);
  if (!config_.impersonate.empty())
    h.emplace_back("Impersonate-User", config_.impersonate);
  for (const auto& g : config_.impersonate_groups)
    h.emplace_back("Impersonate-Group", g);
  if (!sni_host_.empty()) h.emplace_back("Host", sni_host_);
  return h;
}

void HttpRestClient::SetTransportError(const Request& request,
                                       const std::string& target,
                                       std::string cause, Attempt* a) const {
  if (absl::StrContains(cause, "certificate verify failed")) {
    a->permanent = true;
    a->transport = absl::UnavailableError(absl::StrCat(
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
    a->transport = absl::UnavailableError(
        absl::StrCat("TLS handshake with ", config_.host, " failed: ", cause));
  } else {
    a->transport = absl::UnavailableError(
        absl::StrCat(request.method, " ", config_.host, target, ": ", cause));
  }
}

void HttpRestClient::Record(const Request& request, const Attempt& a,
                            absl::Time start) {
  if (result_metric_ != nullptr) {
    result_metric_->Increment(
        a.transport.ok() ? absl::StrCat(a.code) : "<error>", request.method,
        host_label_);
  }
  if (latency_metric_ != nullptr) {
    latency_metric_->Observe(request.method, host_label_,
                             clock_->Now() - start);
  }
}

Attempt HttpRestClient::SendPooled(const Context& ctx, const Request& request,
                                   const std::string& authorization) {
  Attempt a;
  const std::string target = request.Target();
  const absl::Time start = clock_->Now();
  transport::StreamRequest send;
  send.method = request.method;
  send.target = target;
  send.headers = Headers(request, authorization);
  if (!request.content_type.empty()) {
    send.headers.emplace_back("Content-Type", request.content_type);
  }
  send.timeout = SharedClientTimeout(config_);
  send.body = request.body;
  while (true) {
    absl::StatusOr<std::unique_ptr<transport::HttpStream>> stream =
        dialer_->ReuseOrNewStream();
    if (!stream.ok()) {
      a.permanent = true;
      a.transport = stream.status();
      break;
    }
    transport::HttpStream* s = stream->get();
    absl::Status sent;
    std::string body;
    {
      Context::DoneCallback cancel_on_done = ctx.OnDone([s] { s->Cancel(); });
      sent = s->Start(send);
      if (sent.ok()) {
        absl::StatusOr<std::string> read =
            s->ReadAll(std::numeric_limits<size_t>::max());
        if (read.ok()) {
          body = *std::move(read);
        } else {
          sent = read.status();
        }
      }
    }
    // A kept connection the server had closed while it was idle: sent
    // again on another when none of the request went out, or when it is
    // idempotent (Go's transport's rule; a POST or PATCH that may have
    // reached the server is the caller's to retry). Each such retry uses
    // up an idle connection, so this ends.
    if (!sent.ok() && s->FailedOnStaleConnection() &&
        (request.idempotent || !s->WroteRequest())) {
      continue;
    }
    if (!sent.ok()) {
      SetTransportError(request, target, std::string(sent.message()), &a);
      break;
    }
    a.code = s->status_code();
    a.retry_after = s->Header("Retry-After");
    a.body = std::move(body);
    dialer_->Release(*std::move(stream));
    break;
  }
  Record(request, a, start);
  return a;
}

Attempt HttpRestClient::SendStreamed(const Context& ctx, const Request& request,
                                     const std::string& authorization) {
  Attempt a;
  const std::string target = request.Target();
  const absl::Time start = clock_->Now();
  absl::StatusOr<std::unique_ptr<transport::HttpStream>> stream =
      dialer_->NewStream();
  if (!stream.ok()) {
    a.permanent = true;
    a.transport = stream.status();
    Record(request, a, start);
    return a;
  }
  transport::StreamRequest send;
  send.method = request.method;
  send.target = target;
  send.headers = Headers(request, authorization);
  send.timeout =
      request.watch ? request.watch_timeout : SharedClientTimeout(config_);
  transport::HttpStream* s = stream->get();
  absl::Status started;
  {
    // Only until the answer's head: then the body's reader takes over.
    Context::DoneCallback cancel_on_done = ctx.OnDone([s] { s->Cancel(); });
    started = s->Start(send);
    a.code = s->status_code();
    if (started.ok() && (a.code < 200 || a.code > 299)) {
      absl::StatusOr<std::string> body = s->ReadAll(kMaxErrorBody);
      if (body.ok()) {
        a.body = *std::move(body);
      } else {
        started = body.status();
      }
    }
  }
  if (!started.ok()) {
    a.code = 0;
    SetTransportError(request, target, std::string(started.message()), &a);
  } else {
    a.retry_after = s->Header("Retry-After");
    if (a.code >= 200 && a.code <= 299) a.stream = *std::move(stream);
  }
  Record(request, a, start);
  return a;
}

absl::StatusOr<Attempt> HttpRestClient::Execute(const Context& ctx,
                                                const Request& request) {
  const bool streamed = request.watch || request.stream_body;
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
    Attempt a = streamed ? SendStreamed(ctx, request, authorization)
                         : SendPooled(ctx, request, authorization);
    // Whatever the attempt says (a closed connection, a half-read body), a
    // call whose context ended reports that.
    if (ctx.done()) return ended();
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

absl::StatusOr<std::string> HttpRestClient::Call(const Context& ctx,
                                                 const Request& request) {
  KCR_ASSIGN_OR_RETURN(Attempt a, Execute(ctx, request));
  if (a.code < 200 || a.code > 299)
    return StatusFromResponse(a.code, a.body, a.retry_after);
  return std::move(a.body);
}

absl::StatusOr<api::ObjectPtr> HttpRestClient::CallForObject(
    const Context& ctx, const Request& request) {
  KCR_ASSIGN_OR_RETURN(std::string body, Call(ctx, request));
  return DecodeObject(body, options_.parse_options);
}

absl::StatusOr<ListMeta> HttpRestClient::ListEach(
    const Context& ctx, const Resource& resource, const ListOptions& options,
    const std::function<absl::Status(api::ObjectPtr)>& on_item) {
  KCR_ASSIGN_OR_RETURN(Request r, ListRequest(resource, options));
  KCR_ASSIGN_OR_RETURN(Attempt a, Execute(ctx, r));
  if (a.code < 200 || a.code > 299)
    return StatusFromResponse(a.code, a.body, a.retry_after);
  std::unique_ptr<BodyReader> body = std::move(a.stream);
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

absl::StatusOr<std::unique_ptr<WatchStream>> HttpRestClient::Watch(
    const Context& ctx, const Resource& resource, const ListOptions& options) {
  KCR_ASSIGN_OR_RETURN(Request r, WatchRequest(resource, options));
  KCR_ASSIGN_OR_RETURN(Attempt a, Execute(ctx, r));
  if (a.code < 200 || a.code > 299)
    return StatusFromResponse(a.code, a.body, a.retry_after);
  VLOG(2) << "watch started path=" << r.path;
  return NewStreamWatcher(ctx, std::move(a.stream), options_.parse_options);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RestClient>> NewRestClient(
    const Config& config, const ClientOptions& options) {
  return HttpRestClient::New(config, options);
}

}  // namespace kcr::client
