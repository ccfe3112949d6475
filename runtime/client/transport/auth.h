// Credentials: the Authorization header of each request of a REST client,
// from the first of its Config that is set: an exec plugin, a token file, a
// bearer token, basic auth (client-go's exec authenticator, cached file
// token source and bearer/basic auth round trippers). A plugin that answers
// with a client certificate installs it in the client's TLS material.
// Thread-safe.
#ifndef KCR_RUNTIME_CLIENT_TRANSPORT_AUTH_H_
#define KCR_RUNTIME_CLIENT_TRANSPORT_AUTH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "runtime/client/exec_credential.h"
#include "runtime/client/rest_config.h"
#include "runtime/client/token_source.h"
#include "runtime/client/transport/tls.h"

namespace kcr::client::transport {

class Credentials {
 public:
  // `tls` must already hold the configured CA (an exec plugin is told it).
  // `on_new_certificate` runs after a plugin's new client certificate is
  // installed in `tls`: the client then opens new connections, since pooled
  // ones keep the certificate of their handshake. `clock` is not owned;
  // null means the real clock.
  Credentials(const Config& config, std::shared_ptr<TlsMaterial> tls,
              const Clock* clock, std::function<void()> on_new_certificate);

  // The Authorization header to send ("" for none).
  absl::StatusOr<std::string> Authorization();

  // The generation of the client certificate in the TLS material.
  uint64_t CertGeneration() const;

  // Whether a 401 is worth a fresh credential: there is a token file to
  // re-read or a plugin to run again.
  bool Refreshable() const {
    return exec_ != nullptr || token_file_ != nullptr;
  }

  // Drops cached credentials obtained before `request_start`.
  void Invalidate(absl::Time request_start);

 private:
  const Config& config_;  // the client's; outlives this object
  const std::shared_ptr<TlsMaterial> tls_;
  const std::function<void()> on_new_certificate_;
  std::unique_ptr<CachedFileTokenSource> token_file_;
  std::unique_ptr<ExecCredentialProvider> exec_;
};

}  // namespace kcr::client::transport

#endif  // KCR_RUNTIME_CLIENT_TRANSPORT_AUTH_H_
