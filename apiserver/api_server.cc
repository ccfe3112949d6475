#include "apiserver/api_server.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "apiserver/auth/bootstrap_policy.h"
#include "apiserver/auth/owner_references.h"
#include "apiserver/auth/token_file.h"
#include "apiserver/endpoints/patch_handlers.h"
#include "apiserver/internal/write_context.h"
#include "apiserver/printers/printer_table_convertor.h"
#include "base/status_macros.h"
#include "base/str_cat.h"
#include "base/string_view.h"
#include "base/tls_certs.h"

namespace kcr {
namespace apiserver {

ApiServer::ApiServer(ApiServerOptions options)
    : options_(std::move(options)), faults_(options_.faults) {}

absl::StatusOr<std::string> MinorOfGitVersion(std::string_view git_version) {
  std::vector<std::string> parts =
      absl::StrSplit(ToAbsl(git_version), absl::MaxSplits('.', 2));
  int n;
  if (parts.size() != 3 || parts[0].size() < 2 || parts[0][0] != 'v' ||
      !absl::SimpleAtoi(parts[0].substr(1), &n) ||
      !absl::SimpleAtoi(parts[1], &n) || parts[2].empty() ||
      !absl::ascii_isdigit(static_cast<unsigned char>(parts[2][0]))) {
    return absl::InvalidArgumentError(
        absl::StrCat("git version \"", ToAbsl(git_version),
                     "\" is not vMAJOR.MINOR.PATCH (e.g. v1.32.4)"));
  }
  return parts[1];
}

absl::Status ValidateVersion(std::string_view git_version,
                             std::string_view minor) {
  absl::StatusOr<std::string> of_git = MinorOfGitVersion(git_version);
  if (!of_git.ok()) return of_git.status();
  if (*of_git != minor) {
    return absl::InvalidArgumentError(absl::StrCat(
        "git version \"", ToAbsl(git_version), "\" has minor version ", *of_git,
        ", not ", ToAbsl(minor), ": give one of them, or both agreeing"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ApiServer>> ApiServer::Start(
    ApiServerOptions options) {
  KCR_RETURN_IF_ERROR(ValidateVersion(options.git_version, options.minor));
  std::unique_ptr<ApiServer> s(new ApiServer(std::move(options)));
  const ApiServerOptions& o = s->options_;
  StorageOptions so;
  so.history_size = o.history_size;
  so.watch_queue_size = o.watch_queue_size;
  so.clock = o.clock;
  if (o.event_ttl > absl::ZeroDuration()) {
    // Both groups' Events, as kube-apiserver stores them in one resource.
    so.ttl["/events"] = o.event_ttl;
    so.ttl["events.k8s.io/events"] = o.event_ttl;
  }
  s->storage_ = std::make_unique<Storage>(so);
  ApiServer* self = s.get();
  s->storage_->SetWriteObserver(Storage::WriteObserver{
      .admit =
          [self] {
            return self->faults_.AdmitWrite(CurrentWriteContext().user_agent);
          },
      .recorded =
          [self](const StoredEvent& event) {
            WriteRecord write =
                WriteLog::FromEvent(event, CurrentWriteContext());
            self->faults_.OnWrite(write);
            self->write_log_.Append(std::move(write));
          },
      .written =
          [self] {
            self->faults_.AfterWrite();
            self->write_log_.Deliver();
          },
  });
  s->resources_ = std::make_unique<ResourceRegistry>();
  RegistryOptions ro;
  ro.clock = o.clock;
  ro.patch_handlers = o.patch_handlers;
  const PatchHandlers defaults = DefaultPatchHandlers(ro.clock);
  if (!ro.patch_handlers.strategic_merge) {
    ro.patch_handlers.strategic_merge = defaults.strategic_merge;
  }
  if (!ro.patch_handlers.apply) ro.patch_handlers.apply = defaults.apply;
  s->registry_ =
      std::make_unique<Registry>(s->storage_.get(), s->resources_.get(), ro);
  KCR_RETURN_IF_ERROR(s->registry_->Bootstrap());
  HandlerOptions ho;
  ho.token = o.token;
  KCR_RETURN_IF_ERROR(s->StartAuth(&ho));
  ho.git_version = o.git_version;
  ho.minor = o.minor;
  ho.clock = o.clock;
  ho.bookmark_interval = o.bookmark_interval;
  ho.min_request_timeout = o.min_request_timeout;
  ho.table_convertor = o.table_convertor != nullptr
                           ? o.table_convertor
                           : std::make_shared<PrinterTableConvertor>();
  ho.faults = &s->faults_;
  ho.write_log = &s->write_log_;
  ho.enable_fault_endpoint = o.enable_fault_endpoint;
  ho.server_address = [self] {
    return Cat(self->options_.bind_address, ":", self->port());
  };
  ho.restart = [self] { self->DropConnections(); };
  s->handler_ = std::make_unique<ApiHandler>(s->registry_.get(), ho);
  HttpServerOptions hs;
  hs.address = o.bind_address;
  hs.port = o.port;
  hs.tls_cert_file = o.tls_cert_file;
  hs.tls_key_file = o.tls_key_file;
  hs.tls_client_ca_file = o.client_ca_file;
  hs.max_body_bytes = o.max_body_bytes;
  Storage* storage = s->storage_.get();
  hs.on_cancel = [storage] { storage->Interrupt(); };
  ApiHandler* handler = s->handler_.get();
  s->http_ = std::make_unique<HttpServer>(
      hs, [handler](const HttpRequest& req, HttpExchange* ex) {
        handler->Handle(req, ex);
      });
  KCR_RETURN_IF_ERROR(s->http_->Start());
  BuiltinControllersOptions controllers = o.controllers;
  if (o.authorization_mode == "RBAC")
    controllers.clusterrole_aggregation = true;
  std::string host = o.bind_address;
  if (host == "0.0.0.0" || host == "::" || host.empty()) host = "127.0.0.1";
  controllers.kubernetes_service_options.address = host;
  controllers.kubernetes_service_options.port = s->http_->port();
  if (controllers.root_ca_pem.empty()) {
    KCR_ASSIGN_OR_RETURN(controllers.root_ca_pem, s->RootCaPem());
  }
  s->controllers_ =
      std::make_unique<BuiltinControllers>(s->registry_.get(), controllers);
  s->controllers_->Start();
  return s;
}

ApiServer::~ApiServer() { Stop(); }

absl::Status ApiServer::StartAuth(HandlerOptions* ho) {
  const ApiServerOptions& o = options_;
  if (!o.client_ca_file.empty() && o.tls_cert_file.empty()) {
    return absl::InvalidArgumentError(
        "a client CA needs HTTPS (a serving certificate and key)");
  }
  auth::AuthenticatorOptions ao;
  if (!o.token_auth_file.empty()) {
    KCR_ASSIGN_OR_RETURN(ao.tokens, auth::ReadTokenFile(o.token_auth_file));
  }
  if (!o.token.empty()) {
    ao.tokens[o.token] = auth::UserInfo{"admin", "", {auth::kSystemMasters}};
  }
  ao.anonymous = o.anonymous_auth && o.token.empty();
  auth::ServiceAccountTokenOptions so;
  so.issuer = o.service_account_issuer;
  so.key_file = o.service_account_key_file;
  so.clock = o.clock;
  KCR_ASSIGN_OR_RETURN(service_account_tokens_,
                       auth::ServiceAccountTokens::Create(std::move(so)));
  ao.service_account_tokens = service_account_tokens_;
  ao.api_audiences = o.api_audiences.empty()
                         ? std::vector<std::string>{o.service_account_issuer}
                         : o.api_audiences;
  ResourceInfoPtr sa = resources_->Lookup("", "v1", "serviceaccounts");
  Storage* storage = storage_.get();
  ao.service_account_uid = [storage, key = sa->StorageKey()](
                               const std::string& ns, const std::string& name) {
    api::ObjectPtr o = storage->Get(key, ns, name);
    return o == nullptr || o->being_deleted() ? std::string()
                                              : std::string(o->uid());
  };
  ho->api_audiences = ao.api_audiences;
  authenticator_ = std::make_shared<auth::Authenticator>(std::move(ao));
  if (o.authorization_mode == "RBAC") {
    auto rbac = std::make_shared<auth::RbacAuthorizer>(storage_.get(),
                                                       resources_.get());
    KCR_RETURN_IF_ERROR(auth::EnsureBootstrapPolicy(registry_.get()));
    ho->rbac = rbac.get();
    authorizer_ = std::move(rbac);
  } else if (o.authorization_mode == "AlwaysAllow" ||
             o.authorization_mode.empty()) {
    authorizer_ = std::make_shared<auth::AlwaysAllowAuthorizer>();
  } else {
    return absl::InvalidArgumentError(Cat("unknown authorization mode \"",
                                          o.authorization_mode,
                                          "\" (AlwaysAllow or RBAC)"));
  }
  for (const std::string& plugin : o.enable_admission_plugins) {
    if (plugin != auth::kOwnerReferencesPermissionEnforcement) {
      return absl::InvalidArgumentError(
          Cat("admission plugin \"", plugin, "\" is not supported (",
              auth::kOwnerReferencesPermissionEnforcement, ")"));
    }
    ho->owner_references_permission_enforcement = true;
  }
  ho->authenticator = authenticator_;
  ho->authorizer = authorizer_;
  ho->service_account_tokens = service_account_tokens_;
  return absl::OkStatus();
}

absl::StatusOr<std::string> ApiServer::RootCaPem() const {
  if (http_->tls()) {
    const std::string& path = options_.tls_ca_file.empty()
                                  ? options_.tls_cert_file
                                  : options_.tls_ca_file;
    std::ifstream in(path, std::ios::binary);
    std::stringstream pem;
    pem << in.rdbuf();
    if (in && !pem.str().empty()) return pem.str();
  }
  // Plain HTTP (or an unreadable file): a CA of this server's own, so that
  // every namespace still has the kube-root-ca.crt a cluster has.
  KCR_ASSIGN_OR_RETURN(TlsMaterial material, GenerateTlsMaterial());
  return material.ca_cert_pem;
}

std::string ApiServer::url() const {
  std::string host = options_.bind_address;
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return Cat(http_->tls() ? "https://" : "http://", host, ":", http_->port());
}

std::string ApiServer::KubeconfigYaml() const {
  std::string cluster = Cat("    server: ", url(), "\n");
  if (http_->tls()) {
    std::string ca_path = options_.tls_ca_file.empty() ? options_.tls_cert_file
                                                       : options_.tls_ca_file;
    std::ifstream in(ca_path, std::ios::binary);
    std::stringstream pem;
    pem << in.rdbuf();
    if (in && !pem.str().empty()) {
      CatAppend(&cluster, "    certificate-authority-data: ",
                absl::Base64Escape(pem.str()), "\n");
    } else {
      cluster += "    insecure-skip-tls-verify: true\n";
    }
  }
  std::string user = options_.token.empty()
                         ? "  user: {}\n"
                         : Cat("  user:\n    token: ", options_.token, "\n");
  return Cat(
      "apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n",
      cluster,
      "contexts:\n- name: local\n  context:\n    cluster: local\n"
      "    user: local\n    namespace: default\n"
      "current-context: local\npreferences: {}\nusers:\n- name: local\n",
      user);
}

absl::Status ApiServer::WriteKubeconfig(const std::string& path) const {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return absl::UnavailableError(Cat("cannot write ", tmp));
    out << KubeconfigYaml();
    out.close();
    if (!out) return absl::UnavailableError(Cat("cannot write ", tmp));
  }
  chmod(tmp.c_str(), 0600);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError(Cat("cannot rename ", tmp, " to ", path));
  }
  return absl::OkStatus();
}

void ApiServer::DropConnections() {
  if (http_ != nullptr) http_->DropConnections();
}

void ApiServer::Stop() {
  if (controllers_ != nullptr) controllers_->Stop();
  if (http_ != nullptr) http_->Stop();
  if (storage_ != nullptr) storage_->StopExpiring();
}

}  // namespace apiserver
}  // namespace kcr
