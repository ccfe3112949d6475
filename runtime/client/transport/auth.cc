#include "runtime/client/transport/auth.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "glog/logging.h"

namespace kcr::client::transport {

Credentials::Credentials(const Config& config, std::shared_ptr<TlsMaterial> tls,
                         const Clock* clock,
                         std::function<void()> on_new_certificate)
    : config_(config),
      tls_(std::move(tls)),
      on_new_certificate_(std::move(on_new_certificate)) {
  if (!config.bearer_token_file.empty()) {
    token_file_ = std::make_unique<CachedFileTokenSource>(
        config.bearer_token_file, config.bearer_token, clock);
  }
  if (config.exec.has_value()) {
    ExecClusterInfo info{config.host, config.tls.server_name,
                         config.tls.insecure, tls_->ca_pem};
    exec_ = std::make_unique<ExecCredentialProvider>(*config.exec, info, clock);
  }
}

uint64_t Credentials::CertGeneration() const {
  MutexLock lock(&tls_->mu);
  return tls_->cert_generation;
}

absl::StatusOr<std::string> Credentials::Authorization() {
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
        if (!IsPemCertificate(cred.client_certificate_data) ||
            !IsPemKey(cred.client_key_data)) {
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
        on_new_certificate_();
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

void Credentials::Invalidate(absl::Time request_start) {
  if (exec_ != nullptr) exec_->Invalidate(request_start);
  if (token_file_ != nullptr) token_file_->Invalidate(request_start);
}

}  // namespace kcr::client::transport
