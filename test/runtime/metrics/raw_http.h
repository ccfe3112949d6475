// RawHttp: sends bytes to a loopback port and returns everything the
// server answers until it closes, for tests of small HTTP servers.
#ifndef KCR_TEST_RUNTIME_METRICS_RAW_HTTP_H_
#define KCR_TEST_RUNTIME_METRICS_RAW_HTTP_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace kcr::metrics::testing {

// A connected socket to 127.0.0.1:port, or -1.
inline int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

inline std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, n);
  return out;
}

inline std::string RawHttp(int port, const std::string& request) {
  const int fd = Connect(port);
  if (fd < 0) return "<connect failed>";
  (void)!write(fd, request.data(), request.size());
  std::string out = ReadAll(fd);
  close(fd);
  return out;
}

inline std::string Get(int port, const std::string& target) {
  return RawHttp(port,
                 "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
}

// Sends `request` over TLS to 127.0.0.1:port, trusting only `ca_pem` and
// checking that the certificate names `host` (or trusting anything when
// `ca_pem` is empty); returns the whole answer, or "<tls failed>" when the
// handshake (or the verification) fails.
inline std::string TlsHttp(int port, const std::string& ca_pem,
                           const std::string& request,
                           const std::string& host = "localhost") {
  const int fd = Connect(port);
  if (fd < 0) return "<connect failed>";
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  BIO* bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
  while (X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store, ca);
    X509_free(ca);
  }
  BIO_free(bio);
  if (!ca_pem.empty()) SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  SSL_set_tlsext_host_name(ssl, host.c_str());
  if (!ca_pem.empty()) SSL_set1_host(ssl, host.c_str());
  std::string out;
  if (SSL_connect(ssl) == 1) {
    SSL_write(ssl, request.data(), static_cast<int>(request.size()));
    char buf[4096];
    int n;
    while ((n = SSL_read(ssl, buf, sizeof(buf))) > 0) out.append(buf, n);
  } else {
    out = "<tls failed>";
  }
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  close(fd);
  return out;
}

// The body of a whole answer.
inline std::string Body(const std::string& answer) {
  const size_t end = answer.find("\r\n\r\n");
  return end == std::string::npos ? "" : answer.substr(end + 4);
}

}  // namespace kcr::metrics::testing

#endif  // KCR_TEST_RUNTIME_METRICS_RAW_HTTP_H_
