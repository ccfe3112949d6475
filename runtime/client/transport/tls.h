// TLS material of a REST client (client-go's transport.TLSConfig): the
// certificate authority to trust and the client certificate and key, read
// from the Config's data or files and checked to be PEM. The client's
// connections read it at each handshake; an exec plugin may replace the
// client certificate while the client runs (transport/auth.h).
#ifndef KCR_RUNTIME_CLIENT_TRANSPORT_TLS_H_
#define KCR_RUNTIME_CLIENT_TRANSPORT_TLS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "base/mutex.h"
#include "runtime/client/rest_config.h"

namespace kcr::client::transport {

// Shared by the client and its connections' TLS callbacks.
struct TlsMaterial {
  std::string ca_pem;  // set before any connection; "" = system store
  Mutex mu;
  std::string cert_pem ABSL_GUARDED_BY(mu);
  std::string key_pem ABSL_GUARDED_BY(mu);
  // Bumped whenever an exec plugin hands out a different certificate.
  uint64_t cert_generation ABSL_GUARDED_BY(mu) = 0;
};

// Whether `pem` holds a PEM certificate (a private key).
bool IsPemCertificate(const std::string& pem);
bool IsPemKey(const std::string& pem);

// Reads the CA, client certificate and key of `tls` (data, else file) into
// `material`. kInvalidArgument naming the file when one cannot be read or
// holds no PEM of its kind.
absl::Status LoadTlsMaterial(const TLSClientConfig& tls, TlsMaterial* material);

}  // namespace kcr::client::transport

#endif  // KCR_RUNTIME_CLIENT_TRANSPORT_TLS_H_
