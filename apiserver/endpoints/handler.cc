#include "apiserver/endpoints/handler.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/json/yaml_to_json.h"
#include "api/object_builder.h"
#include "apiserver/apply/patch_request.h"
#include "apiserver/auth/escalation.h"
#include "apiserver/auth/owner_references.h"
#include "apiserver/auth/request_info.h"
#include "apiserver/auth/reviews.h"
#include "apiserver/endpoints/discovery.h"
#include "apiserver/endpoints/negotiation.h"
#include "apiserver/endpoints/pod_log.h"
#include "apiserver/endpoints/pod_stream.h"
#include "apiserver/endpoints/protobuf.h"
#include "apiserver/endpoints/request_options.h"
#include "apiserver/endpoints/response_writers.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/internal/write_context.h"
#include "apiserver/registry/access_review.h"
#include "base/str_cat.h"
#include "base/string_view.h"
#include "glog/logging.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {
namespace {

// Sleeps for `d` of real time in short steps, so that a stopping server or
// a client that went away ends the wait. Returns false if it was cut short.
bool SleepUnlessCancelled(absl::Duration d, HttpExchange* ex) {
  const absl::Time end = absl::Now() + d;
  while (!ex->Cancelled()) {
    const absl::Duration left = end - absl::Now();
    if (left <= absl::ZeroDuration()) return true;
    absl::SleepFor(std::min(left, absl::Milliseconds(10)));
  }
  return false;
}

std::string VersionJson(const HandlerOptions& o) {
  return Cat(
      R"({"major":")", o.major, R"(","minor":")", o.minor,
      R"(","gitVersion":")", o.git_version,
      R"(","gitCommit":"0000000000000000000000000000000000000000","gitTreeState":"clean","buildDate":"2025-01-01T00:00:00Z","goVersion":"go1.23.6","compiler":"gc","platform":"linux/amd64"})");
}

void Put(rapidjson::StringBuffer* buf, std::string_view s) {
  char* dst = buf->Push(s.size());
  memcpy(dst, s.data(), s.size());
}

// Writes the list's items, comma-separated, into *buf, calling
// `after_item` after each; stops (false) when it returns false. Items are
// PartialObjectMetadata of that meta.k8s.io version when `partial_version`
// is set.
template <typename AfterItem>
bool WriteItems(const ListResult& l, std::string_view partial_version,
                rapidjson::StringBuffer* buf, AfterItem after_item) {
  for (size_t i = 0; i < l.items.size(); ++i) {
    if (i > 0) buf->Put(',');
    if (partial_version.empty()) {
      rapidjson::Writer<rapidjson::StringBuffer> w(*buf);
      l.items[i]->json().Accept(w);
    } else {
      WritePartialObjectMetadata(*l.items[i], partial_version, buf);
    }
    if (!after_item(*buf)) return false;
  }
  return true;
}

// The list envelope with every item written straight into one buffer (no
// per-item strings): a 50,000-pod list is tens of megabytes. With
// `partial_version`, a meta.k8s.io PartialObjectMetadataList.
std::string ListJson(const ResourceInfo& r, const ListResult& l,
                     std::string_view partial_version = "") {
  std::string head =
      partial_version.empty()
          ? Cat(R"({"kind":")", r.mapping.list_kind, R"(","apiVersion":")",
                r.api_version())
          : Cat(R"({"kind":"PartialObjectMetadataList","apiVersion":")",
                "meta.k8s.io/", partial_version);
  CatAppend(&head, R"(","metadata":{"resourceVersion":")", l.resource_version,
            "\"");
  if (!l.continue_token.empty()) {
    CatAppend(&head, R"(,"continue":")", l.continue_token, "\"");
  }
  if (l.remaining_item_count.has_value()) {
    CatAppend(&head, R"(,"remainingItemCount":)", *l.remaining_item_count);
  }
  if (!l.shard_selector.empty()) {
    // The canonical form has no character JSON must escape.
    CatAppend(&head, R"(,"shardInfo":{"selector":")", l.shard_selector, "\"}");
  }
  head += R"(},"items":[)";
  rapidjson::StringBuffer buf(nullptr, head.size() + 2 + l.items.size() * 1024);
  Put(&buf, head);
  WriteItems(l, partial_version, &buf,
             [](const rapidjson::StringBuffer&) { return true; });
  Put(&buf, "]}");
  return std::string(buf.GetString(), buf.GetSize());
}

// Large lists are streamed (chunked) in pieces of about 256 KiB instead of
// being built whole: a 50,000-pod list is tens of megabytes, and building it
// costs two fresh buffers of that size (page faults dominate).
constexpr size_t kStreamListItems = 1000;
constexpr size_t kStreamChunkBytes = 256 << 10;

void StreamListJson(const ResourceInfo& r, const ListResult& l,
                    std::string_view partial_version, HttpExchange* ex) {
  std::string whole = ListJson(r,
                               ListResult{{},
                                          l.resource_version,
                                          l.continue_token,
                                          l.remaining_item_count,
                                          l.shard_selector},
                               partial_version);
  // `whole` is the envelope with an empty items array: split it there.
  std::string head = whole.substr(0, whole.size() - 2);
  if (!ex->StartStream(200, "application/json", {})) return;
  rapidjson::StringBuffer buf(nullptr, kStreamChunkBytes + (64 << 10));
  Put(&buf, head);
  const bool written =
      WriteItems(l, partial_version, &buf, [ex](rapidjson::StringBuffer& b) {
        if (b.GetSize() < kStreamChunkBytes) return true;
        if (!ex->WriteChunk(std::string_view(b.GetString(), b.GetSize()))) {
          return false;
        }
        b.Clear();
        return true;
      });
  if (!written) return;
  Put(&buf, "]}");
  if (ex->WriteChunk(std::string_view(buf.GetString(), buf.GetSize()))) {
    ex->EndStream();
  }
}

absl::StatusOr<rapidjson::Document> DecodeBody(const HttpRequest& req) {
  MediaType ct = ParseMediaType(req.Header("content-type"));
  rapidjson::Document doc;
  if (ct.type.empty() || ct.type == "application/json" || ct.type == "*/*") {
    absl::Status s = json::ParseJson(req.body, &doc);
    if (!s.ok()) {
      return api::StatusError::BadRequest(
                 Cat("couldn't get version/kind; json parse error: ",
                     ToStd(s.message())))
          .ToStatus();
    }
  } else if (ct.type == "application/vnd.kubernetes.protobuf") {
    auto json = KubernetesProtobufToJson(req.body);
    if (!json.ok()) {
      if (json.status().code() == absl::StatusCode::kUnimplemented) {
        return api::StatusError::UnsupportedMediaType(
                   Cat("the body of the request was in an unknown format - "
                       "accepted media types include: application/json, "
                       "application/yaml (",
                       ToStd(json.status().message()), ")"))
            .ToStatus();
      }
      return api::StatusError::BadRequest(ToStd(json.status().message()))
          .ToStatus();
    }
    absl::Status s = json::ParseJson(*json, &doc);
    if (!s.ok())
      return api::StatusError::BadRequest(ToStd(s.message())).ToStatus();
  } else if (ct.type == "application/yaml") {
    auto y = json::YamlToJson(req.body);
    if (!y.ok()) {
      return api::StatusError::BadRequest(
                 Cat("couldn't get version/kind; yaml parse error: ",
                     ToStd(y.status().message())))
          .ToStatus();
    }
    doc.CopyFrom(**y, doc.GetAllocator());
  } else {
    return api::StatusError::UnsupportedMediaType(
               Cat("the body of the request was in an unknown format - "
                   "accepted media types include: application/json, "
                   "application/yaml"))
        .ToStatus();
  }
  if (!doc.IsObject()) {
    return api::StatusError::BadRequest(
               "couldn't get version/kind; json parse error: the object is "
               "not a JSON object")
        .ToStatus();
  }
  return doc;
}

absl::StatusOr<api::ObjectBuilder> BuilderFromBody(const HttpRequest& req) {
  auto doc = DecodeBody(req);
  if (!doc.ok()) return doc.status();
  api::ObjectBuilder b;
  b.json().CopyFrom(*doc, b.allocator());
  return b;
}

std::string DeleteSuccessJson(const ResourceInfo& r, const api::Object& o) {
  return Cat(
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":)",
      Quote(o.name()), R"(,"group":)", Quote(r.group()), R"(,"kind":)",
      Quote(r.resource()), R"(,"uid":)", Quote(o.uid()), "}}");
}

// kube's verb for a resource request.
std::string_view RequestVerb(const HttpRequest& req, bool legacy_watch,
                             const std::string& name) {
  const std::string& m = req.method;
  if (m == "GET") {
    if (legacy_watch || ParseBool(req.Query("watch"))) return "watch";
    return name.empty() ? "list" : "get";
  }
  if (m == "POST") return "create";
  if (m == "PUT") return "update";
  if (m == "PATCH") return "patch";
  if (m == "DELETE") return name.empty() ? "deletecollection" : "delete";
  return "";
}

// kube-apiserver's answer to a request that outlived its deadline.
api::StatusError TimeoutError() {
  api::StatusError e;
  e.code = 504;
  e.reason = "Timeout";
  e.message =
      "Timeout: request did not complete within requested timeout - "
      "context deadline exceeded";
  e.has_details = true;
  return e;
}

// metadata.name of a request body (JSON, YAML or protobuf), or "".
std::string BodyName(const HttpRequest& req) {
  auto d = DecodeBody(req);
  if (!d.ok()) return "";
  const rapidjson::Value* n = rapidjson::Pointer("/metadata/name").Get(*d);
  return n != nullptr && n->IsString() ? n->GetString() : "";
}

// The error an ErrorRule injects into a request for `name`.
api::StatusError InjectedError(const ErrorRule& rule, const ResourceInfo& r,
                               const std::string& name) {
  switch (rule.code) {
    case 409:
      return api::StatusError::StaleConflict(r.group_resource(), name);
    case 429:
      return api::StatusError::TooManyRequests(
          "the server has received too many requests and has asked us to "
          "try again later",
          rule.retry_after_seconds);
    case 504:
      return TimeoutError();
    default:
      return api::StatusError::InternalError("injected fault");
  }
}

// The answer of a request made while fault rules are set: with
// `timeout_after_store`, 504 Timeout in place of a success (the request's
// write is stored, its answer lost, as when kube-apiserver times out after
// the storage commit; failures keep their own answer); and nothing at all,
// the connection closed, once the crash fence is up for the client.
class FaultyExchange : public HttpExchange {
 public:
  FaultyExchange(HttpExchange* ex, const FaultInjector* faults,
                 std::string_view user_agent, bool timeout_after_store)
      : ex_(ex),
        faults_(faults),
        user_agent_(user_agent),
        timeout_after_store_(timeout_after_store) {}
  void Respond(HttpResponse response) override {
    if (faults_->crashed(user_agent_)) {
      ex_->WriteRaw("");
      return;
    }
    if (timeout_after_store_ && response.status / 100 == 2) {
      return SendApiError(ex_, TimeoutError());
    }
    ex_->Respond(std::move(response));
  }
  bool StartStream(const int status, const std::string& content_type,
                   const std::vector<std::pair<std::string, std::string>>&
                       headers) override {
    if (faults_->crashed(user_agent_)) {
      ex_->WriteRaw("");
      return false;
    }
    return ex_->StartStream(status, content_type, headers);
  }
  bool WriteChunk(std::string_view data) override {
    return ex_->WriteChunk(data);
  }
  void EndStream() override { ex_->EndStream(); }
  bool WriteRaw(std::string_view bytes) override {
    return ex_->WriteRaw(bytes);
  }
  int ReadRaw(char* out, size_t n, absl::Duration timeout) override {
    return ex_->ReadRaw(out, n, timeout);
  }
  bool Cancelled() override { return ex_->Cancelled(); }

 private:
  HttpExchange* const ex_;
  const FaultInjector* const faults_;
  const std::string_view user_agent_;
  const bool timeout_after_store_;
};

// The handler's authenticator and authorizer when none is given: the
// single `token` (its user in system:masters) or anonymous, and
// AlwaysAllow.
HandlerOptions WithAuthDefaults(HandlerOptions o) {
  if (o.authenticator == nullptr) {
    auth::AuthenticatorOptions ao;
    if (!o.token.empty()) {
      ao.tokens[o.token] = auth::UserInfo{"admin", "", {auth::kSystemMasters}};
    }
    ao.anonymous = o.token.empty();
    o.authenticator = std::make_shared<auth::Authenticator>(std::move(ao));
  }
  if (o.authorizer == nullptr) {
    o.authorizer = std::make_shared<auth::AlwaysAllowAuthorizer>();
  }
  return o;
}

// kube's 403 for attributes the authorizer refused (responsewriters.
// Forbidden): "<resource> "<name>" is forbidden: User ... cannot ...",
// "forbidden: User ... cannot get path ..." for a non-resource request.
api::StatusError ForbiddenError(const auth::Attributes& a,
                                const std::string& reason) {
  std::string why = auth::ForbiddenMessage(a);
  if (!reason.empty()) why = Cat(why, ": ", reason);
  if (!a.resource_request || a.resource.empty()) {
    api::StatusError e =
        api::StatusError::Forbidden({a.api_group, a.resource}, a.name, why);
    e.message = Cat("forbidden: ", why);
    return e;
  }
  return api::StatusError::Forbidden({a.api_group, a.resource}, a.name, why);
}

std::string TimestampOf(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

}  // namespace

// /healthz, /livez and /readyz as kube-apiserver answers them: "ok" (or,
// with ?verbose, one line per check); /<endpoint>/<check> for one of the
// endpoint's checks; anything else under them is Go's 404.
void ApiHandler::HandleHealth(const HttpRequest& req, HttpExchange* ex) {
  static const std::vector<std::string> kLive = {"ping", "log", "etcd"};
  static const std::vector<std::string> kReady = {
      "ping", "log", "etcd", "etcd-readiness", "informer-sync", "shutdown"};
  const std::string& path = req.path;
  const size_t slash = path.find('/', 1);
  const std::string endpoint = path.substr(1, slash - 1);
  const std::vector<std::string>& checks =
      endpoint == "readyz" ? kReady : kLive;
  HttpResponse r;
  r.content_type = "text/plain; charset=utf-8";
  if (slash != std::string::npos) {
    const std::string check = path.substr(slash + 1);
    if (std::find(checks.begin(), checks.end(), check) == checks.end()) {
      r.status = 404;
      r.body = "404 page not found\n";
    } else {
      r.body = "ok";
    }
  } else if (req.HasQuery("verbose")) {
    for (const std::string& check : checks) {
      r.body += Cat("[+]", check, " ok\n");
    }
    r.body += Cat(endpoint, " check passed\n");
  } else {
    r.body = "ok";
  }
  ex->Respond(std::move(r));
}

ApiHandler::ApiHandler(Registry* registry, HandlerOptions options)
    : registry_(registry),
      options_(WithAuthDefaults(std::move(options))),
      openapi_(registry_, options_.git_version, options_.clock) {}

void ApiHandler::Handle(const HttpRequest& req, HttpExchange* ex) {
  const std::string& path = req.path;
  VLOG(2) << "request method=" << req.method << " target=" << req.target;
  // A client behind the crash fence is gone: its requests go unanswered.
  if (options_.faults->active() &&
      options_.faults->crashed(req.Header("user-agent"))) {
    ex->WriteRaw("");
    return;
  }
  bool is_health = path == "/healthz" || path == "/livez" ||
                   path == "/readyz" || absl::StartsWith(path, "/healthz/") ||
                   absl::StartsWith(path, "/livez/") ||
                   absl::StartsWith(path, "/readyz/");
  auth::UserInfo user;
  if (!is_health && path != "/version" && path != "/version/") {
    if (!Authenticate(req, ex, &user)) return;
    auth::Attributes attributes = auth::RequestAttributes(
        req.method, path, ParseBool(req.Query("watch")), user);
    auth::Decision d = options_.authorizer->Authorize(attributes);
    if (!d.allowed) {
      VLOG(2) << "forbidden user=" << user.name << " verb=" << attributes.verb
              << " path=" << path;
      SendApiError(ex, ForbiddenError(attributes, d.reason));
      return;
    }
  }
  if (is_health) {
    HandleHealth(req, ex);
    return;
  }
  if (path == "/version" || path == "/version/") {
    SendJson(ex, 200, VersionJson(options_));
    return;
  }
  if (OpenApiService::Serves(path)) {
    openapi_.Handle(req, ex);
    return;
  }
  if (options_.enable_fault_endpoint &&
      (path == "/fault-injection" ||
       absl::StartsWith(path, "/fault-injection/"))) {
    HandleFaults(req, ex);
    return;
  }
  std::vector<std::string> segs;
  for (std::string& s : Split(path, '/')) {
    if (!s.empty()) segs.push_back(std::move(s));
  }
  if (segs.empty() || (segs[0] != "api" && segs[0] != "apis")) {
    SendApiError(ex, api::StatusError::PathNotFound());
    return;
  }
  ResourceRegistry* resources = registry_->resources();
  bool legacy = segs[0] == "api";
  if (segs.size() == 1) {
    if (req.method != "GET") {
      SendApiError(ex,
                   api::StatusError::MethodNotSupported({"", ""}, req.method));
      return;
    }
    for (const MediaType& m : ParseAccept(req.Header("accept"))) {
      if (m.type == "application/json" &&
          m.Param("as") == "APIGroupDiscoveryList" &&
          m.Param("g") == "apidiscovery.k8s.io" &&
          (m.Param("v") == "v2" || m.Param("v") == "v2beta1")) {
        HttpResponse r;
        r.content_type =
            Cat("application/json;g=apidiscovery.k8s.io;v=", m.Param("v"),
                ";as=APIGroupDiscoveryList");
        r.body = AggregatedDiscoveryJson(*resources, legacy, m.Param("v"));
        r.headers.push_back({"Vary", "Accept"});
        ex->Respond(std::move(r));
        return;
      }
      if (IsJsonLike(m)) break;
    }
    std::string address =
        options_.server_address ? options_.server_address() : "127.0.0.1:0";
    SendJson(ex, 200,
             legacy ? ApiVersionsJson(address) : ApiGroupListJson(*resources));
    return;
  }
  size_t gv_len = legacy ? 2 : 3;
  if (legacy && segs[1] != "v1") {
    SendApiError(ex, api::StatusError::PathNotFound());
    return;
  }
  if (!legacy && segs.size() == 2) {
    auto doc = ApiGroupJson(*resources, segs[1]);
    if (!doc.has_value()) {
      SendApiError(ex, api::StatusError::PathNotFound());
      return;
    }
    SendJson(ex, 200, *doc);
    return;
  }
  if (segs.size() == gv_len) {
    auto doc = ApiResourceListJson(*resources, legacy ? "" : segs[1],
                                   legacy ? "v1" : segs[2]);
    if (!doc.has_value()) {
      SendApiError(ex, api::StatusError::PathNotFound());
      return;
    }
    SendJson(ex, 200, *doc);
    return;
  }
  HandleResource(req, user, ex);
}

bool ApiHandler::Authenticate(const HttpRequest& req, HttpExchange* ex,
                              auth::UserInfo* user) const {
  auth::Authentication authn = options_.authenticator->AuthenticateRequest(
      req.Header("authorization"), req.client_cert_cn,
      req.client_cert_organizations);
  if (authn.outcome == auth::Authentication::Outcome::kRejected) {
    VLOG(2) << "unauthorized path=" << req.path << " why=" << authn.error;
    SendApiError(ex, api::StatusError::Unauthorized());
    return false;
  }
  *user = std::move(authn.user);
  // Impersonation (kubectl --as, --as-group): each name needs
  // `impersonate` on users, groups or the ServiceAccount.
  const std::string as_user = req.Header("impersonate-user");
  const std::string as_groups = req.Header("impersonate-group");
  if (as_user.empty()) {
    if (!as_groups.empty()) {
      SendApiError(ex, api::StatusError::InternalError(
                           "requested [{Group  " + as_groups +
                           "  }] without impersonating a user"));
      return false;
    }
    return true;
  }
  auth::UserInfo as;
  as.name = as_user;
  std::vector<auth::Attributes> checks;
  auto check = [&](const std::string& resource, const std::string& ns,
                   const std::string& name) {
    auth::Attributes a;
    a.user = *user;
    a.verb = "impersonate";
    a.resource = resource;
    a.ns = ns;
    a.name = name;
    checks.push_back(std::move(a));
  };
  const std::string prefix = auth::kServiceAccountPrefix;
  if (absl::StartsWith(as_user, prefix) &&
      as_user.find(':', prefix.size()) != std::string::npos) {
    const size_t colon = as_user.find(':', prefix.size());
    const std::string ns = as_user.substr(prefix.size(), colon - prefix.size());
    check("serviceaccounts", ns, as_user.substr(colon + 1));
    as.groups = {auth::kAllServiceAccounts,
                 Cat(auth::kAllServiceAccounts, ":", ns)};
  } else {
    check("users", "", as_user);
  }
  for (std::string& g : Split(as_groups, ',')) {
    if (g.empty()) continue;
    check("groups", "", g);
    as.groups.push_back(std::move(g));
  }
  for (const auth::Attributes& a : checks) {
    auth::Decision d = options_.authorizer->Authorize(a);
    if (!d.allowed) {
      SendApiError(ex, ForbiddenError(a, d.reason));
      return false;
    }
  }
  if (as.name != auth::kAnonymousUser && !as.InGroup(auth::kAllAuthenticated)) {
    as.groups.push_back(auth::kAllAuthenticated);
  }
  *user = std::move(as);
  return true;
}

void ApiHandler::HandleTokenRequest(const ResourceInfo& r,
                                    const std::string& ns,
                                    const std::string& name,
                                    const HttpRequest& req, HttpExchange* ex) {
  if (options_.service_account_tokens == nullptr) {
    return SendApiError(ex, api::StatusError::PathNotFound());
  }
  auto body = DecodeBody(req);
  if (!body.ok()) return SendError(ex, body.status());
  const rapidjson::Value* spec = Member(*body, "spec");
  int64_t seconds = 3600;
  std::vector<std::string> audiences;
  if (spec != nullptr && spec->IsObject()) {
    const rapidjson::Value* e = Member(*spec, "expirationSeconds");
    if (e != nullptr && e->IsInt64()) seconds = e->GetInt64();
    const rapidjson::Value* aud = Member(*spec, "audiences");
    if (aud != nullptr && aud->IsArray()) {
      for (const auto& v : aud->GetArray()) {
        if (v.IsString()) audiences.emplace_back(v.GetString());
      }
    }
  }
  // ValidateTokenRequest.
  if (seconds < 600 || seconds > (int64_t{1} << 32)) {
    return SendApiError(
        ex, api::StatusError::Invalid(
                {"authentication.k8s.io", "TokenRequest"}, name,
                {FieldErr(api::FieldError::Type::kInvalid,
                          "spec.expirationSeconds", std::to_string(seconds),
                          seconds < 600 ? "may not specify a duration less "
                                          "than 10 minutes"
                                        : "may not specify a duration larger "
                                          "than 2^32 seconds")}));
  }
  if (audiences.empty()) audiences = options_.api_audiences;
  auto sa = registry_->Get(r, ns, name);
  if (!sa.ok()) return SendError(ex, sa.status());
  absl::Time expiry;
  auto token = options_.service_account_tokens->Issue(
      ns, name, std::string((*sa)->uid()), audiences, absl::Seconds(seconds),
      &expiry);
  if (!token.ok()) return SendError(ex, token.status());
  rapidjson::Document out(rapidjson::kObjectType);
  auto& a = out.GetAllocator();
  auto str = [&a](std::string_view v) {
    return rapidjson::Value(v.data(),
                            static_cast<rapidjson::SizeType>(v.size()), a);
  };
  out.AddMember("kind", "TokenRequest", a);
  out.AddMember("apiVersion", "authentication.k8s.io/v1", a);
  rapidjson::Value metadata(rapidjson::kObjectType);
  metadata.AddMember("name", str(name), a);
  metadata.AddMember("namespace", str(ns), a);
  metadata.AddMember("creationTimestamp", rapidjson::Value(), a);
  out.AddMember("metadata", metadata, a);
  rapidjson::Value out_spec(rapidjson::kObjectType);
  rapidjson::Value aud(rapidjson::kArrayType);
  for (const std::string& v : audiences) aud.PushBack(str(v), a);
  out_spec.AddMember("audiences", aud, a);
  out_spec.AddMember("expirationSeconds", seconds, a);
  out_spec.AddMember("boundObjectRef", rapidjson::Value(), a);
  out.AddMember("spec", out_spec, a);
  rapidjson::Value status(rapidjson::kObjectType);
  status.AddMember("token", str(*token), a);
  status.AddMember("expirationTimestamp", str(TimestampOf(expiry)), a);
  out.AddMember("status", status, a);
  auto text = json::JsonToString(out);
  if (!text.ok()) return SendError(ex, text.status());
  SendJson(ex, 201, *text);
}

void ApiHandler::HandleFaults(const HttpRequest& req, HttpExchange* ex) {
  FaultInjector* faults = options_.faults;
  if (req.path == "/fault-injection/compact" && req.method == "POST") {
    registry_->storage()->Compact();
    SendJson(ex, 200,
             Cat(R"({"compactedResourceVersion":")",
                 registry_->storage()->CurrentResourceVersion(), "\"}"));
    return;
  }
  if (req.path == "/fault-injection/restart" && req.method == "POST") {
    SendJson(ex, 200, R"({"restarted":true})");
    if (options_.restart) options_.restart();
    return;
  }
  if (req.path == "/fault-injection/release-watch-holds" &&
      req.method == "POST") {
    SendJson(ex, 200, Cat(R"({"released":)", faults->ReleaseWatchHolds(), "}"));
    return;
  }
  if (req.path == "/fault-injection/writes" && req.method == "GET" &&
      options_.write_log != nullptr) {
    int64_t since = 0;
    if (req.HasQuery("since") &&
        !absl::SimpleAtoi(req.Query("since"), &since)) {
      SendApiError(ex, api::StatusError::BadRequest(
                           Cat("invalid since: ", Quote(req.Query("since")))));
      return;
    }
    SendJson(ex, 200, WriteLog::ToJson(options_.write_log->Since(since)));
    return;
  }
  if (req.path != "/fault-injection") {
    SendApiError(ex, api::StatusError::PathNotFound());
    return;
  }
  // The options' members, then the rules'.
  auto current = [faults]() {
    std::string json = faults->options().ToJson();
    json.pop_back();
    return Cat(json, ",", faults->RulesJson(), "}");
  };
  if (req.method == "GET") {
    SendJson(ex, 200, current());
    return;
  }
  if (req.method == "PUT" || req.method == "POST" || req.method == "PATCH") {
    auto o = FaultOptions::FromJson(req.body, faults->options());
    if (!o.ok()) {
      SendApiError(ex,
                   api::StatusError::BadRequest(ToStd(o.status().message())));
      return;
    }
    // FromJson has parsed it: an object.
    rapidjson::Document d;
    json::ParseJson(req.body, &d).IgnoreError();
    absl::Status rules = faults->ApplyRulesJson(d);
    if (!rules.ok()) {
      SendApiError(ex, api::StatusError::BadRequest(ToStd(rules.message())));
      return;
    }
    faults->set_options(*o);
    SendJson(ex, 200, current());
    return;
  }
  SendApiError(ex, api::StatusError::MethodNotSupported({"", "fault-injection"},
                                                        req.method));
}

void ApiHandler::HandleResource(const HttpRequest& raw,
                                const auth::UserInfo& user, HttpExchange* ex) {
  // kube-apiserver reads JSON bodies (objects, DeleteOptions, patches) with
  // Go's decoder, which reads every byte that is not valid UTF-8 as U+FFFD
  // instead of failing: a ConfigMap value with a stray \xff is stored with
  // U+FFFD, a name with one is refused by name validation (422). Do the
  // same, once, for every JSON body; YAML bodies stay strict, as go-yaml's.
  HttpRequest coerced;
  const bool json_body =
      absl::StrContains(ParseMediaType(raw.Header("content-type")).type,
                        "json") ||
      raw.Header("content-type").empty();
  if (json_body && json::ReplaceInvalidUtf8(raw.body, &coerced.body)) {
    std::string body = std::move(coerced.body);
    coerced = raw;
    coerced.body = std::move(body);
  }
  const HttpRequest& req = coerced.method.empty() ? raw : coerced;
  // The client's identity for the write log and fault rules.
  const std::string user_agent = req.Header("user-agent");
  ScopedWriteContext who({.user_agent = user_agent});
  std::vector<std::string> segs;
  for (std::string& s : Split(req.path, '/')) {
    if (!s.empty()) segs.push_back(std::move(s));
  }
  bool legacy = segs[0] == "api";
  std::string group = legacy ? "" : segs[1];
  std::string version = legacy ? segs[1] : segs[2];
  std::vector<std::string> rest(segs.begin() + (legacy ? 2 : 3), segs.end());
  bool legacy_watch = false;
  if (!rest.empty() && rest[0] == "watch") {
    legacy_watch = true;
    rest.erase(rest.begin());
  }
  std::string ns, resource, name, sub;
  if (rest.size() >= 3 && rest[0] == "namespaces" &&
      !(rest.size() == 3 && (rest[2] == "status" || rest[2] == "finalize"))) {
    ns = rest[1];
    resource = rest[2];
    if (rest.size() > 3) name = rest[3];
    if (rest.size() > 4) sub = rest[4];
    if (rest.size() > 5) {
      SendApiError(ex, api::StatusError::PathNotFound());
      return;
    }
  } else if (!rest.empty()) {
    resource = rest[0];
    if (rest.size() > 1) name = rest[1];
    if (rest.size() > 2) sub = rest[2];
    if (rest.size() > 3) {
      SendApiError(ex, api::StatusError::PathNotFound());
      return;
    }
  }
  ResourceInfoPtr rp = registry_->resources()->Lookup(group, version, resource);
  if (rp == nullptr || (!rp->namespaced() && !ns.empty()) ||
      (!sub.empty() && !rp->mapping.HasSubresource(sub))) {
    SendApiError(ex, api::StatusError::PathNotFound());
    return;
  }
  const ResourceInfo& r = *rp;
  if (r.namespaced() && ns.empty() && !name.empty()) {
    SendApiError(ex, api::StatusError::PathNotFound());
    return;
  }

  // Fault injection applies to resource requests only.
  FaultInjector* faults = options_.faults;
  FaultOptions fo = faults->options();
  // The client is gone or the server is stopping: nobody to answer.
  const absl::Duration delay = faults->TakeDelay();
  if (delay > absl::ZeroDuration() && !SleepUnlessCancelled(delay, ex)) return;
  // Fault rules: one atomic load unless a rule is set.
  std::optional<FaultyExchange> faulty;
  std::optional<ScopedWriteContext> answered_504;
  if (faults->active()) {
    // A create is matched and answered by the name in its body.
    const std::string target =
        name.empty() && req.method == "POST" ? BodyName(req) : name;
    std::optional<ErrorRule> rule =
        faults->TakeError(RequestVerb(req, legacy_watch, name), r.group(),
                          r.resource(), sub, ns, target, user_agent);
    if (rule.has_value() && !rule->after_store) {
      SendApiError(ex, InjectedError(*rule, r, target));
      return;
    }
    const bool after_store = rule.has_value() && rule->after_store;
    if (after_store) answered_504.emplace(WriteContext{.code = 504});
    faulty.emplace(ex, faults, user_agent, after_store);
    ex = &*faulty;
  }
  switch (faults->Roll()) {
    case FaultInjector::Verdict::kError:
      SendApiError(ex, api::StatusError::InternalError("injected fault"));
      return;
    case FaultInjector::Verdict::kThrottle:
      SendApiError(ex, api::StatusError::TooManyRequests(
                           "the server has received too many requests and "
                           "has asked us to try again later",
                           fo.retry_after_seconds));
      return;
    case FaultInjector::Verdict::kNone:
      break;
  }

  if (sub == "log") {
    return ServePodLog(registry_, r, ns, name, req, ex, options_.clock);
  }
  if (sub == "exec" || sub == "attach" || sub == "portforward") {
    return ServePodStream(registry_, r, ns, name, sub, req, ex);
  }
  if (auth::IsReview(r)) {
    if (req.method != "POST" || !name.empty()) {
      return SendApiError(ex, api::StatusError::MethodNotSupported(
                                  r.group_resource(), req.method));
    }
    auto review = DecodeBody(req);
    if (!review.ok()) return SendError(ex, review.status());
    auto answer = auth::AnswerReview(r, ns, *review, user, *options_.authorizer,
                                     *options_.authenticator);
    if (!answer.ok()) return SendError(ex, answer.status());
    return SendJson(ex, 201, std::move(*answer));
  }
  if (sub == "token" && r.resource() == "serviceaccounts" &&
      r.group().empty()) {
    if (req.method != "POST") {
      return SendApiError(ex, api::StatusError::MethodNotSupported(
                                  r.group_resource(), req.method));
    }
    return HandleTokenRequest(r, ns, name, req, ex);
  }
  // Admission that needs the written object: roles and bindings grant
  // nothing the writer does not hold; ownerReferences need the owner's
  // finalizers (when that plugin is on).
  const bool write = (req.method == "POST" && name.empty()) ||
                     req.method == "PUT" || req.method == "PATCH";
  const bool check_escalation = write && options_.rbac != nullptr &&
                                auth::IsRbacResource(r) && !DryRun(req);
  const bool check_owners = write &&
                            options_.owner_references_permission_enforcement &&
                            options_.authorizer->enforcing();
  if (check_escalation || check_owners) {
    absl::Status s;
    // The written object, computed without writing it.
    std::optional<rapidjson::Document> body;
    api::ObjectPtr patched;
    if (req.method == "PATCH") {
      const std::optional<PatchType> type =
          api::PatchTypeFromContentType(req.Header("content-type"));
      // A patch of a subresource (status) keeps ownerReferences as they
      // are: only the object's own patches are looked at.
      if (type.has_value() && sub.empty()) {
        PatchOptions po;
        po.dry_run = true;
        po.field_manager = req.Query("fieldManager");
        if (po.field_manager.empty() && *type == api::PatchType::kApply) {
          po.field_manager = "kubectl";
        }
        po.user_agent = req.Header("user-agent");
        if (req.HasQuery("force")) po.force = ParseBool(req.Query("force"));
        auto w = registry_->Patch(r, ns, name, *type, req.body, po);
        if (w.ok()) patched = w->object;
      }
    } else {
      auto decoded = DecodeBody(req);
      if (decoded.ok()) body = std::move(*decoded);
    }
    const rapidjson::Value* object =
        patched != nullptr ? &patched->json()
                           : (body.has_value() ? &*body : nullptr);
    if (object != nullptr && check_escalation) {
      s = auth::ConfirmNoEscalation(*options_.rbac, r, ns, *object, user);
    }
    if (object != nullptr && check_owners && s.ok()) {
      api::ObjectPtr old;
      std::string object_name = name;
      if (req.method == "POST") {
        const rapidjson::Value* md =
            object->IsObject() ? Member(*object, "metadata") : nullptr;
        if (md != nullptr && md->IsObject()) {
          object_name = json::StringMember(*md, "name");
        }
      } else if (auto got = registry_->Get(r, ns, name); got.ok()) {
        old = *got;
      }
      auth::Attributes denied;
      s = auth::ConfirmOwnerReferencePermissions(
          *options_.authorizer, *registry_->resources(), r, sub, ns,
          object_name, *object, old != nullptr ? &old->json() : nullptr, user,
          &denied);
      if (!s.ok() && !denied.verb.empty()) {
        // What the admission check was refused, as a request for it would
        // read.
        VLOG(2) << "forbidden user=" << user.name << " verb=" << denied.verb
                << " path="
                << (denied.api_group.empty() ? Cat("/api/", denied.api_version)
                                             : Cat("/apis/", denied.api_group,
                                                   "/", denied.api_version))
                << (denied.ns.empty() ? "" : Cat("/namespaces/", denied.ns))
                << "/" << denied.resource << "/" << denied.name
                << (denied.subresource.empty() ? ""
                                               : Cat("/", denied.subresource));
      }
    }
    if (!s.ok()) return SendError(ex, s);
  }

  Negotiated neg = NegotiateResource(req, options_.table_convertor != nullptr);
  if (!neg.acceptable) {
    SendApiError(ex, api::StatusError::NotAcceptable(
                         "only the following media types are accepted: "
                         "application/json, application/yaml"));
    return;
  }
  // Metadata only: the kind asked for must fit the answer, as
  // kube-apiserver's transformResponseObject checks.
  using Partial = Negotiated::Partial;
  const std::string& partial_version = neg.partial_version;
  auto not_a_list = [&]() {
    SendApiError(ex, api::StatusError::NotAcceptable(
                         Cat("you requested PartialObjectMetadataList, but the "
                             "requested object is not a list (",
                             r.kind(), ")")));
  };
  auto a_list = [&]() {
    SendApiError(ex, api::StatusError::NotAcceptable(
                         Cat("you requested PartialObjectMetadata, but the "
                             "requested object is a list (",
                             r.mapping.list_kind, ")")));
  };
  const std::string_view list_partial_version =
      neg.partial == Partial::kList ? std::string_view(partial_version) : "";
  TableRequest table_request;
  std::string include = req.Query("includeObject");
  if (include == "None") {
    table_request.include_object = TableRequest::IncludeObject::kNone;
  } else if (include == "Object") {
    table_request.include_object = TableRequest::IncludeObject::kObject;
  }
  auto send_object = [&](int code, const api::ObjectPtr& o,
                         const std::vector<std::string>& warnings = {}) {
    HttpResponse res;
    res.status = code;
    // kube-apiserver's form: Warning: 299 - "unknown field \"spec.x\""
    for (const std::string& w : warnings) {
      res.headers.push_back({"Warning", Cat("299 - ", Quote(w))});
    }
    if (neg.partial == Partial::kList) return not_a_list();
    if (neg.partial == Partial::kObject) {
      res.body = PartialObjectMetadataJson(*o, partial_version);
      ex->Respond(std::move(res));
      return;
    }
    if (neg.table && sub.empty()) {
      auto t = options_.table_convertor->ConvertToTable(r, {o}, table_request);
      if (t.ok()) {
        res.body = std::move(*t);
        ex->Respond(std::move(res));
        return;
      }
    }
    res.body = o->ToJson();
    ex->Respond(std::move(res));
  };
  auto forbid_verb = [&](const char* verb) {
    SendApiError(
        ex, api::StatusError::MethodNotSupported(r.group_resource(), verb));
  };

  const std::string& method = req.method;
  bool watch = legacy_watch || ParseBool(req.Query("watch"));
  if (legacy_watch && !name.empty()) {
    // /watch/.../{name}: kube-apiserver reads the name as one more field
    // selector term, metadata.name=<name>, on a watch of the collection.
    if (method != "GET" || !sub.empty()) {
      return SendApiError(ex, api::StatusError::PathNotFound());
    }
    if (!r.HasVerb("watch")) return forbid_verb("watch");
    if (neg.partial == Partial::kList) return not_a_list();
    HttpRequest named = req;
    std::string selector = req.Query("fieldSelector");
    named.query["fieldSelector"] =
        Cat(selector, selector.empty() ? "" : ",", "metadata.name=", name);
    ServeWatch(r, ns, named, ex, neg.table,
               neg.partial == Partial::kObject ? partial_version : "");
    return;
  }
  if (name.empty()) {
    if (method == "GET") {
      if (watch) {
        if (!r.HasVerb("watch")) return forbid_verb("watch");
        if (neg.partial == Partial::kList) return not_a_list();
        ServeWatch(r, ns, req, ex, neg.table,
                   neg.partial == Partial::kObject ? partial_version : "");
        return;
      }
      if (!r.HasVerb("list")) return forbid_verb("list");
      if (neg.partial == Partial::kObject) return a_list();
      auto lo = ParseListOptions(req);
      if (!lo.ok()) return SendError(ex, lo.status());
      if (options_.faults != nullptr &&
          options_.faults->options().ignore_shard_selector) {
        lo->shard_selector = api::ShardSelector();
      }
      auto l = registry_->List(r, ns, *lo);
      if (!l.ok()) return SendError(ex, l.status());
      if (neg.table) {
        table_request.resource_version = l->resource_version;
        table_request.continue_token = l->continue_token;
        table_request.remaining_item_count = l->remaining_item_count;
        auto t = options_.table_convertor->ConvertToTable(r, l->items,
                                                          table_request);
        if (t.ok()) return SendJson(ex, 200, *t);
        LOG(WARNING) << "table conversion failed: " << t.status();
      }
      if (l->items.size() >= kStreamListItems) {
        return StreamListJson(r, *l, list_partial_version, ex);
      }
      return SendJson(ex, 200, ListJson(r, *l, list_partial_version));
    }
    if (method == "POST") {
      if (!r.HasVerb("create")) return forbid_verb("create");
      auto b = BuilderFromBody(req);
      if (!b.ok()) return SendError(ex, b.status());
      WriteOptions wo;
      wo.dry_run = DryRun(req);
      wo.field_validation = req.Query("fieldValidation");
      wo.field_manager = req.Query("fieldManager");
      wo.user_agent = req.Header("user-agent");
      auto w = registry_->Create(r, ns, std::move(*b), wo);
      if (!w.ok()) return SendError(ex, w.status());
      return send_object(201, w->object, w->warnings);
    }
    if (method == "DELETE") {
      if (!r.HasVerb("deletecollection"))
        return forbid_verb("deletecollection");
      if (neg.partial == Partial::kObject) return a_list();
      auto lo = ParseListOptions(req);
      if (!lo.ok()) return SendError(ex, lo.status());
      auto dopts = ParseDeleteOptions(req);
      if (!dopts.ok()) return SendError(ex, dopts.status());
      auto l = registry_->DeleteCollection(r, ns, *lo, *dopts);
      if (!l.ok()) return SendError(ex, l.status());
      return SendJson(ex, 200, ListJson(r, *l, list_partial_version));
    }
    return SendApiError(
        ex, api::StatusError::MethodNotSupported(r.group_resource(), method));
  }

  if (method == "GET") {
    if (!r.HasVerb("get")) return forbid_verb("get");
    if (sub == "scale") {
      auto s = registry_->GetScale(r, ns, name);
      if (!s.ok()) return SendError(ex, s.status());
      return SendJson(ex, 200, (*s)->ToJson());
    }
    auto o = registry_->Get(r, ns, name);
    if (!o.ok()) return SendError(ex, o.status());
    return send_object(200, *o);
  }
  if (method == "PUT") {
    if (!r.HasVerb("update")) return forbid_verb("update");
    WriteOptions wo;
    wo.dry_run = DryRun(req);
    wo.field_validation = req.Query("fieldValidation");
    wo.field_manager = req.Query("fieldManager");
    wo.user_agent = req.Header("user-agent");
    wo.subresource = sub;
    if (sub == "scale") {
      auto d = DecodeBody(req);
      if (!d.ok()) return SendError(ex, d.status());
      auto w = registry_->UpdateScale(r, ns, name, *d, wo);
      if (!w.ok()) return SendError(ex, w.status());
      return SendJson(ex, 200, w->object->ToJson());
    }
    auto b = BuilderFromBody(req);
    if (!b.ok()) return SendError(ex, b.status());
    auto w = registry_->Update(r, ns, name, std::move(*b), wo);
    if (!w.ok()) return SendError(ex, w.status());
    return send_object(w->created ? 201 : 200, w->object, w->warnings);
  }
  if (method == "PATCH") {
    if (!r.HasVerb("patch")) return forbid_verb("patch");
    if (sub == "finalize") {
      return SendApiError(ex, api::StatusError::MethodNotSupported(
                                  r.group_resource(), "patch"));
    }
    const std::optional<PatchType> type =
        api::PatchTypeFromContentType(req.Header("content-type"));
    if (!type.has_value()) {
      // kube-apiserver's order: json, merge, strategic (built-ins), apply.
      return SendApiError(ex, api::StatusError::UnsupportedMediaType(
                                  UnsupportedPatchMediaTypeMessage(!r.custom)));
    }
    PatchOptions po;
    po.dry_run = DryRun(req);
    po.field_validation = req.Query("fieldValidation");
    po.field_manager = req.Query("fieldManager");
    po.user_agent = req.Header("user-agent");
    po.subresource = sub;
    if (req.HasQuery("force")) po.force = ParseBool(req.Query("force"));
    auto w = registry_->Patch(r, ns, name, *type, req.body, po);
    if (!w.ok()) return SendError(ex, w.status());
    if (sub == "scale") return SendJson(ex, 200, w->object->ToJson());
    return send_object(w->created ? 201 : 200, w->object, w->warnings);
  }
  if (method == "DELETE") {
    if (!r.HasVerb("delete") || !sub.empty()) return forbid_verb("delete");
    auto dopts = ParseDeleteOptions(req);
    if (!dopts.ok()) return SendError(ex, dopts.status());
    auto d = registry_->Delete(r, ns, name, *dopts);
    if (!d.ok()) return SendError(ex, d.status());
    if (d->removed && !r.return_deleted_object) {
      return SendJson(ex, 200, DeleteSuccessJson(r, *d->object));
    }
    return SendJson(ex, 200, d->object->ToJson());
  }
  SendApiError(
      ex, api::StatusError::MethodNotSupported(r.group_resource(), method));
}

}  // namespace apiserver
}  // namespace kcr
