// TestServer: a small HTTP/1.1 server (optionally over TLS) for the REST
// client's transport tests: it hands each request to a handler that can
// answer normally, stream a chunked body, or cut the connection anywhere —
// what a real API server cannot be made to do on demand (a wrong
// certificate, a 401 sequence, a stream cut mid-event).
//
// One thread per connection; every answer closes its connection.
#ifndef KCR_TEST_RUNTIME_CLIENT_TEST_SERVER_H_
#define KCR_TEST_RUNTIME_CLIENT_TEST_SERVER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "runtime/base/mutex.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace kcr::client::testing {

struct TestRequest {
  std::string method;
  std::string target;                          // path?query as sent
  std::string path;                            // percent-decoded
  std::map<std::string, std::string> query;    // decoded
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string client_cert_cn;  // TLS with a client certificate

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
  std::string Query(const std::string& name) const {
    auto it = query.find(name);
    return it == query.end() ? "" : it->second;
  }
  bool HasQuery(const std::string& name) const { return query.count(name) > 0; }
};

class Connection;

// How a handler answers. Write errors (the client went away) are ignored;
// Write/WriteChunk return false after one.
class ResponseWriter {
 public:
  explicit ResponseWriter(Connection* conn) : conn_(conn) {}

  // A complete answer with Content-Length.
  void Respond(
      int code, std::string_view body,
      const std::vector<std::pair<std::string, std::string>>& headers = {});
  // Headers of a chunked answer; then WriteChunk, then EndChunks (or not).
  void StartChunks(int code);
  bool WriteChunk(std::string_view data);
  void EndChunks();
  // Raw bytes on the connection, e.g. half a chunk before a cut.
  bool WriteRaw(std::string_view data);

 private:
  Connection* conn_;
};

using Handler = std::function<void(const TestRequest&, ResponseWriter&)>;

struct TestServerOptions {
  bool tls = false;
  std::string cert_file;  // PEM server certificate (tls)
  std::string key_file;
  // Ask for a client certificate signed by this CA (optional for clients).
  std::string client_ca_file;
};

class TestServer {
 public:
  // Listens on 127.0.0.1 on a free port.
  static absl::StatusOr<std::unique_ptr<TestServer>> Start(
      Handler handler, TestServerOptions options = {});
  ~TestServer();

  int port() const { return port_; }
  // "http://127.0.0.1:<port>" or "https://...".
  std::string url() const;
  // Requests received so far.
  int requests() const;

 private:
  TestServer(Handler handler, TestServerOptions options);
  void AcceptLoop();
  void Serve(int fd);
  void ServeConnection(Connection& conn, SSL* ssl);

  const Handler handler_;
  const TestServerOptions options_;
  SSL_CTX* ssl_ctx_ = nullptr;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  mutable Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::vector<int> fds_ ABSL_GUARDED_BY(mu_);
  int requests_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kcr::client::testing

#endif  // KCR_TEST_RUNTIME_CLIENT_TEST_SERVER_H_
