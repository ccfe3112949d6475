// OpenApiService (openapi.h): the documents of the CRDs stored now, built
// again when a CRD changes, and served as kube-openapi's handlers serve
// them: media-type negotiation, ETags and hashed URLs.
#include "apiserver/endpoints/openapi.h"

#include <openssl/sha.h>

#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "apiserver/endpoints/negotiation.h"
#include "apiserver/endpoints/openapi_kinds.h"
#include "apiserver/endpoints/openapi_schemas.h"
#include "apiserver/endpoints/openapi_v2.h"
#include "apiserver/endpoints/openapi_v3.h"
#include "base/str_cat.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {
namespace {

using openapi_internal::HasPrefix;

std::string HttpDate(absl::Time t) {
  return absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", t, absl::UTCTimeZone());
}

}  // namespace

std::string OpenApiHash(std::string_view document) {
  unsigned char digest[SHA512_DIGEST_LENGTH];
  SHA512(reinterpret_cast<const unsigned char*>(document.data()),
         document.size(), digest);
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(2 * SHA512_DIGEST_LENGTH);
  for (unsigned char b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

// The documents of one set of CRDs.
struct OpenApiService::Documents {
  // The CRDs they describe: uid and resourceVersion of each, in order.
  std::string key;
  absl::Time built;
  struct Document {
    std::string json;
    std::string hash;
  };
  std::map<std::string, Document> v3;
  std::string v3_index;
  std::string v3_index_hash;
  std::string v2;
  std::string v2_hash;
};

OpenApiService::OpenApiService(Registry* registry, std::string git_version,
                               const Clock* clock)
    : registry_(registry),
      git_version_(std::move(git_version)),
      clock_(clock) {}

bool OpenApiService::Serves(std::string_view path) {
  return path == "/openapi/v2" || path == "/swagger-2.0.0.pb-v1" ||
         path == "/openapi/v3" || HasPrefix(path, "/openapi/v3/");
}

std::shared_ptr<const OpenApiService::Documents> OpenApiService::Current() {
  // The CRDs whose versions the server serves right now.
  std::vector<api::ObjectPtr> crds = registry_->storage()->Snapshot(
      "apiextensions.k8s.io/customresourcedefinitions");
  std::string key;
  std::vector<OpenApiKind> custom;
  ResourceRegistry* resources = registry_->resources();
  for (const api::ObjectPtr& crd : crds) {
    bool any = false;
    for (OpenApiKind& api : CustomResourceKinds(crd->json())) {
      ResourceInfoPtr info =
          resources->Lookup(api.group, api.version, api.plural);
      if (info == nullptr || !info->custom || info->crd_name != crd->name()) {
        continue;
      }
      any = true;
      custom.push_back(std::move(api));
    }
    if (any) CatAppend(&key, crd->uid(), "/", crd->resource_version(), ";");
  }
  {
    MutexLock l(&mu_);
    if (documents_ != nullptr && documents_->key == key) return documents_;
  }
  // The built-in kinds never change: only the CRDs make documents differ,
  // so their schemas are built only with new documents.
  std::vector<OpenApiKind> apis = BuiltinKinds(*resources);
  apis.insert(apis.end(), std::make_move_iterator(custom.begin()),
              std::make_move_iterator(custom.end()));
  auto docs = std::make_shared<Documents>();
  docs->key = key;
  docs->built = clock_->Now();
  std::map<std::string, std::string> hashes;
  for (auto& [gv, json] : BuildOpenApiV3Documents(apis)) {
    std::string hash = OpenApiHash(json);
    hashes[gv] = hash;
    docs->v3[gv] = Documents::Document{std::move(json), std::move(hash)};
  }
  docs->v3_index = OpenApiV3IndexJson(hashes);
  docs->v3_index_hash = OpenApiHash(docs->v3_index);
  docs->v2 = BuildSwaggerV2Document(apis, git_version_);
  docs->v2_hash = OpenApiHash(docs->v2);
  VLOG(2) << "openapi documents built crds=" << crds.size()
          << " group_versions=" << docs->v3.size();
  MutexLock l(&mu_);
  documents_ = docs;
  return docs;
}

void OpenApiService::Handle(const HttpRequest& req, HttpExchange* ex) {
  if (req.method != "GET" && req.method != "HEAD") {
    HttpResponse r;
    r.status = 405;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "405 method not allowed\n";
    ex->Respond(std::move(r));
    return;
  }
  if (req.path == "/openapi/v2" || req.path == "/swagger-2.0.0.pb-v1") {
    ServeV2(req, ex);
  } else if (req.path == "/openapi/v3") {
    ServeV3Index(req, ex);
  } else {
    ServeV3GroupVersion(req, ex);
  }
}

namespace {

// kube-openapi's media-type choice: the first Accept clause matching one
// of `offered` ("application/json" style), wildcards included; "" when
// none does. A missing Accept is */*.
std::string Choose(const std::string& accept,
                   const std::vector<std::string>& offered) {
  std::vector<MediaType> clauses = ParseAccept(accept.empty() ? "*/*" : accept);
  for (const MediaType& m : clauses) {
    if (m.Param("q") == "0") continue;
    const size_t slash = m.type.find('/');
    const std::string type = m.type.substr(0, slash);
    const std::string sub =
        slash == std::string::npos ? "" : m.type.substr(slash + 1);
    for (const std::string& o : offered) {
      const size_t os = o.find('/');
      if ((type == "*" || type == o.substr(0, os)) &&
          (sub == "*" || sub == o.substr(os + 1))) {
        return o;
      }
    }
  }
  return "";
}

constexpr char kV2Protobuf[] =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
constexpr char kV2ProtobufDeprecated[] =
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

void NotAcceptable(HttpExchange* ex) {
  HttpResponse r;
  r.status = 406;
  r.content_type = "text/plain; charset=utf-8";
  ex->Respond(std::move(r));
}

bool NotModified(const HttpRequest& req, const std::string& etag) {
  const std::string inm = req.Header("if-none-match");
  if (inm.empty()) return false;
  if (inm == "*") return true;
  for (std::string tag : Split(inm, ',')) {
    tag = std::string(absl::StripAsciiWhitespace(tag));
    if (absl::StartsWith(tag, "W/")) tag = tag.substr(2);
    if (tag == etag) return true;
  }
  return false;
}

// Answers with `r` (its headers set): 304 when If-None-Match names
// `etag`, else `body` as JSON (no body for HEAD).
void RespondJson(const HttpRequest& req, const std::string& etag,
                 const std::string& body, HttpResponse r, HttpExchange* ex) {
  if (NotModified(req, etag)) {
    r.status = 304;
    r.content_type.clear();
  } else {
    r.content_type = "application/json";
    if (req.method != "HEAD") r.body = body;
  }
  ex->Respond(std::move(r));
}

}  // namespace

void OpenApiService::ServeV2(const HttpRequest& req, HttpExchange* ex) {
  // /swagger-2.0.0.pb-v1 is protobuf only; /openapi/v2 as kube-openapi
  // negotiates it (JSON first).
  std::string chosen =
      req.path == "/openapi/v2"
          ? Choose(req.Header("accept"),
                   {"application/json", kV2Protobuf, kV2ProtobufDeprecated})
          : kV2Protobuf;
  if (chosen.empty()) return NotAcceptable(ex);
  HttpResponse r;
  r.headers.push_back({"Vary", "Accept"});
  if (chosen != "application/json") {
    // The empty gnostic Document. Never the '@' form in Content-Type: Go's
    // MIME parser refuses it and kubectl fails.
    r.content_type = "application/octet-stream";
    ex->Respond(std::move(r));
    return;
  }
  std::shared_ptr<const Documents> docs = Current();
  const std::string etag = Cat("\"", docs->v2_hash, "\"");
  r.headers.push_back({"ETag", etag});
  r.headers.push_back({"Last-Modified", HttpDate(docs->built)});
  RespondJson(req, etag, docs->v2, std::move(r), ex);
}

void OpenApiService::ServeV3Index(const HttpRequest& req, HttpExchange* ex) {
  std::shared_ptr<const Documents> docs = Current();
  HttpResponse r;
  const std::string etag = Cat("\"", docs->v3_index_hash, "\"");
  r.headers.push_back({"ETag", etag});
  RespondJson(req, etag, docs->v3_index, std::move(r), ex);
}

void OpenApiService::ServeV3GroupVersion(const HttpRequest& req,
                                         HttpExchange* ex) {
  const std::string gv = req.path.substr(std::string("/openapi/v3/").size());
  std::shared_ptr<const Documents> docs = Current();
  auto it = docs->v3.find(gv);
  if (it == docs->v3.end()) {
    HttpResponse r;
    r.status = 404;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "404 page not found\n";
    ex->Respond(std::move(r));
    return;
  }
  // Only JSON: the gnostic protobuf form of v3 documents is not served.
  if (Choose(req.Header("accept"), {"application/json"}).empty()) {
    return NotAcceptable(ex);
  }
  const Documents::Document& doc = it->second;
  const std::string etag = Cat("\"", doc.hash, "\"");
  HttpResponse r;
  r.headers.push_back({"Vary", "Accept"});
  r.headers.push_back({"ETag", etag});
  const std::string hash = req.Query("hash");
  if (!hash.empty()) {
    if (hash != doc.hash) {
      const std::string location = Cat("/openapi/v3/", gv, "?hash=", doc.hash);
      r.status = 301;
      r.content_type = "text/html; charset=utf-8";
      r.headers.push_back({"Location", location});
      if (req.method != "HEAD") {
        r.body = Cat("<a href=\"", location, "\">Moved Permanently</a>.\n\n");
      }
      ex->Respond(std::move(r));
      return;
    }
    r.headers.push_back({"Cache-Control", "public, immutable"});
    r.headers.push_back(
        {"Expires", HttpDate(clock_->Now() + absl::Hours(24 * 365))});
  }
  r.headers.push_back({"Last-Modified", HttpDate(docs->built)});
  RespondJson(req, etag, doc.json, std::move(r), ex);
}

}  // namespace apiserver
}  // namespace kcr
