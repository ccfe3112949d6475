// HttpEndpoint: the small HTTP/1.1 server a controller process exposes for
// its scrapers and its kubelet: /metrics, /healthz, /readyz. It answers GET
// (and HEAD) requests on exact paths, or on a path prefix ending in '/',
// with handlers registered before Start; anything else is a 404, a method
// other than GET or HEAD a 405.
//
// With `tls` set it serves HTTPS instead (TLS 1.2 or later, the given
// certificate and key), for metrics that only authorised scrapers may
// read; see metrics_auth.h.
//
// It is deliberately narrow: one request per connection
// (answers carry `Connection: close`), request heads up to 16 KiB and no
// request bodies. A client that sends nothing within the read timeout is
// dropped, and the workers that answer are few and fixed, so a slow or
// hostile client can hold up a probe for at most the read timeout and
// never grows the process.
//
// Threads: Start spawns one accepting thread and `workers` answering
// threads; Stop (or the destructor) closes the socket and joins them all,
// promptly: every blocking wait also watches a stop pipe.
#ifndef KCR_RUNTIME_METRICS_HTTP_ENDPOINT_H_
#define KCR_RUNTIME_METRICS_HTTP_ENDPOINT_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/mutex.h"

struct ssl_ctx_st;

namespace kcr::metrics {

struct HttpGet {
  std::string path;   // as sent, without the query
  std::string query;  // after '?', undecoded; "" without one
  bool head = false;  // a HEAD request: the body is not sent
  // The Authorization header's value as sent ("" without one).
  std::string authorization;

  // Whether the query holds `name` as a parameter ("verbose", "a=1").
  bool HasQueryParam(std::string_view name) const;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// A server certificate (with any intermediates after it) and its private
// key, PEM.
struct HttpTls {
  std::string cert_pem;
  std::string key_pem;
};

struct HttpEndpointOptions {
  // "host:port", ":port" (every interface) or "[v6]:port"; port 0 picks a
  // free one (see port()).
  std::string bind_address = ":8080";
  // How long a connection may take to send its request head.
  absl::Duration read_timeout = absl::Seconds(5);
  // Threads answering requests; connections beyond them wait, up to
  // `max_pending`, after which new ones are closed at once.
  int workers = 2;
  int max_pending = 64;
  // Serve HTTPS with this certificate; plain HTTP without.
  std::optional<HttpTls> tls;
};

class HttpEndpoint {
 public:
  using Handler = std::function<HttpReply(const HttpGet&)>;

  // Binds and listens (an address in use, or one that does not parse, is
  // an error naming it); serves nothing until Start.
  static absl::StatusOr<std::unique_ptr<HttpEndpoint>> Create(
      HttpEndpointOptions options);
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // Serves `path` with `handler`: that path exactly, or, for a path ending
  // in '/', every path under it (the longest registered prefix wins).
  // Before Start only. Handlers run on the answering threads, concurrently.
  void Handle(std::string path, Handler handler);

  // Starts serving. Once only.
  void Start();
  // Stops serving and joins every thread. Idempotent.
  void Stop();

  // The port listened on (the one chosen when the address asked for 0).
  int port() const { return port_; }
  // "host:port" as bound, with the chosen port.
  const std::string& address() const { return address_; }
  // Whether it serves HTTPS.
  bool tls() const { return tls_ != nullptr; }

 private:
  struct TlsContextDeleter {
    void operator()(ssl_ctx_st* ctx) const;
  };
  using TlsContext = std::unique_ptr<ssl_ctx_st, TlsContextDeleter>;

  HttpEndpoint(HttpEndpointOptions options, int listen_fd, int port,
               std::string address, TlsContext tls);
  void AcceptLoop();
  void WorkLoop();
  void Serve(int fd);
  HttpReply Dispatch(const HttpGet& get) const;

  const HttpEndpointOptions options_;
  const int listen_fd_;
  const int port_;
  const std::string address_;
  const TlsContext tls_;  // null for plain HTTP
  // Written to once by Stop; every poll watches its read end.
  int stop_pipe_[2] = {-1, -1};
  std::map<std::string, Handler> handlers_;  // set before Start, then read

  Mutex mu_;
  CondVar pending_ready_;
  std::deque<int> pending_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

}  // namespace kcr::metrics

#endif  // KCR_RUNTIME_METRICS_HTTP_ENDPOINT_H_
