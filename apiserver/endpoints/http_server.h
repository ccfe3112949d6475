// HttpServer: a small HTTP/1.1 server for the local API server, on
// Boost.Beast with one thread per connection (synchronous I/O). It speaks
// plain HTTP or, given a certificate and key, HTTPS; keeps connections
// alive; and lets a handler either answer at once (HttpResponse) or stream
// a chunked body (watches), flushing each chunk.
//
// Threads: Start() spawns an accept thread; each connection gets its own
// thread with a small fixed stack (HttpServerOptions::thread_stack_bytes,
// kConnectionThreadStackBytes by default), so hundreds of open watches cost
// little memory. Nothing busy-waits: a
// streaming handler blocks on its own data source and checks
// HttpExchange::Cancelled() whenever it wakes.
//
// Stop() stops accepting, shuts every connection's socket down (a blocked
// read or write returns at once), tells streaming handlers to end through
// Cancelled() plus the `on_cancel` callback (which must wake them), and
// joins every thread. DropConnections() does the same to the connections
// only and keeps serving ("restart" for fault injection).
//
// A request that cannot reach the handler is still answered with a Status
// and the connection closed: 413 RequestEntityTooLarge past
// max_body_bytes, 431 for headers past kMaxRequestHeaderBytes, 400
// BadRequest for malformed HTTP or a body cut short. The rest of a refused
// body is read and dropped (for a bounded time) before the close, so a
// client still sending it receives the answer instead of a reset.
//
// For tests of clients facing broken servers, a handler can also write raw
// bytes outside any framing (HttpExchange::WriteRaw): half a response, a
// chunk that never ends; the connection then closes once the handler
// returns.
//
// The public interface carries no Boost types; Beast stays in the .cc.
#ifndef KCR_APISERVER_ENDPOINTS_HTTP_SERVER_H_
#define KCR_APISERVER_ENDPOINTS_HTTP_SERVER_H_

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "apiserver/endpoints/request_limits.h"
#include "base/mutex.h"

namespace kcr {
namespace apiserver {

struct HttpRequest {
  std::string method;  // "GET", ...
  std::string target;  // as sent: "/api/v1/pods?watch=1"
  std::string path;    // percent-decoded path, no query
  // Decoded query parameters; for a repeated name the first value.
  std::map<std::string, std::string> query;
  // Header names in lower case.
  std::map<std::string, std::string> headers;
  std::string body;
  std::string remote_address;
  // Common name of the client's TLS certificate, verified against
  // HttpServerOptions::tls_client_ca_file; "" without one.
  std::string client_cert_cn;
  // Its organizations (O=), in order: the user's groups.
  std::vector<std::string> client_cert_organizations;

  // The header's value or "".
  std::string Header(const std::string& lower_name) const;
  bool HasQuery(const std::string& name) const { return query.count(name) > 0; }
  std::string Query(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  // Empty: no Content-Type header (304 Not Modified).
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// One request being served. Call Respond once, or StartStream, any number
// of WriteChunk, then EndStream.
class HttpExchange {
 public:
  virtual ~HttpExchange() = default;
  virtual void Respond(HttpResponse response) = 0;
  // Sends the status line and headers (Transfer-Encoding: chunked) at once.
  // Returns false if the connection is gone.
  virtual bool StartStream(
      int status, const std::string& content_type,
      const std::vector<std::pair<std::string, std::string>>& headers) = 0;
  // Sends one chunk and flushes it; false if the connection is gone.
  virtual bool WriteChunk(std::string_view data) = 0;
  // Ends the chunked body (zero-length chunk).
  virtual void EndStream() = 0;
  // Takes the connection over: writes `bytes` as they are, with no framing
  // (a partial response, half a chunk), and closes the connection once the
  // handler returns, whatever else it sent. For tests of clients facing a
  // broken server. False if the connection is gone or this exchange cannot
  // write raw bytes.
  virtual bool WriteRaw(std::string_view bytes) {
    static_cast<void>(bytes);
    return false;
  }
  // After WriteRaw (a protocol upgrade: 101 Switching Protocols), reads
  // what the client sends on the connection: up to `n` bytes into `out`,
  // first those already read past the request. Waits at most `timeout`.
  // Returns the count, 0 when nothing came in time, -1 when the client
  // closed, the connection broke or the server is stopping.
  virtual int ReadRaw(char* out, size_t n, absl::Duration timeout) {
    static_cast<void>(out);
    static_cast<void>(n);
    static_cast<void>(timeout);
    return -1;
  }
  // True once the server is stopping or dropping this connection, or the
  // peer has closed it. Streaming handlers check it whenever they wake.
  virtual bool Cancelled() = 0;
};

using HttpHandler = std::function<void(const HttpRequest&, HttpExchange*)>;

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  int port = 0;  // 0 picks a free port
  // PEM files; both set means HTTPS.
  std::string tls_cert_file;
  std::string tls_key_file;
  // PEM CA bundle: with HTTPS, ask clients for a certificate signed by it
  // (optional for the client) and report its common name in
  // HttpRequest::client_cert_cn.
  std::string tls_client_ca_file;
  // Larger request bodies are refused with 413 RequestEntityTooLarge
  // ("Request entity too large: limit is 3145728") before they are read
  // whole.
  size_t max_body_bytes = kMaxRequestBodyBytes;
  size_t thread_stack_bytes = kConnectionThreadStackBytes;
  // Called (from Stop or DropConnections) after connections are marked
  // cancelled, to wake streaming handlers blocked elsewhere.
  std::function<void()> on_cancel;
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts accepting. Errors: the address cannot be bound, the
  // certificate or key cannot be loaded.
  absl::Status Start();
  // The bound port (after Start).
  int port() const { return port_; }
  bool tls() const { return !options_.tls_cert_file.empty(); }

  // Closes every open connection; keeps accepting new ones.
  void DropConnections();
  // Stops accepting, closes every connection, joins every thread.
  // Idempotent.
  void Stop();

  // Connections currently open.
  size_t ConnectionCount() const;

  struct Connection;

 private:
  void AcceptLoop();
  void Reap(bool all);
  void CancelConnections();

  const HttpServerOptions options_;
  const HttpHandler handler_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  bool started_ = false;
  pthread_t accept_thread_{};

  mutable Mutex mu_;
  std::vector<std::shared_ptr<Connection>> connections_ ABSL_GUARDED_BY(mu_);
};

// Starts `fn` on a new joinable thread with the given stack size.
absl::StatusOr<pthread_t> StartThread(std::function<void()> fn,
                                      size_t stack_bytes);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_HTTP_SERVER_H_
