// ApiServer: the local Kubernetes API server, assembled — Storage,
// ResourceRegistry, Registry, ApiHandler and HttpServer — listening on
// loopback. Tests start one in process on port 0; cmd/local-apiserver runs
// one as a process; the controller manager's embedded mode runs one beside
// its controllers.
//
//   ApiServerOptions options;          // 127.0.0.1, port 0, plain HTTP
//   KCR_ASSIGN_OR_RETURN(std::unique_ptr<ApiServer> server,
//                        ApiServer::Start(options));
//   server->url();                     // "http://127.0.0.1:41234"
//   server->WriteKubeconfig("/tmp/kubeconfig");
//   ... kubectl --kubeconfig=/tmp/kubeconfig get pods ...
//   server->Stop();                    // or destroy it
//
// In-process code (controllers) reads and writes through registry() with
// the same semantics a client gets over HTTP, or reads storage() directly.
// Thread-safe.
#ifndef KCR_APISERVER_API_SERVER_H_
#define KCR_APISERVER_API_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "apiserver/auth/authenticator.h"
#include "apiserver/auth/authorizer.h"
#include "apiserver/auth/rbac_authorizer.h"
#include "apiserver/auth/service_account_token.h"
#include "apiserver/endpoints/faults.h"
#include "apiserver/endpoints/handler.h"
#include "apiserver/endpoints/http_server.h"
#include "apiserver/endpoints/request_limits.h"
#include "apiserver/endpoints/write_log.h"
#include "apiserver/kube_controllers/builtin_controllers.h"
#include "apiserver/printers/table_convertor.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "base/clock.h"

namespace kcr {
namespace apiserver {

struct ApiServerOptions {
  // Loopback unless told otherwise.
  std::string bind_address = "127.0.0.1";
  int port = 0;
  // Both set: HTTPS with this certificate (PEM, chain allowed) and key.
  std::string tls_cert_file;
  std::string tls_key_file;
  // The CA that signed the certificate, for the kubeconfig (PEM file).
  std::string tls_ca_file;
  // Bearer token every request must carry (empty: no authentication); its
  // user is "admin" in system:masters. Set, it turns anonymous requests
  // off.
  std::string token;
  // Authentication (auth/authenticator.h), kube-apiserver's flags:
  // --token-auth-file (CSV: token,user,uid,"group1,group2"), --client-ca-file
  // (HTTPS only: CN = user, O = groups), --service-account-key-file (PEM RSA
  // private key; empty: one generated on first use),
  // --service-account-issuer, --api-audiences (empty: the issuer),
  // --anonymous-auth.
  std::string token_auth_file;
  std::string client_ca_file;
  std::string service_account_key_file;
  std::string service_account_issuer = auth::kDefaultServiceAccountIssuer;
  std::vector<std::string> api_audiences;
  bool anonymous_auth = true;
  // --authorization-mode: "AlwaysAllow" (every request), or "RBAC"
  // (auth/rbac_authorizer.h; the default cluster roles and bindings are
  // created at start, auth/bootstrap_policy.h).
  std::string authorization_mode = "AlwaysAllow";
  // --enable-admission-plugins beyond the built-in defaults: only
  // "OwnerReferencesPermissionEnforcement" (auth/owner_references.h),
  // which needs RBAC to refuse anything.
  std::vector<std::string> enable_admission_plugins;
  // Events kept for watches; older resourceVersions get 410.
  size_t history_size = 10000;
  // Events (core/v1 and events.k8s.io/v1) are deleted this long after
  // their last write, as kube-apiserver's --event-ttl; <= 0 keeps them.
  absl::Duration event_ttl = absl::Hours(1);
  // Events a watcher may have waiting before it is terminated (a watcher
  // that cannot keep up; see watch_cache.h).
  size_t watch_queue_size = 4096;
  // The server's clock: object timestamps, watch timeouts and bookmarks.
  // Tests may pass a FakeClock (test/fakes/fake_clock.h).
  const Clock* clock = Clock::Real();
  absl::Duration bookmark_interval = absl::Seconds(60);
  absl::Duration min_request_timeout = absl::Seconds(1800);
  // /version. They must agree (ValidateVersion): kubectl's dispatcher
  // picks its kubectl from `minor`, clients print `git_version`.
  std::string git_version = "v1.32.4";
  std::string minor = "32";
  // Initial faults, and whether /fault-injection is served.
  FaultOptions faults;
  bool enable_fault_endpoint = false;
  // The controllers a cluster runs beside its API server (garbage
  // collector, namespace deletion, simulated node), in process; each can be
  // switched off (builtin_controllers.h).
  BuiltinControllersOptions controllers;
  // Seams for pieces built elsewhere (see each header). A null
  // table_convertor renders kube-apiserver's printers
  // (printer_table_convertor.h).
  std::shared_ptr<const TableConvertor> table_convertor;
  PatchHandlers patch_handlers;
  // Request bodies past this are refused with 413 (request_limits.h).
  size_t max_body_bytes = kMaxRequestBodyBytes;
};

// The minor version of a gitVersion "v1.30.2" ("30", also for
// "v1.30.2-kcr.1"); InvalidArgument for anything not vMAJOR.MINOR.PATCH.
absl::StatusOr<std::string> MinorOfGitVersion(std::string_view git_version);

// OK when `git_version` parses and its minor is `minor`; otherwise an
// InvalidArgument naming both.
absl::Status ValidateVersion(std::string_view git_version,
                             std::string_view minor);

class ApiServer {
 public:
  // Builds the server, creates the default namespaces and starts serving.
  static absl::StatusOr<std::unique_ptr<ApiServer>> Start(
      ApiServerOptions options);
  ~ApiServer();  // Stop()s
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // "http://127.0.0.1:PORT" or "https://...".
  std::string url() const;
  int port() const { return http_->port(); }
  const ApiServerOptions& options() const { return options_; }

  Storage* storage() { return storage_.get(); }
  ResourceRegistry* resources() { return resources_.get(); }
  Registry* registry() { return registry_.get(); }
  FaultInjector* faults() { return &faults_; }
  // Every write stored, in storage order (write_log.h). Always on.
  WriteLog* write_log() { return &write_log_; }
  const ApiHandler* handler() const { return handler_.get(); }
  // Who requests come from, what they may do (RBAC or AlwaysAllow), and
  // the service-account token issuer, for in-process users (a controller
  // manager that runs as a ServiceAccount).
  const auth::Authenticator* authenticator() const {
    return authenticator_.get();
  }
  const auth::Authorizer* authorizer() const { return authorizer_.get(); }
  const auth::ServiceAccountTokens* service_account_tokens() const {
    return service_account_tokens_.get();
  }

  // Writes a kubeconfig (context "local", namespace "default") pointing at
  // this server, with the token and CA when configured. The file is
  // written whole (temporary file, then rename), mode 0600.
  absl::Status WriteKubeconfig(const std::string& path) const;
  std::string KubeconfigYaml() const;

  // "restart": drops every connection (watches end), keeps all state.
  void DropConnections();
  // Stops accepting, ends every connection and joins every thread.
  // Idempotent.
  void Stop();

 private:
  explicit ApiServer(ApiServerOptions options);
  // Builds the authenticator, authorizer and token issuer into `handler`.
  absl::Status StartAuth(HandlerOptions* handler);
  // The CA certificate (PEM) clients verify this server with: the TLS CA
  // file (or the certificate itself), or, over plain HTTP, a fresh one.
  absl::StatusOr<std::string> RootCaPem() const;

  const ApiServerOptions options_;
  FaultInjector faults_;
  WriteLog write_log_;
  std::unique_ptr<Storage> storage_;
  std::unique_ptr<ResourceRegistry> resources_;
  std::unique_ptr<Registry> registry_;
  std::shared_ptr<const auth::ServiceAccountTokens> service_account_tokens_;
  std::shared_ptr<const auth::Authenticator> authenticator_;
  std::shared_ptr<const auth::Authorizer> authorizer_;
  std::unique_ptr<ApiHandler> handler_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<BuiltinControllers> controllers_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_API_SERVER_H_
