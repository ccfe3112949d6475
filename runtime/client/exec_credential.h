// ExecCredentialProvider: credentials from a kubeconfig exec plugin
// (client.authentication.k8s.io/v1 and v1beta1 ExecCredential), as
// client-go's plugin/pkg/client/auth/exec.
//
// The plugin runs with the parent's environment plus the configured `env`
// and KUBERNETES_EXEC_INFO, an ExecCredential whose spec says the session
// is not interactive (and carries the cluster when provideClusterInfo is
// set). It prints an ExecCredential whose status holds a token or a client
// certificate and key, and optionally expirationTimestamp. The answer is
// cached until that time (forever without one); Invalidate() after a 401
// makes the next Get() run the plugin again.
#ifndef KCR_RUNTIME_CLIENT_EXEC_CREDENTIAL_H_
#define KCR_RUNTIME_CLIENT_EXEC_CREDENTIAL_H_

#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "runtime/client/kubeconfig.h"

namespace kcr::client {

// ExecCredential.status.
struct ExecCredential {
  std::string token;
  std::string client_certificate_data;  // PEM
  std::string client_key_data;          // PEM
  std::optional<absl::Time> expiration;
};

// What the plugin may learn about the cluster (spec.cluster).
struct ExecClusterInfo {
  std::string server;
  std::string tls_server_name;
  bool insecure_skip_tls_verify = false;
  std::string certificate_authority_data;  // PEM
};

// Parses a plugin's output. `api_version` is the one the kubeconfig asked
// for; the answer must use the same. InvalidArgument on anything else,
// e.g. "exec plugin: status must hold a token or a client certificate
// and key".
absl::StatusOr<ExecCredential> ParseExecCredential(
    const std::string& json, const std::string& api_version);

// Thread-safe.
class ExecCredentialProvider {
 public:
  // `clock` is not owned; null means the real clock.
  ExecCredentialProvider(ExecConfig config, ExecClusterInfo cluster,
                         const Clock* clock = nullptr);

  // The cached credential, running the plugin first when there is none,
  // it has expired, or it was invalidated. Errors (kUnauthenticated) name
  // the command and say why: not found (with the installHint), exit
  // status, or what was wrong with its output.
  absl::StatusOr<ExecCredential> Get();

  // The server rejected a request made with the credential obtained at or
  // before `request_start`: run the plugin again on the next Get().
  void Invalidate(absl::Time request_start);

  // Times the plugin has run.
  int runs() const;

 private:
  absl::StatusOr<std::string> Run();

  const ExecConfig config_;
  const ExecClusterInfo cluster_;
  const Clock* const clock_;
  mutable Mutex mu_;
  std::optional<ExecCredential> cached_ ABSL_GUARDED_BY(mu_);
  absl::Time obtained_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int runs_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_EXEC_CREDENTIAL_H_
