// The OpenAPI documents of the local API server, as kube-apiserver serves
// them (kube-openapi's handlers; apiextensions-apiserver's builder for
// custom resources), so that `kubectl explain` works and kubectl decides
// field validation and patch types as it does against a cluster:
//
//   GET /openapi/v3                 the index: {"paths":{"apis/<g>/<v>":
//                                   {"serverRelativeURL":
//                                   "/openapi/v3/apis/<g>/<v>?hash=<H>"}}}
//   GET /openapi/v3/apis/<g>/<v>,   one group-version's OpenAPI 3.0 document:
//       /openapi/v3/api/v1
//                                   components.schemas for each kind and its
//                                   list (x-kubernetes-group-version-kind,
//                                   apiVersion, kind, metadata as a reference
//                                   to ObjectMeta), and the REST paths with
//                                   their operations and query parameters
//                                   (PATCH lists fieldValidation, which
//                                   kubectl reads to choose server-side
//                                   validation)
//   GET /openapi/v2 (JSON Accept)   a Swagger 2.0 document with the same
//                                   kinds under definitions
//   GET /openapi/v2 (protobuf), /swagger-2.0.0.pb-v1
//                                   an empty gnostic document (empty body,
//                                   application/octet-stream)
//
// Every served version of every CRD the server serves is described, and
// every built-in resource (with its Go type's fields): openapi_kinds.h.
// No PATCH operation lists strategic merge patch: for a built-in kind
// kubectl then computes the patch from its compiled-in types, as without
// OpenAPI, rather than from schemas that carry no patch merge keys.
// Documents follow the CRDs: each request sees the CRDs stored at that
// moment.
//
// The documents are built by openapi_v3.h and openapi_v2.h.
//
// Caching as kube-openapi's handler3: a group-version document's hash is
// the upper-case hex SHA-512 of its JSON, sent as the ETag; with ?hash=
// equal to it the answer is cacheable for a year (Cache-Control: public,
// immutable); with another hash, a 301 to the current URL. If-None-Match
// with the current ETag answers 304.
#ifndef KCR_APISERVER_ENDPOINTS_OPENAPI_H_
#define KCR_APISERVER_ENDPOINTS_OPENAPI_H_

#include <memory>
#include <string>
#include <string_view>

#include "apiserver/endpoints/http_server.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"
#include "base/mutex.h"

namespace kcr {
namespace apiserver {

// kube-openapi's ETag of a document: upper-case hex of its SHA-512.
std::string OpenApiHash(std::string_view document);

// Serves the paths above from the CRDs stored in a Registry. Thread-safe:
// Handle runs concurrently on connection threads; the documents are built
// again only when a CRD changed.
class OpenApiService {
 public:
  // `registry` and `clock` must outlive this.
  OpenApiService(Registry* registry, std::string git_version,
                 const Clock* clock);
  OpenApiService(const OpenApiService&) = delete;
  OpenApiService& operator=(const OpenApiService&) = delete;

  // True for the paths Handle serves.
  static bool Serves(std::string_view path);

  void Handle(const HttpRequest& request, HttpExchange* exchange);

 private:
  struct Documents;
  // The documents of the CRDs stored now.
  std::shared_ptr<const Documents> Current();
  void ServeV2(const HttpRequest& request, HttpExchange* exchange);
  void ServeV3Index(const HttpRequest& request, HttpExchange* exchange);
  void ServeV3GroupVersion(const HttpRequest& request, HttpExchange* exchange);

  Registry* const registry_;
  const std::string git_version_;
  const Clock* const clock_;
  Mutex mu_;
  std::shared_ptr<const Documents> documents_ ABSL_GUARDED_BY(mu_);
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_OPENAPI_H_
