#include "runtime/client/rest_client.h"

#include <cpprest/http_client.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ssl.hpp>
#include <chrono>
#include <deque>
#include <fstream>
#include <iterator>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/json/json_util.h"
#include "api/meta/api_path.h"
#include "glog/logging.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "runtime/base/mutex.h"
#include "runtime/base/status_macros.h"
#include "runtime/base/string_view.h"
#include "runtime/base/token_bucket.h"
#include "runtime/client/api_errors.h"
#include "runtime/client/exec_credential.h"
#include "runtime/client/token_source.h"
#include "runtime/client/watch_decoder.h"

namespace kcr::client {
namespace {

namespace http = web::http;
using http::client::http_client;
using http::client::http_client_config;

using Query = std::vector<std::pair<std::string, std::string>>;

// Percent-encodes a query component (everything but RFC 3986 unreserved).
std::string EscapeQuery(std::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string PathWithQuery(const std::string& path, const Query& query) {
  std::string out = path;
  char sep = '?';
  for (const auto& [k, v] : query) {
    out += sep;
    out += EscapeQuery(k);
    out += '=';
    out += EscapeQuery(v);
    sep = '&';
  }
  return out;
}

absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", path, ": cannot be read"));
  }
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

bool HasPemCertificate(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return false;
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (cert == nullptr) return false;
  X509_free(cert);
  return true;
}

bool HasPemKey(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return false;
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (key == nullptr) return false;
  EVP_PKEY_free(key);
  return true;
}

// PEM from data or file, checked by `check`.
absl::StatusOr<std::string> LoadPem(const std::string& data,
                                    const std::string& file, const char* what,
                                    bool (*check)(const std::string&)) {
  std::string pem = data;
  std::string source = "data";
  if (pem.empty() && !file.empty()) {
    KCR_ASSIGN_OR_RETURN(pem, ReadFile(file, what));
    source = file;
  }
  if (pem.empty()) return pem;
  if (!check(pem)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", source, ": no PEM ", what, " found"));
  }
  return pem;
}

void AddListQuery(const ListOptions& o, Query* q) {
  if (!o.label_selector.empty())
    q->emplace_back("labelSelector", o.label_selector);
  if (!o.field_selector.empty())
    q->emplace_back("fieldSelector", o.field_selector);
  if (o.limit > 0) q->emplace_back("limit", absl::StrCat(o.limit));
  if (!o.continue_token.empty()) q->emplace_back("continue", o.continue_token);
  if (!o.resource_version.empty())
    q->emplace_back("resourceVersion", o.resource_version);
  if (!o.resource_version_match.empty()) {
    q->emplace_back("resourceVersionMatch", o.resource_version_match);
  }
  if (o.timeout_seconds.has_value()) {
    q->emplace_back("timeoutSeconds", absl::StrCat(*o.timeout_seconds));
  }
}

std::string DeleteOptionsJson(const DeleteOptions& o) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("kind");
  w.String("DeleteOptions");
  w.Key("apiVersion");
  w.String("v1");
  if (o.grace_period_seconds.has_value()) {
    w.Key("gracePeriodSeconds");
    w.Int64(*o.grace_period_seconds);
  }
  if (o.preconditions.uid.has_value() ||
      o.preconditions.resource_version.has_value()) {
    w.Key("preconditions");
    w.StartObject();
    if (o.preconditions.uid.has_value()) {
      w.Key("uid");
      w.String(*o.preconditions.uid);
    }
    if (o.preconditions.resource_version.has_value()) {
      w.Key("resourceVersion");
      w.String(*o.preconditions.resource_version);
    }
    w.EndObject();
  }
  if (!o.propagation_policy.empty()) {
    w.Key("propagationPolicy");
    w.String(o.propagation_policy);
  }
  if (o.dry_run) {
    w.Key("dryRun");
    w.StartArray();
    w.String("All");
    w.EndArray();
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string StringMember(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return "";
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

absl::StatusOr<ObjectList> ParseList(const std::string& body,
                                     const api::ParseOptions& parse_options) {
  rapidjson::Document doc;
  // Iterative and depth-bounded: a hostile list nested a million deep is an
  // error here, not a stack overflow. Items sit two levels down.
  if (absl::Status s = json::ParseJson(body, &doc, api::kMaxJsonDepth + 2);
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("list response is not valid JSON: ", s.message()));
  }
  if (!doc.IsObject()) {
    return absl::InvalidArgumentError("list response is not a JSON object");
  }
  ObjectList list;
  list.api_version = StringMember(doc, "apiVersion");
  list.kind = StringMember(doc, "kind");
  auto md = doc.FindMember("metadata");
  if (md != doc.MemberEnd() && md->value.IsObject()) {
    list.resource_version = StringMember(md->value, "resourceVersion");
    list.continue_token = StringMember(md->value, "continue");
    auto rem = md->value.FindMember("remainingItemCount");
    if (rem != md->value.MemberEnd() && rem->value.IsInt64()) {
      list.remaining_item_count = rem->value.GetInt64();
    }
  }
  std::string item_kind = list.kind;
  if (absl::EndsWith(item_kind, "List")) item_kind.resize(item_kind.size() - 4);
  auto items = doc.FindMember("items");
  if (items == doc.MemberEnd() || items->value.IsNull()) return list;
  if (!items->value.IsArray()) {
    return absl::InvalidArgumentError("list response: items is not an array");
  }
  auto& alloc = doc.GetAllocator();
  size_t index = 0;
  for (auto& item : items->value.GetArray()) {
    if (item.IsObject()) {
      if (!item.HasMember("kind") && !item_kind.empty()) {
        item.AddMember("kind", rapidjson::Value(item_kind.c_str(), alloc),
                       alloc);
      }
      if (!item.HasMember("apiVersion") && !list.api_version.empty()) {
        item.AddMember("apiVersion",
                       rapidjson::Value(list.api_version.c_str(), alloc),
                       alloc);
      }
    }
    auto obj = api::Object::FromValue(item, parse_options);
    if (!obj.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "list response: items[", index, "]: ", obj.status().message()));
    }
    list.items.push_back(*std::move(obj));
    ++index;
  }
  return list;
}

absl::StatusOr<api::ObjectPtr> ParseObject(
    const std::string& body, const api::ParseOptions& parse_options) {
  auto obj = api::Object::Parse(body, parse_options);
  if (!obj.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "response is not a Kubernetes object: ", obj.status().message()));
  }
  return obj;
}

// What one attempt produced.
struct Attempt {
  absl::Status transport;  // not OK: no response
  // The transport error will not go away by retrying (TLS verification).
  bool permanent = false;
  int code = 0;
  std::string body;
  std::string retry_after;
  std::optional<http::http_response> response;  // kept for streaming
  // The client whose connection carries `response` (streaming only).
  std::shared_ptr<http_client> client;
};

struct RequestSpec {
  http::method method;
  std::string path;
  Query query;
  std::string body;
  std::string content_type;
  bool idempotent = false;
  bool stream = false;  // a watch: keep the body unread on success
  // A watch's timeout (stream only): it gets a client of its own per
  // attempt, whose connection the stream keeps.
  absl::Duration stream_timeout = absl::Hours(1);
  // Cancelling closes the connection, also while its body is being read.
  // A watch passes the source its stream keeps; every other request gets
  // one of its own.
  std::optional<pplx::cancellation_token_source> cancel;
};

// Credentials and TLS material shared with cpprestsdk's TLS callbacks,
// which read them at each new connection's handshake.
struct TlsState {
  std::string ca_pem;
  Mutex mu;
  std::string cert_pem ABSL_GUARDED_BY(mu);
  std::string key_pem ABSL_GUARDED_BY(mu);
  // Bumped whenever an exec plugin hands out a different certificate.
  uint64_t cert_generation ABSL_GUARDED_BY(mu) = 0;
};

// The timeout of the shared client: config.timeout, or an hour when it is
// zero (none).
absl::Duration SharedClientTimeout(const Config& config) {
  return config.timeout > absl::ZeroDuration() ? config.timeout
                                               : absl::Hours(1);
}

class CppRestClient final : public RestClient {
 public:
  static absl::StatusOr<std::unique_ptr<RestClient>> New(
      const Config& config, const ClientOptions& options);

  absl::StatusOr<api::ObjectPtr> Get(const Context& ctx,
                                     const Resource& resource,
                                     std::string_view name,
                                     const GetOptions& options) override;
  absl::StatusOr<ObjectList> List(const Context& ctx, const Resource& resource,
                                  const ListOptions& options) override;
  absl::StatusOr<std::unique_ptr<WatchStream>> Watch(
      const Context& ctx, const Resource& resource,
      const ListOptions& options) override;
  absl::StatusOr<api::ObjectPtr> Create(const Context& ctx,
                                        const Resource& resource,
                                        const api::Object& object,
                                        const CreateOptions& options) override;
  absl::StatusOr<api::ObjectPtr> Update(const Context& ctx,
                                        const Resource& resource,
                                        const api::Object& object,
                                        const UpdateOptions& options) override;
  absl::StatusOr<api::ObjectPtr> UpdateStatus(
      const Context& ctx, const Resource& resource, const api::Object& object,
      const UpdateOptions& options) override;
  absl::StatusOr<api::ObjectPtr> Patch(const Context& ctx,
                                       const Resource& resource,
                                       std::string_view name, PatchType type,
                                       std::string_view patch,
                                       const PatchOptions& options,
                                       std::string_view subresource) override;
  absl::Status Delete(const Context& ctx, const Resource& resource,
                      std::string_view name,
                      const DeleteOptions& options) override;
  absl::Status DeleteCollection(const Context& ctx, const Resource& resource,
                                const DeleteOptions& options,
                                const ListOptions& list_options) override;
  absl::StatusOr<std::string> GetRaw(const Context& ctx,
                                     std::string_view path) override;

 private:
  CppRestClient(const Config& config, const ClientOptions& options);

  std::unique_ptr<http_client> MakeHttpClient(absl::Duration timeout) const;
  // The client to send one attempt of `spec` on: the shared one, or a new
  // one for a watch.
  std::shared_ptr<http_client> ClientFor(const RequestSpec& spec);
  // The Authorization header to send ("" for none). With an exec plugin
  // that answers with a client certificate, also installs a changed
  // certificate and starts a new connection pool, so that the next request
  // presents it (pooled connections keep the certificate of their
  // handshake).
  absl::StatusOr<std::string> Authorization();
  uint64_t CertGeneration();
  void InvalidateCredentials(absl::Time request_start);
  Attempt SendOnce(http_client& client, const RequestSpec& spec,
                   const pplx::cancellation_token& cancel,
                   const std::string& authorization);
  // Rate limit, send, retry; a response with any HTTP code, a transport
  // error, or the error of `ctx` once it is done.
  absl::StatusOr<Attempt> Execute(const Context& ctx, const RequestSpec& spec);
  // Waits for the rate limiter (when there is one).
  absl::Status Throttle(const Context& ctx, const RequestSpec& spec);
  // Waits `d` before a retry, or until `ctx` ends.
  absl::Status Sleep(const Context& ctx, absl::Duration d);
  // Execute and turn non-2xx into the server's Status.
  absl::StatusOr<std::string> Call(const Context& ctx, const RequestSpec& spec);
  absl::StatusOr<api::ObjectPtr> CallForObject(const Context& ctx,
                                               const RequestSpec& spec);
  absl::StatusOr<std::string> NamespaceFor(const Resource& resource,
                                           const api::Object* object) const;
  absl::StatusOr<api::ObjectPtr> Put(const Context& ctx,
                                     const Resource& resource,
                                     const api::Object& object,
                                     const UpdateOptions& options,
                                     std::string_view subresource);

  const Config config_;
  const ClientOptions options_;
  const Clock* const clock_;
  std::string host_label_;  // host:port for metrics
  std::string sni_host_;    // Host header for tls-server-name
  std::string user_agent_;
  std::shared_ptr<TlsState> tls_;
  // Null when Config::qps is negative: no client-side throttling.
  std::unique_ptr<TokenBucket> limiter_;
  std::unique_ptr<CachedFileTokenSource> token_file_;
  std::unique_ptr<ExecCredentialProvider> exec_;
  std::unique_ptr<RequestResultMetric> result_metric_;
  std::unique_ptr<RequestLatencyMetric> latency_metric_;
  // Last: destroyed first, before the state its callbacks use. Replaced
  // when the client certificate changes; requests in flight keep theirs.
  Mutex http_mu_;
  std::shared_ptr<http_client> http_ ABSL_GUARDED_BY(http_mu_);
};

// Reads a watch response body on a thread it owns, decodes it, and hands
// events to Next() through a bounded queue.
class CppRestWatchStream final : public WatchStream {
 public:
  static constexpr size_t kMaxQueued = 1024;

  // `ctx` bounds the stream: when it ends, so does the stream.
  CppRestWatchStream(const Context& ctx, std::shared_ptr<http_client> client,
                     http::http_response response,
                     pplx::cancellation_token_source cancel,
                     const api::ParseOptions& parse_options)
      : client_(std::move(client)),
        response_(std::move(response)),
        cancel_(cancel),
        decoder_(WatchDecoderOptions{.parse_options = parse_options}) {
    reader_ = std::thread([this] { ReadLoop(); });
    // Last: the callback may run at once, and uses everything above.
    watch_done_ = ctx.OnDone([this, ctx] { StopWith(ctx.Err()); });
  }

  ~CppRestWatchStream() override {
    watch_done_.Reset();
    Stop();
    reader_.join();
  }

  using WatchStream::Next;
  bool Next(const Context& ctx, WatchEvent* event) override {
    // Dropped after mu_ is released: its callback takes mu_.
    Context::DoneCallback next_done =
        ctx.OnDone([this, ctx] { StopWith(ctx.Err()); });
    MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &CppRestWatchStream::ReadyLocked));
    if (stopped_ || events_.empty()) return false;
    *event = std::move(events_.front());
    events_.pop_front();
    return true;
  }

  void Stop() override { StopWith(absl::CancelledError("watch stopped")); }

  absl::Status status() const override {
    MutexLock lock(&mu_);
    return status_;
  }

 private:
  bool ReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopped_ || done_ || !events_.empty();
  }
  bool RoomLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopped_ || events_.size() < kMaxQueued;
  }

  // Ends the stream with `why` (unless the server ended it first) and
  // closes the connection, so that a read blocked in the reader fails at
  // once. Releasing mu_ wakes a Next waiting on it.
  void StopWith(absl::Status why) {
    {
      MutexLock lock(&mu_);
      if (stopped_) return;
      stopped_ = true;
      if (!done_) status_ = std::move(why);
    }
    cancel_.cancel();
  }

  void Finish(absl::Status status) {
    MutexLock lock(&mu_);
    if (!stopped_) status_ = std::move(status);
    done_ = true;
  }

  // The end of the body: clean, or broken (content_ready carries the
  // transport error).
  absl::Status EndOfBody() {
    try {
      response_.content_ready().get();
    } catch (const std::exception& e) {
      absl::Status partial = decoder_.Finish();
      if (!partial.ok()) {
        return absl::DataLossError(
            absl::StrCat(partial.message(), ": ", e.what()));
      }
      return absl::UnavailableError(
          absl::StrCat("watch stream broken: ", e.what()));
    }
    return decoder_.Finish();
  }

  void ReadLoop() {
    auto buf = response_.body().streambuf();
    std::vector<char> data(64 << 10);
    std::vector<WatchEvent> events;
    while (true) {
      {
        MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &CppRestWatchStream::RoomLocked));
        if (stopped_) break;
      }
      size_t n = 0;
      try {
        // Wait for one byte, then take whatever else has arrived.
        auto c = buf.bumpc().get();
        if (c == std::char_traits<char>::eof()) {
          Finish(EndOfBody());
          break;
        }
        data[0] = static_cast<char>(c);
        n = 1;
        size_t avail = buf.in_avail();
        if (avail > 0) {
          n += buf.getn(reinterpret_cast<uint8_t*>(data.data()) + 1,
                        std::min(avail, data.size() - 1))
                   .get();
        }
      } catch (const std::exception& e) {
        absl::Status partial = decoder_.Finish();
        Finish(partial.ok() ? absl::UnavailableError(absl::StrCat(
                                  "watch stream broken: ", e.what()))
                            : absl::DataLossError(absl::StrCat(
                                  partial.message(), ": ", e.what())));
        break;
      }
      events.clear();
      absl::Status status =
          decoder_.Feed(std::string_view(data.data(), n), &events);
      {
        MutexLock lock(&mu_);
        for (auto& e : events) events_.push_back(std::move(e));
      }
      if (!status.ok()) {
        LOG(WARNING) << "watch stream undecodable: " << status;
        Finish(status);
        cancel_.cancel();
        break;
      }
    }
  }

  std::shared_ptr<http_client> client_;
  http::http_response response_;
  pplx::cancellation_token_source cancel_;
  WatchDecoder decoder_;  // reader thread only
  mutable Mutex mu_;
  std::deque<WatchEvent> events_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  std::thread reader_;
  // The watch's context ends the stream. Last: reset first.
  Context::DoneCallback watch_done_;
};

CppRestClient::CppRestClient(const Config& config, const ClientOptions& options)
    : config_(config),
      options_(options),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      user_agent_(config.user_agent.empty() ? DefaultUserAgent()
                                            : config.user_agent),
      tls_(std::make_shared<TlsState>()),
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
  KCR_ASSIGN_OR_RETURN(c->tls_->ca_pem,
                       LoadPem(config.tls.ca_data, config.tls.ca_file,
                               "certificate authority", HasPemCertificate));
  KCR_ASSIGN_OR_RETURN(std::string cert,
                       LoadPem(config.tls.cert_data, config.tls.cert_file,
                               "client certificate", HasPemCertificate));
  KCR_ASSIGN_OR_RETURN(std::string key,
                       LoadPem(config.tls.key_data, config.tls.key_file,
                               "client key", HasPemKey));
  {
    MutexLock lock(&c->tls_->mu);
    c->tls_->cert_pem = std::move(cert);
    c->tls_->key_pem = std::move(key);
  }
  if (!config.bearer_token_file.empty()) {
    c->token_file_ = std::make_unique<CachedFileTokenSource>(
        config.bearer_token_file, config.bearer_token, options.clock);
  }
  if (config.exec.has_value()) {
    ExecClusterInfo info{config.host, config.tls.server_name,
                         config.tls.insecure, c->tls_->ca_pem};
    c->exec_ = std::make_unique<ExecCredentialProvider>(*config.exec, info,
                                                        options.clock);
  }
  {
    MutexLock lock(&c->http_mu_);
    c->http_ = c->MakeHttpClient(SharedClientTimeout(config));
  }
  return std::unique_ptr<RestClient>(std::move(c));
}

std::unique_ptr<http_client> CppRestClient::MakeHttpClient(
    absl::Duration timeout) const {
  http_client_config cfg;
  cfg.set_timeout(
      std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout)));
  cfg.set_validate_certificates(!config_.tls.insecure);
  std::shared_ptr<TlsState> tls = tls_;
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
      utility::conversions::to_string_t(config_.host), cfg);
}

std::shared_ptr<http_client> CppRestClient::ClientFor(const RequestSpec& spec) {
  if (spec.stream) return MakeHttpClient(spec.stream_timeout);
  MutexLock lock(&http_mu_);
  return http_;
}

uint64_t CppRestClient::CertGeneration() {
  MutexLock lock(&tls_->mu);
  return tls_->cert_generation;
}

absl::StatusOr<std::string> CppRestClient::Authorization() {
  if (exec_ != nullptr) {
    KCR_ASSIGN_OR_RETURN(ExecCredential cred, exec_->Get());
    if (!cred.client_certificate_data.empty()) {
      bool changed = false;
      {
        MutexLock lock(&tls_->mu);
        changed = tls_->cert_pem != cred.client_certificate_data ||
                  tls_->key_pem != cred.client_key_data;
      }
      if (changed) {
        // Checked here, where the error can name the plugin, rather than
        // failing later inside a TLS handshake.
        if (!HasPemCertificate(cred.client_certificate_data) ||
            !HasPemKey(cred.client_key_data)) {
          return absl::UnauthenticatedError(
              absl::StrCat("exec plugin ", config_.exec->command,
                           ": clientCertificateData and clientKeyData must be "
                           "a PEM certificate and key"));
        }
        {
          MutexLock lock(&tls_->mu);
          tls_->cert_pem = cred.client_certificate_data;
          tls_->key_pem = cred.client_key_data;
          ++tls_->cert_generation;
        }
        std::shared_ptr<http_client> fresh =
            MakeHttpClient(SharedClientTimeout(config_));
        MutexLock lock(&http_mu_);
        http_ = std::move(fresh);
        VLOG(2) << "exec plugin gave a new client certificate; new connections "
                   "use it";
      }
    }
    if (!cred.token.empty()) return absl::StrCat("Bearer ", cred.token);
    return std::string();
  }
  if (token_file_ != nullptr) {
    KCR_ASSIGN_OR_RETURN(std::string token, token_file_->Token());
    return absl::StrCat("Bearer ", token);
  }
  if (!config_.bearer_token.empty())
    return absl::StrCat("Bearer ", config_.bearer_token);
  if (!config_.username.empty() || !config_.password.empty()) {
    return absl::StrCat(
        "Basic ", absl::Base64Escape(
                      absl::StrCat(config_.username, ":", config_.password)));
  }
  return std::string();
}

void CppRestClient::InvalidateCredentials(absl::Time request_start) {
  if (exec_ != nullptr) exec_->Invalidate(request_start);
  if (token_file_ != nullptr) token_file_->Invalidate(request_start);
}

absl::Status CppRestClient::Sleep(const Context& ctx, absl::Duration d) {
  if (options_.sleep) {
    if (d > absl::ZeroDuration()) options_.sleep(d);
    return ctx.Err();
  }
  return clock_->Sleep(ctx, d);
}

absl::Status CppRestClient::Throttle(const Context& ctx,
                                     const RequestSpec& spec) {
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
              << "and fairness, request: " << spec.method << ":" << spec.path;
  }
  return absl::OkStatus();
}

Attempt CppRestClient::SendOnce(http_client& client, const RequestSpec& spec,
                                const pplx::cancellation_token& cancel,
                                const std::string& authorization) {
  Attempt a;
  const std::string target = PathWithQuery(spec.path, spec.query);
  const absl::Time start = clock_->Now();
  try {
    http::http_request req(spec.method);
    req.set_request_uri(utility::conversions::to_string_t(target));
    auto& h = req.headers();
    h.add("User-Agent", user_agent_);
    h.add("Accept", "application/json");
    if (!authorization.empty()) h.add("Authorization", authorization);
    if (!config_.impersonate.empty())
      h.add("Impersonate-User", config_.impersonate);
    for (const auto& g : config_.impersonate_groups)
      h.add("Impersonate-Group", g);
    if (!sni_host_.empty()) h.add("Host", sni_host_);
    if (!spec.body.empty() || !spec.content_type.empty()) {
      req.set_body(spec.body, spec.content_type);
      h.set_content_type(spec.content_type);
    }
    http::http_response resp = client.request(req, cancel).get();
    a.code = resp.status_code();
    auto ra = resp.headers().find("Retry-After");
    if (ra != resp.headers().end()) a.retry_after = ra->second;
    if (spec.stream && a.code >= 200 && a.code <= 299) {
      a.response = resp;
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
          absl::StrCat(spec.method, " ", config_.host, target, ": ", cause));
    }
  } catch (const std::exception& e) {
    a.transport = absl::UnavailableError(
        absl::StrCat(spec.method, " ", config_.host, target, ": ", e.what()));
  }
  if (result_metric_ != nullptr) {
    result_metric_->Increment(
        a.transport.ok() ? absl::StrCat(a.code) : "<error>", spec.method,
        host_label_);
  }
  if (latency_metric_ != nullptr) {
    latency_metric_->Observe(spec.method, host_label_, clock_->Now() - start);
  }
  return a;
}

absl::StatusOr<Attempt> CppRestClient::Execute(const Context& ctx,
                                               const RequestSpec& spec) {
  // The context's end closes the connection of the attempt in flight (and
  // of a watch's stream, until the stream takes over).
  pplx::cancellation_token_source cancel =
      spec.cancel.has_value() ? *spec.cancel
                              : pplx::cancellation_token_source();
  Context::DoneCallback cancel_on_done =
      ctx.OnDone([cancel]() mutable { cancel.cancel(); });
  // The caller's error, saying what was cut short.
  auto ended = [&]() {
    const absl::Status err = ctx.Err();
    return absl::Status(err.code(), absl::StrCat(spec.method, " ", spec.path,
                                                 ": ", err.message()));
  };
  auto wait = [&](absl::Duration d) -> absl::Status {
    absl::Status slept = Sleep(ctx, d);
    return slept.ok() ? slept : ended();
  };
  int retry_after_retries = 0;
  int backoff_retries = 0;
  bool auth_retried = false;
  absl::Duration backoff = options_.initial_backoff;
  while (true) {
    if (ctx.done()) return ended();
    if (absl::Status throttled = Throttle(ctx, spec); !throttled.ok()) {
      if (ctx.done()) return ended();
      // The limiter's DeadlineExceeded: the wait would outlast the deadline.
      return absl::Status(
          throttled.code(),
          absl::StrCat(spec.method, " ", spec.path, ": ", throttled.message()));
    }
    KCR_ASSIGN_OR_RETURN(std::string authorization, Authorization());
    const uint64_t cert_generation = CertGeneration();
    const absl::Time start = clock_->Now();
    std::shared_ptr<http_client> client = ClientFor(spec);
    Attempt a = SendOnce(*client, spec, cancel.get_token(), authorization);
    // Whatever the attempt says (a closed connection, a half-read body), a
    // call whose context ended reports that.
    if (ctx.done()) return ended();
    if (spec.stream) a.client = std::move(client);
    if (!a.transport.ok()) {
      if (spec.idempotent && !a.permanent &&
          backoff_retries < options_.max_backoff_retries) {
        ++backoff_retries;
        VLOG(2) << "retrying after transport error attempt=" << backoff_retries
                << " " << a.transport;
        KCR_RETURN_IF_ERROR(wait(backoff));
        backoff = std::min(backoff * 2, options_.max_backoff);
        continue;
      }
      return a.transport;
    }
    if (a.code == 401 && !auth_retried &&
        (exec_ != nullptr || token_file_ != nullptr)) {
      auth_retried = true;
      InvalidateCredentials(start);
      auto fresh = Authorization();
      if (fresh.ok() &&
          (*fresh != authorization || CertGeneration() != cert_generation)) {
        VLOG(2) << "401: retrying with a refreshed credential";
        continue;
      }
      return a;
    }
    int retry_after_seconds = -1;
    if (!a.retry_after.empty()) {
      int s = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(a.retry_after), &s) &&
          s >= 0) {
        retry_after_seconds = s;
      }
    }
    if ((a.code == 429 || (a.code >= 500 && retry_after_seconds >= 0)) &&
        retry_after_retries < options_.max_retry_after_retries) {
      ++retry_after_retries;
      absl::Duration delay = retry_after_seconds >= 0
                                 ? absl::Seconds(retry_after_seconds)
                                 : options_.default_retry_after;
      VLOG(2) << "got " << a.code << ", retrying after " << delay
              << " attempt=" << retry_after_retries;
      KCR_RETURN_IF_ERROR(wait(delay));
      continue;
    }
    if (a.code >= 500 && spec.idempotent &&
        backoff_retries < options_.max_backoff_retries) {
      ++backoff_retries;
      VLOG(2) << "got " << a.code << ", retrying attempt=" << backoff_retries;
      KCR_RETURN_IF_ERROR(wait(backoff));
      backoff = std::min(backoff * 2, options_.max_backoff);
      continue;
    }
    return a;
  }
}

absl::StatusOr<std::string> CppRestClient::Call(const Context& ctx,
                                                const RequestSpec& spec) {
  KCR_ASSIGN_OR_RETURN(Attempt a, Execute(ctx, spec));
  if (a.code < 200 || a.code > 299)
    return StatusFromResponse(a.code, a.body, a.retry_after);
  return std::move(a.body);
}

absl::StatusOr<api::ObjectPtr> CppRestClient::CallForObject(
    const Context& ctx, const RequestSpec& spec) {
  KCR_ASSIGN_OR_RETURN(std::string body, Call(ctx, spec));
  return ParseObject(body, options_.parse_options);
}

absl::StatusOr<std::string> CppRestClient::NamespaceFor(
    const Resource& resource, const api::Object* object) const {
  if (!resource.namespaced) return std::string();
  if (!resource.namespace_.empty()) {
    if (object != nullptr && !object->ns().empty() &&
        object->ns() != resource.namespace_) {
      return absl::InvalidArgumentError(
          absl::StrCat("the namespace of the object (", ToAbsl(object->ns()),
                       ") does not match the namespace of the request (",
                       resource.namespace_, ")"));
    }
    return resource.namespace_;
  }
  if (object != nullptr) return std::string(object->ns());
  return std::string();
}

absl::StatusOr<api::ObjectPtr> CppRestClient::Get(const Context& ctx,
                                                  const Resource& resource,
                                                  std::string_view name,
                                                  const GetOptions& options) {
  KCR_ASSIGN_OR_RETURN(std::string ns, NamespaceFor(resource, nullptr));
  RequestSpec spec{http::methods::GET};
  KCR_ASSIGN_OR_RETURN(
      spec.path,
      api::ItemPath(resource.gvr, resource.namespaced, ns, ToAbsl(name)));
  if (!options.resource_version.empty()) {
    spec.query.emplace_back("resourceVersion", options.resource_version);
  }
  spec.idempotent = true;
  return CallForObject(ctx, spec);
}

absl::StatusOr<ObjectList> CppRestClient::List(const Context& ctx,
                                               const Resource& resource,
                                               const ListOptions& options) {
  RequestSpec spec{http::methods::GET};
  KCR_ASSIGN_OR_RETURN(
      spec.path,
      api::CollectionPath(resource.gvr, resource.namespaced,
                          resource.namespaced ? resource.namespace_ : ""));
  AddListQuery(options, &spec.query);
  spec.idempotent = true;
  KCR_ASSIGN_OR_RETURN(std::string body, Call(ctx, spec));
  return ParseList(body, options_.parse_options);
}

absl::StatusOr<std::unique_ptr<WatchStream>> CppRestClient::Watch(
    const Context& ctx, const Resource& resource, const ListOptions& options) {
  RequestSpec spec{http::methods::GET};
  KCR_ASSIGN_OR_RETURN(
      spec.path,
      api::CollectionPath(resource.gvr, resource.namespaced,
                          resource.namespaced ? resource.namespace_ : ""));
  spec.query.emplace_back("watch", "true");
  AddListQuery(options, &spec.query);
  if (options.allow_watch_bookmarks)
    spec.query.emplace_back("allowWatchBookmarks", "true");
  if (options.send_initial_events)
    spec.query.emplace_back("sendInitialEvents", "true");
  spec.idempotent = true;
  spec.stream = true;
  pplx::cancellation_token_source cancel;
  spec.cancel = cancel;
  // Its own connection: the stream lives as long as the caller keeps it.
  // The timeout covers a silent connection: beyond the server's own
  // timeoutSeconds, or an hour.
  if (options.timeout_seconds.has_value()) {
    spec.stream_timeout =
        absl::Seconds(*options.timeout_seconds) + absl::Minutes(1);
  }
  KCR_ASSIGN_OR_RETURN(Attempt a, Execute(ctx, spec));
  if (a.code < 200 || a.code > 299)
    return StatusFromResponse(a.code, a.body, a.retry_after);
  VLOG(2) << "watch started path=" << spec.path;
  return std::unique_ptr<WatchStream>(
      new CppRestWatchStream(ctx, std::move(a.client), std::move(*a.response),
                             cancel, options_.parse_options));
}

absl::StatusOr<api::ObjectPtr> CppRestClient::Create(
    const Context& ctx, const Resource& resource, const api::Object& object,
    const CreateOptions& options) {
  KCR_ASSIGN_OR_RETURN(std::string ns, NamespaceFor(resource, &object));
  if (resource.namespaced && ns.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("create ", resource.gvr.resource, ": no namespace"));
  }
  RequestSpec spec{http::methods::POST};
  KCR_ASSIGN_OR_RETURN(
      spec.path, api::CollectionPath(resource.gvr, resource.namespaced, ns));
  if (options.dry_run) spec.query.emplace_back("dryRun", "All");
  if (!options.field_manager.empty())
    spec.query.emplace_back("fieldManager", options.field_manager);
  spec.body = object.ToJson();
  spec.content_type = "application/json";
  return CallForObject(ctx, spec);
}

absl::StatusOr<api::ObjectPtr> CppRestClient::Put(
    const Context& ctx, const Resource& resource, const api::Object& object,
    const UpdateOptions& options, std::string_view subresource) {
  KCR_ASSIGN_OR_RETURN(std::string ns, NamespaceFor(resource, &object));
  RequestSpec spec{http::methods::PUT};
  KCR_ASSIGN_OR_RETURN(
      spec.path, api::ItemPath(resource.gvr, resource.namespaced, ns,
                               ToAbsl(object.name()), ToAbsl(subresource)));
  if (options.dry_run) spec.query.emplace_back("dryRun", "All");
  if (!options.field_manager.empty())
    spec.query.emplace_back("fieldManager", options.field_manager);
  spec.body = object.ToJson();
  spec.content_type = "application/json";
  spec.idempotent = true;
  return CallForObject(ctx, spec);
}

absl::StatusOr<api::ObjectPtr> CppRestClient::Update(
    const Context& ctx, const Resource& resource, const api::Object& object,
    const UpdateOptions& options) {
  return Put(ctx, resource, object, options, "");
}

absl::StatusOr<api::ObjectPtr> CppRestClient::UpdateStatus(
    const Context& ctx, const Resource& resource, const api::Object& object,
    const UpdateOptions& options) {
  return Put(ctx, resource, object, options, "status");
}

absl::StatusOr<api::ObjectPtr> CppRestClient::Patch(
    const Context& ctx, const Resource& resource, std::string_view name,
    PatchType type, std::string_view patch, const PatchOptions& options,
    std::string_view subresource) {
  if (type == PatchType::kApply && options.field_manager.empty()) {
    return absl::InvalidArgumentError("apply patch needs a field manager");
  }
  if (type != PatchType::kApply && options.force) {
    return absl::InvalidArgumentError("force is only valid for apply patches");
  }
  KCR_ASSIGN_OR_RETURN(std::string ns, NamespaceFor(resource, nullptr));
  RequestSpec spec{http::methods::PATCH};
  KCR_ASSIGN_OR_RETURN(spec.path,
                       api::ItemPath(resource.gvr, resource.namespaced, ns,
                                     ToAbsl(name), ToAbsl(subresource)));
  if (options.dry_run) spec.query.emplace_back("dryRun", "All");
  if (!options.field_manager.empty())
    spec.query.emplace_back("fieldManager", options.field_manager);
  if (options.force) spec.query.emplace_back("force", "true");
  spec.body = std::string(patch);
  spec.content_type = std::string(api::ContentType(type));
  return CallForObject(ctx, spec);
}

absl::Status CppRestClient::Delete(const Context& ctx, const Resource& resource,
                                   std::string_view name,
                                   const DeleteOptions& options) {
  KCR_ASSIGN_OR_RETURN(std::string ns, NamespaceFor(resource, nullptr));
  RequestSpec spec{http::methods::DEL};
  KCR_ASSIGN_OR_RETURN(
      spec.path,
      api::ItemPath(resource.gvr, resource.namespaced, ns, ToAbsl(name)));
  spec.body = DeleteOptionsJson(options);
  spec.content_type = "application/json";
  spec.idempotent = true;
  return Call(ctx, spec).status();
}

absl::Status CppRestClient::DeleteCollection(const Context& ctx,
                                             const Resource& resource,
                                             const DeleteOptions& options,
                                             const ListOptions& list_options) {
  RequestSpec spec{http::methods::DEL};
  KCR_ASSIGN_OR_RETURN(
      spec.path,
      api::CollectionPath(resource.gvr, resource.namespaced,
                          resource.namespaced ? resource.namespace_ : ""));
  AddListQuery(list_options, &spec.query);
  spec.body = DeleteOptionsJson(options);
  spec.content_type = "application/json";
  spec.idempotent = true;
  return Call(ctx, spec).status();
}

absl::StatusOr<std::string> CppRestClient::GetRaw(const Context& ctx,
                                                  std::string_view path) {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError("GetRaw: the path must start with '/'");
  }
  RequestSpec spec{http::methods::GET};
  spec.path = std::string(path);
  spec.idempotent = true;
  return Call(ctx, spec);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RestClient>> NewRestClient(
    const Config& config, const ClientOptions& options) {
  return CppRestClient::New(config, options);
}

}  // namespace kcr::client
