// ApiHandler: the HTTP face of the local API server. It authenticates
// (auth/authenticator.h: 401 with kube's Status for a bad credential),
// impersonates (Impersonate-User/-Group, authorized as `impersonate`),
// authorizes (auth/authorizer.h: 403 with kube's message), routes
// kube-apiserver's paths, decodes query parameters and bodies,
// negotiates the response type (JSON, Table, aggregated discovery), calls
// the Registry, and writes results and errors exactly as kube-apiserver
// does (Status objects, status codes, list envelopes, chunked watch
// streams).
//
// Routes:
//   /version /healthz /livez /readyz (+ /<check>)    no credential needed
//   /openapi/v2, /swagger-2.0.0.pb-v1,
//   /openapi/v3[/...]                    OpenAPI documents (openapi.h)
//   /api /apis /apis/{g} /api/v1 /apis/{g}/{v}        discovery
//   /api/v1/..., /apis/{g}/{v}/...       resources (get, list, watch,
//                                        create, update, patch, delete,
//                                        deletecollection; status, scale,
//                                        finalize subresources)
//   /fault-injection[/compact|/restart|/writes|/release-watch-holds]
//                                        only when enabled (see FaultOptions
//                                        and FaultInjector's rules)
//
// Thread-safe: Handle runs concurrently on every connection thread.
#ifndef KCR_APISERVER_ENDPOINTS_HANDLER_H_
#define KCR_APISERVER_ENDPOINTS_HANDLER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "apiserver/auth/authenticator.h"
#include "apiserver/auth/authorizer.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "apiserver/auth/service_account_token.h"
#include "apiserver/endpoints/faults.h"
#include "apiserver/endpoints/http_server.h"
#include "apiserver/endpoints/openapi.h"
#include "apiserver/endpoints/write_log.h"
#include "apiserver/printers/table_convertor.h"
#include "apiserver/registry/registry.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

struct HandlerOptions {
  // When set and `authenticator` is not, every request except health and
  // /version needs "Authorization: Bearer <token>" (401 otherwise), and
  // the token's user is "admin" in system:masters.
  std::string token;
  // Who sent each request; null: from `token` alone, as above.
  std::shared_ptr<const auth::Authenticator> authenticator;
  // What they may do; null: everything (AlwaysAllow).
  std::shared_ptr<const auth::Authorizer> authorizer;
  // With RBAC, writes of roles and bindings are checked for escalation
  // (auth/escalation.h) against it; may be null. Not owned.
  const auth::RbacAuthorizer* rbac = nullptr;
  // The OwnerReferencesPermissionEnforcement admission plugin
  // (auth/owner_references.h) checks creates and updates with `authorizer`.
  bool owner_references_permission_enforcement = false;
  // Signs TokenRequest's tokens (serviceaccounts/<name>/token); null: the
  // subresource answers 404.
  std::shared_ptr<const auth::ServiceAccountTokens> service_account_tokens;
  // Audiences of a TokenRequest that names none.
  std::vector<std::string> api_audiences;
  // /version: gitVersion and minor (the kubectl dispatcher picks the
  // matching kubectl from the minor).
  std::string git_version = "v1.32.4";
  std::string major = "1";
  std::string minor = "32";
  // Watch timeouts and bookmarks follow this clock.
  const Clock* clock = Clock::Real();
  // Watch bookmarks are sent this often when asked for.
  absl::Duration bookmark_interval = absl::Seconds(60);
  // A watch without timeoutSeconds ends after this, times 1 + rand [0, 1).
  absl::Duration min_request_timeout = absl::Seconds(1800);
  std::shared_ptr<const TableConvertor> table_convertor;
  // Never null once the handler runs.
  FaultInjector* faults = nullptr;
  bool enable_fault_endpoint = false;
  // Served at GET /fault-injection/writes; may be null.
  WriteLog* write_log = nullptr;
  // "host:port" for /api's serverAddressByClientCIDRs.
  std::function<std::string()> server_address;
  // Called by POST /fault-injection/restart after it answered.
  std::function<void()> restart;
};

class ApiHandler {
 public:
  ApiHandler(Registry* registry, HandlerOptions options);
  ApiHandler(const ApiHandler&) = delete;
  ApiHandler& operator=(const ApiHandler&) = delete;

  void Handle(const HttpRequest& request, HttpExchange* exchange);

  // Watches currently streaming.
  int64_t active_watches() const { return active_watches_.load(); }

 private:
  struct Route;
  void HandleResource(const HttpRequest& request, const auth::UserInfo& user,
                      HttpExchange* exchange);
  // POST serviceaccounts/<name>/token.
  void HandleTokenRequest(const ResourceInfo& resource, const std::string& ns,
                          const std::string& name, const HttpRequest& request,
                          HttpExchange* exchange);
  // Who the request comes from after impersonation; false when it was
  // answered (401, 403).
  bool Authenticate(const HttpRequest& request, HttpExchange* exchange,
                    auth::UserInfo* user) const;
  void HandleFaults(const HttpRequest& request, HttpExchange* exchange);
  void HandleHealth(const HttpRequest& request, HttpExchange* exchange);
  // Events carry Tables when `table`, PartialObjectMetadata of that
  // meta.k8s.io version when `partial_version` is set.
  void ServeWatch(const ResourceInfo& resource, const std::string& ns,
                  const HttpRequest& request, HttpExchange* exchange,
                  bool table, const std::string& partial_version);

  Registry* const registry_;
  const HandlerOptions options_;
  OpenApiService openapi_;
  std::atomic<int64_t> active_watches_{0};
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_HANDLER_H_
