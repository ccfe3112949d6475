#include "base/tls_certs.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr {
namespace {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PKeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PKeyPtr = std::unique_ptr<EVP_PKEY, PKeyFree>;

X509Ptr ReadCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return X509Ptr(x);
}

PKeyPtr ReadKey(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* k = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return PKeyPtr(k);
}

// Verifies `leaf` against `ca` for a TLS server, at the time `at`.
int Verify(X509* ca, X509* leaf, absl::Time at) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
  X509_STORE_CTX_set_time(ctx, 0, absl::ToTimeT(at));
  const int ok = X509_verify_cert(ctx);
  const int err = ok == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return err;
}

TEST(TlsTest, ChainVerifiesAndNamesMatch) {
  TlsOptions options;
  options.extra_names = {"apiserver.test", "10.1.2.3", "fd00::7"};
  absl::StatusOr<TlsMaterial> m = GenerateTlsMaterial(options);
  ASSERT_TRUE(m.ok()) << m.status();
  X509Ptr ca = ReadCert(m->ca_cert_pem);
  X509Ptr server = ReadCert(m->server_cert_pem);
  PKeyPtr server_key = ReadKey(m->server_key_pem);
  PKeyPtr ca_key = ReadKey(m->ca_key_pem);
  ASSERT_TRUE(ca && server && server_key && ca_key);

  EXPECT_EQ(Verify(ca.get(), server.get(), absl::Now()), X509_V_OK);
  EXPECT_EQ(X509_check_private_key(server.get(), server_key.get()), 1);
  EXPECT_EQ(X509_check_private_key(ca.get(), ca_key.get()), 1);
  EXPECT_EQ(X509_check_ca(ca.get()), 1);
  EXPECT_EQ(X509_check_ca(server.get()), 0);
  EXPECT_EQ(EVP_PKEY_get_base_id(server_key.get()), EVP_PKEY_EC);

  EXPECT_EQ(X509_check_ip_asc(server.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "::1", 0), 1);
  EXPECT_EQ(X509_check_host(server.get(), "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(server.get(), "apiserver.test", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "10.1.2.3", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "fd00::7", 0), 1);
  EXPECT_EQ(X509_check_host(server.get(), "example.com", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "127.0.0.2", 0), 0);

  // A certificate signed by another CA does not verify.
  absl::StatusOr<TlsMaterial> other = GenerateTlsMaterial();
  ASSERT_TRUE(other.ok());
  X509Ptr other_ca = ReadCert(other->ca_cert_pem);
  EXPECT_NE(Verify(other_ca.get(), server.get(), absl::Now()), X509_V_OK);
}

TEST(TlsTest, ValidityWindow) {
  TlsOptions options;
  options.now = absl::FromUnixSeconds(1700000000);
  options.validity = absl::Hours(48);
  absl::StatusOr<TlsMaterial> m = GenerateTlsMaterial(options);
  ASSERT_TRUE(m.ok()) << m.status();
  X509Ptr ca = ReadCert(m->ca_cert_pem);
  X509Ptr server = ReadCert(m->server_cert_pem);
  EXPECT_EQ(Verify(ca.get(), server.get(), options.now - absl::Minutes(30)),
            X509_V_OK);
  EXPECT_EQ(Verify(ca.get(), server.get(), options.now + absl::Hours(47)),
            X509_V_OK);
  EXPECT_EQ(Verify(ca.get(), server.get(), options.now + absl::Hours(49)),
            X509_V_ERR_CERT_HAS_EXPIRED);
  EXPECT_EQ(Verify(ca.get(), server.get(), options.now - absl::Hours(2)),
            X509_V_ERR_CERT_NOT_YET_VALID);
}

TEST(TlsTest, Rsa) {
  TlsOptions options;
  options.key_type = TlsKeyType::kRsa2048;
  absl::StatusOr<TlsMaterial> m = GenerateTlsMaterial(options);
  ASSERT_TRUE(m.ok()) << m.status();
  X509Ptr ca = ReadCert(m->ca_cert_pem);
  X509Ptr server = ReadCert(m->server_cert_pem);
  PKeyPtr key = ReadKey(m->server_key_pem);
  EXPECT_EQ(Verify(ca.get(), server.get(), absl::Now()), X509_V_OK);
  EXPECT_EQ(EVP_PKEY_get_base_id(key.get()), EVP_PKEY_RSA);
  EXPECT_EQ(EVP_PKEY_get_bits(key.get()), 2048);
}

TEST(TlsTest, BadExtraName) {
  TlsOptions options;
  options.extra_names = {"bad name,DNS:evil"};
  absl::StatusOr<TlsMaterial> m = GenerateTlsMaterial(options);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(m.status().message(),
            "TLS: \"bad name,DNS:evil\" is neither an IP address nor a DNS "
            "name");
}

// A full TLS handshake in memory: the client trusts only the generated CA
// and checks the host name "localhost".
TEST(TlsTest, HandshakeWithHostnameCheck) {
  absl::StatusOr<TlsMaterial> m = GenerateTlsMaterial();
  ASSERT_TRUE(m.ok()) << m.status();
  X509Ptr ca = ReadCert(m->ca_cert_pem);
  X509Ptr cert = ReadCert(m->server_cert_pem);
  PKeyPtr key = ReadKey(m->server_key_pem);

  SSL_CTX* server_ctx = SSL_CTX_new(TLS_server_method());
  ASSERT_EQ(SSL_CTX_use_certificate(server_ctx, cert.get()), 1);
  ASSERT_EQ(SSL_CTX_use_PrivateKey(server_ctx, key.get()), 1);
  SSL_CTX* client_ctx = SSL_CTX_new(TLS_client_method());
  X509_STORE_add_cert(SSL_CTX_get_cert_store(client_ctx), ca.get());
  SSL_CTX_set_verify(client_ctx, SSL_VERIFY_PEER, nullptr);

  SSL* server = SSL_new(server_ctx);
  SSL* client = SSL_new(client_ctx);
  SSL_set1_host(client, "localhost");
  BIO* client_bio = nullptr;
  BIO* server_bio = nullptr;
  ASSERT_EQ(BIO_new_bio_pair(&client_bio, 0, &server_bio, 0), 1);
  SSL_set_bio(client, client_bio, client_bio);
  SSL_set_bio(server, server_bio, server_bio);
  SSL_set_connect_state(client);
  SSL_set_accept_state(server);

  bool client_done = false;
  bool server_done = false;
  for (int i = 0; i < 100 && !(client_done && server_done); ++i) {
    if (!client_done) {
      const int r = SSL_do_handshake(client);
      if (r == 1) {
        client_done = true;
      } else {
        ASSERT_EQ(SSL_get_error(client, r), SSL_ERROR_WANT_READ);
      }
    }
    if (!server_done) {
      const int r = SSL_do_handshake(server);
      if (r == 1) {
        server_done = true;
      } else {
        ASSERT_EQ(SSL_get_error(server, r), SSL_ERROR_WANT_READ);
      }
    }
  }
  EXPECT_TRUE(client_done && server_done);
  EXPECT_EQ(SSL_get_verify_result(client), X509_V_OK);

  SSL_free(client);
  SSL_free(server);
  SSL_CTX_free(client_ctx);
  SSL_CTX_free(server_ctx);
}

TEST(TlsTest, WritesFiles) {
  absl::StatusOr<TlsMaterial> m = GenerateTlsMaterial();
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string dir = ::testing::TempDir();
  absl::StatusOr<TlsFiles> files = WriteTlsFiles(*m, dir);
  ASSERT_TRUE(files.ok()) << files.status();
  std::ifstream key(files->server_key);
  std::stringstream text;
  text << key.rdbuf();
  EXPECT_EQ(text.str(), m->server_key_pem);
  struct stat st;
  ASSERT_EQ(stat(files->server_key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // A missing directory is created, parents too.
  const std::string nested = dir + "/certs-" + std::to_string(getpid()) + "/a";
  absl::StatusOr<TlsFiles> in_nested = WriteTlsFiles(*m, nested);
  ASSERT_TRUE(in_nested.ok()) << in_nested.status();
  EXPECT_EQ(stat(in_nested->ca_cert.c_str(), &st), 0);
  // One that cannot be: a regular file stands in the way.
  const std::string file = dir + "/not-a-dir-" + std::to_string(getpid());
  std::ofstream(file) << "x";
  absl::StatusOr<TlsFiles> blocked = WriteTlsFiles(*m, file + "/certs");
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(blocked.status().message()),
              ::testing::HasSubstr("cannot create certificate directory"));
}

}  // namespace
}  // namespace kcr
