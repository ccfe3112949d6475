#include "runtime/client/transport/tls.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <fstream>
#include <iterator>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace kcr::client::transport {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", path, ": cannot be read"));
  }
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// Whether PEM_read_bio_X (Read) finds a value in `pem`.
template <typename T, T* (*Read)(BIO*, T**, pem_password_cb*, void*),
          void (*Free)(T*)>
bool HasPem(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return false;
  T* value = Read(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (value == nullptr) return false;
  Free(value);
  return true;
}

// PEM from data or file, checked by `check`.
absl::StatusOr<std::string> LoadPem(const std::string& data,
                                    const std::string& file, const char* what,
                                    bool (*check)(const std::string&)) {
  std::string pem = data;
  std::string source = "data";
  if (pem.empty() && !file.empty()) {
    KCR_ASSIGN_OR_RETURN(pem, ReadFile(file, what));
    source = file;
  }
  if (pem.empty()) return pem;
  if (!check(pem)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", source, ": no PEM ", what, " found"));
  }
  return pem;
}

}  // namespace

bool IsPemCertificate(const std::string& pem) {
  return HasPem<X509, PEM_read_bio_X509, X509_free>(pem);
}

bool IsPemKey(const std::string& pem) {
  return HasPem<EVP_PKEY, PEM_read_bio_PrivateKey, EVP_PKEY_free>(pem);
}

absl::Status LoadTlsMaterial(const TLSClientConfig& tls,
                             TlsMaterial* material) {
  KCR_ASSIGN_OR_RETURN(material->ca_pem,
                       LoadPem(tls.ca_data, tls.ca_file,
                               "certificate authority", IsPemCertificate));
  KCR_ASSIGN_OR_RETURN(std::string cert,
                       LoadPem(tls.cert_data, tls.cert_file,
                               "client certificate", IsPemCertificate));
  KCR_ASSIGN_OR_RETURN(std::string key, LoadPem(tls.key_data, tls.key_file,
                                                "client key", IsPemKey));
  MutexLock lock(&material->mu);
  material->cert_pem = std::move(cert);
  material->key_pem = std::move(key);
  return absl::OkStatus();
}

}  // namespace kcr::client::transport
