#include "base/tls_certs.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace kcr {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using PKeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION,
                               Deleter<X509_EXTENSION, X509_EXTENSION_free>>;
void FreeGeneralNames(GENERAL_NAMES* names) { GENERAL_NAMES_free(names); }
using NamesPtr =
    std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES, FreeGeneralNames>>;

// Drains OpenSSL's error queue into a Status.
absl::Status OpenSslError(absl::string_view what) {
  std::string reasons;
  unsigned long code;
  while ((code = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    if (!reasons.empty()) reasons += "; ";
    reasons += buf;
  }
  if (reasons.empty()) reasons = "unknown error";
  return absl::InternalError(absl::StrCat("TLS: ", what, ": ", reasons));
}

absl::StatusOr<PKeyPtr> NewKey(TlsKeyType type) {
  EVP_PKEY* key =
      type == TlsKeyType::kRsa2048 ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256");
  if (key == nullptr) return OpenSslError("key generation failed");
  return PKeyPtr(key);
}

bool IsDnsName(absl::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '*';
    if (!ok) return false;
  }
  return true;
}

// Builds the subjectAltName list: IP or DNS names.
absl::StatusOr<NamesPtr> AltNames(const std::vector<std::string>& names) {
  NamesPtr list(sk_GENERAL_NAME_new_null());
  if (list == nullptr) return OpenSslError("allocating names");
  for (const std::string& name : names) {
    GENERAL_NAME* gen = GENERAL_NAME_new();
    if (gen == nullptr) return OpenSslError("allocating a name");
    ASN1_OCTET_STRING* ip = a2i_IPADDRESS(name.c_str());
    if (ip != nullptr) {
      GENERAL_NAME_set0_value(gen, GEN_IPADD, ip);
    } else {
      ERR_clear_error();
      if (!IsDnsName(name)) {
        GENERAL_NAME_free(gen);
        return absl::InvalidArgumentError(absl::StrCat(
            "TLS: \"", name, "\" is neither an IP address nor a DNS name"));
      }
      ASN1_IA5STRING* dns = ASN1_IA5STRING_new();
      if (dns == nullptr ||
          !ASN1_STRING_set(dns, name.data(), static_cast<int>(name.size()))) {
        ASN1_IA5STRING_free(dns);
        GENERAL_NAME_free(gen);
        return OpenSslError("setting a DNS name");
      }
      GENERAL_NAME_set0_value(gen, GEN_DNS, dns);
    }
    if (!sk_GENERAL_NAME_push(list.get(), gen)) {
      GENERAL_NAME_free(gen);
      return OpenSslError("adding a name");
    }
  }
  return list;
}

absl::Status AddExtension(X509* cert, X509* issuer, int nid,
                          const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (ext == nullptr || !X509_add_ext(cert, ext.get(), -1)) {
    return OpenSslError(absl::StrCat("adding extension ", OBJ_nid2sn(nid)));
  }
  return absl::OkStatus();
}

// A certificate for `key` named `common_name`, issued by `issuer` (null:
// self-signed) and signed with `issuer_key`.
absl::StatusOr<X509Ptr> NewCertificate(const TlsOptions& options,
                                       const std::string& common_name,
                                       EVP_PKEY* key, X509* issuer,
                                       EVP_PKEY* issuer_key) {
  X509Ptr cert(X509_new());
  if (cert == nullptr) return OpenSslError("allocating a certificate");
  X509* x = cert.get();
  if (!X509_set_version(x, X509_VERSION_3)) return OpenSslError("version");

  // A random, positive 127-bit serial number.
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof(serial)) != 1) return OpenSslError("serial");
  serial[0] &= 0x7f;
  BnPtr bn(BN_bin2bn(serial, sizeof(serial), nullptr));
  if (bn == nullptr ||
      BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(x)) == nullptr) {
    return OpenSslError("serial");
  }

  const time_t not_before = absl::ToTimeT(options.now - absl::Hours(1));
  const time_t not_after = absl::ToTimeT(options.now + options.validity);
  if (ASN1_TIME_set(X509_getm_notBefore(x), not_before) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(x), not_after) == nullptr) {
    return OpenSslError("validity");
  }

  X509_NAME* name = X509_get_subject_name(x);
  if (!X509_NAME_add_entry_by_txt(
          name, "CN", MBSTRING_UTF8,
          reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
          0)) {
    return OpenSslError("subject");
  }
  X509* signer = issuer == nullptr ? x : issuer;
  if (!X509_set_issuer_name(x, X509_get_subject_name(signer)) ||
      !X509_set_pubkey(x, key)) {
    return OpenSslError("issuer or public key");
  }
  return cert;
}

absl::Status Sign(X509* cert, EVP_PKEY* key) {
  if (X509_sign(cert, key, EVP_sha256()) == 0) return OpenSslError("signing");
  return absl::OkStatus();
}

absl::StatusOr<std::string> CertPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || !PEM_write_bio_X509(bio.get(), cert)) {
    return OpenSslError("writing a certificate");
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

absl::StatusOr<std::string> KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr ||
      !PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr,
                                nullptr)) {
    return OpenSslError("writing a key");
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

}  // namespace

absl::StatusOr<TlsMaterial> GenerateTlsMaterial(const TlsOptions& options) {
  std::vector<std::string> names = {"127.0.0.1", "::1", "localhost"};
  names.insert(names.end(), options.extra_names.begin(),
               options.extra_names.end());
  absl::StatusOr<NamesPtr> alt_names = AltNames(names);
  if (!alt_names.ok()) return alt_names.status();

  absl::StatusOr<PKeyPtr> ca_key = NewKey(options.key_type);
  if (!ca_key.ok()) return ca_key.status();
  absl::StatusOr<X509Ptr> ca = NewCertificate(
      options, options.ca_common_name, ca_key->get(), nullptr, ca_key->get());
  if (!ca.ok()) return ca.status();
  X509* ca_cert = ca->get();
  for (const auto& [nid, value] : std::vector<std::pair<int, const char*>>{
           {NID_basic_constraints, "critical,CA:TRUE"},
           {NID_key_usage, "critical,keyCertSign,cRLSign"},
           {NID_subject_key_identifier, "hash"}}) {
    absl::Status s = AddExtension(ca_cert, ca_cert, nid, value);
    if (!s.ok()) return s;
  }
  absl::Status s = Sign(ca_cert, ca_key->get());
  if (!s.ok()) return s;

  absl::StatusOr<PKeyPtr> server_key = NewKey(options.key_type);
  if (!server_key.ok()) return server_key.status();
  absl::StatusOr<X509Ptr> server =
      NewCertificate(options, options.server_common_name, server_key->get(),
                     ca_cert, ca_key->get());
  if (!server.ok()) return server.status();
  X509* server_cert = server->get();
  for (const auto& [nid, value] : std::vector<std::pair<int, const char*>>{
           {NID_basic_constraints, "critical,CA:FALSE"},
           {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
           {NID_ext_key_usage, "serverAuth"},
           {NID_subject_key_identifier, "hash"},
           {NID_authority_key_identifier, "keyid:always"}}) {
    s = AddExtension(server_cert, ca_cert, nid, value);
    if (!s.ok()) return s;
  }
  if (!X509_add1_ext_i2d(server_cert, NID_subject_alt_name, alt_names->get(), 0,
                         X509V3_ADD_DEFAULT)) {
    return OpenSslError("adding subjectAltName");
  }
  s = Sign(server_cert, ca_key->get());
  if (!s.ok()) return s;

  TlsMaterial material;
  for (const auto& [out, result] :
       std::vector<std::pair<std::string*, absl::StatusOr<std::string>>>{
           {&material.ca_cert_pem, CertPem(ca_cert)},
           {&material.ca_key_pem, KeyPem(ca_key->get())},
           {&material.server_cert_pem, CertPem(server_cert)},
           {&material.server_key_pem, KeyPem(server_key->get())}}) {
    if (!result.ok()) return result.status();
    *out = *result;
  }
  return material;
}

namespace {

absl::Status WriteFile(const std::string& path, const std::string& text,
                       mode_t mode) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out)
      return absl::UnavailableError(absl::StrCat("cannot write ", path));
    // Restrict before the secret goes in.
    chmod(path.c_str(), mode);
    out << text;
    out.close();
    if (!out)
      return absl::UnavailableError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TlsFiles> WriteTlsFiles(const TlsMaterial& material,
                                       const std::string& dir) {
  // Created when missing, as kube-apiserver does with its --cert-dir.
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create certificate directory ", dir, ": ", error.message()));
  }
  TlsFiles files;
  files.ca_cert = dir + "/ca.crt";
  files.server_cert = dir + "/server.crt";
  files.server_key = dir + "/server.key";
  for (const auto& [path, text, mode] :
       std::vector<std::tuple<std::string, std::string, mode_t>>{
           {files.ca_cert, material.ca_cert_pem, 0644},
           {files.server_cert, material.server_cert_pem, 0644},
           {files.server_key, material.server_key_pem, 0600}}) {
    absl::Status s = WriteFile(path, text, mode);
    if (!s.ok()) return s;
  }
  return files;
}

}  // namespace kcr
