// Self-signed TLS material for HTTPS (the local API server, secure metrics): a
// fresh CA and a server certificate it signs, valid for loopback (127.0.0.1,
// ::1, localhost) and any extra names, returned as PEM text ready for a
// kubeconfig (certificate-authority-data) and an HTTPS listener.
//
// The CA certificate has basicConstraints CA:TRUE (critical) and keyUsage
// keyCertSign, cRLSign; the server certificate has CA:FALSE, keyUsage
// digitalSignature and keyEncipherment, extendedKeyUsage serverAuth, the
// subjectAltNames, and key identifiers linking it to the CA. Both are
// signed with SHA-256 and valid from an hour before `now` (tolerating clock
// skew) for `validity`. Keys are ECDSA P-256 by default, or RSA 2048; the
// private keys are PKCS#8 PEM, unencrypted (the CA's key is returned so a
// caller can sign more certificates, e.g. for clients).
//
// Thread-safe: every call builds its own objects.
#ifndef KCR_BASE_TLS_CERTS_H_
#define KCR_BASE_TLS_CERTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kcr {

enum class TlsKeyType { kEcdsaP256, kRsa2048 };

struct TlsOptions {
  // Added to the subjectAltNames: an IPv4 or IPv6 address becomes an IP
  // name, anything else a DNS name (letters, digits, '-', '.', '*').
  std::vector<std::string> extra_names;
  std::string ca_common_name = "kcr-local-apiserver-ca";
  std::string server_common_name = "kcr-local-apiserver";
  TlsKeyType key_type = TlsKeyType::kEcdsaP256;
  absl::Duration validity = absl::Hours(24 * 365);
  // Start of validity is now - 1h; injectable for tests.
  absl::Time now = absl::Now();
};

struct TlsMaterial {
  std::string ca_cert_pem;
  std::string ca_key_pem;
  std::string server_cert_pem;
  std::string server_key_pem;
};

// Generates a CA and a server certificate. InvalidArgument for an extra
// name that is neither an IP address nor a DNS name; Internal (with
// OpenSSL's reason) if OpenSSL fails.
absl::StatusOr<TlsMaterial> GenerateTlsMaterial(const TlsOptions& options = {});

// Where WriteTlsFiles put the material.
struct TlsFiles {
  std::string ca_cert;      // <dir>/ca.crt
  std::string server_cert;  // <dir>/server.crt
  std::string server_key;   // <dir>/server.key, mode 0600
};

// Writes the CA certificate, server certificate and server key as PEM files
// into `dir` (which must exist). The CA key is not written. Unavailable
// when a file cannot be written.
absl::StatusOr<TlsFiles> WriteTlsFiles(const TlsMaterial& material,
                                       const std::string& dir);

}  // namespace kcr

#endif  // KCR_BASE_TLS_CERTS_H_
