// ScriptedServer: the local API server's HttpServer, on loopback, with a
// handler a REST-client test scripts — an answer, a chunked stream, a
// stream cut mid-event, a 401 sequence, a client-certificate check: what a
// real API server cannot be made to do on demand.
//
// ResponseWriter is a thin shorthand over apiserver::HttpExchange for those
// scripts.
#ifndef KCR_TEST_RUNTIME_CLIENT_SCRIPTED_SERVER_H_
#define KCR_TEST_RUNTIME_CLIENT_SCRIPTED_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "apiserver/endpoints/http_server.h"

namespace kcr::client::testing {

using TestRequest = apiserver::HttpRequest;

// How a script answers. Write errors (the client went away) are ignored;
// WriteChunk and WriteRaw return false after one.
class ResponseWriter {
 public:
  explicit ResponseWriter(apiserver::HttpExchange* exchange)
      : exchange_(exchange) {}

  // A complete answer with Content-Length; JSON unless `headers` name
  // another Content-Type.
  void Respond(
      int code, std::string_view body,
      const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    apiserver::HttpResponse response;
    response.status = code;
    response.body = std::string(body);
    for (const auto& [name, value] : headers) {
      if (absl::EqualsIgnoreCase(name, "content-type")) {
        response.content_type = value;
      } else {
        response.headers.emplace_back(name, value);
      }
    }
    exchange_->Respond(std::move(response));
  }
  // Headers of a chunked JSON answer; then WriteChunk, then EndChunks (or
  // not: the connection closes when the script returns).
  void StartChunks(int code) {
    exchange_->StartStream(code, "application/json", {});
  }
  bool WriteChunk(std::string_view data) { return exchange_->WriteChunk(data); }
  void EndChunks() { exchange_->EndStream(); }
  // Raw bytes on the connection, e.g. half a chunk before a cut.
  bool WriteRaw(std::string_view data) { return exchange_->WriteRaw(data); }

 private:
  apiserver::HttpExchange* const exchange_;
};

using Handler = std::function<void(const TestRequest&, ResponseWriter&)>;

struct ScriptedServerOptions {
  bool tls = false;
  std::string cert_file;  // PEM server certificate (tls)
  std::string key_file;
  // Ask for a client certificate signed by this CA (optional for clients).
  std::string client_ca_file;
};

class ScriptedServer {
 public:
  // Listens on 127.0.0.1 on a free port.
  static absl::StatusOr<std::unique_ptr<ScriptedServer>> Start(
      Handler handler, ScriptedServerOptions options = {}) {
    apiserver::HttpServerOptions server_options;
    if (options.tls) {
      server_options.tls_cert_file = options.cert_file;
      server_options.tls_key_file = options.key_file;
      server_options.tls_client_ca_file = options.client_ca_file;
    }
    std::unique_ptr<ScriptedServer> s(new ScriptedServer(
        std::move(server_options),
        [handler = std::move(handler)](const apiserver::HttpRequest& r,
                                       apiserver::HttpExchange* exchange) {
          ResponseWriter w(exchange);
          handler(r, w);
        }));
    absl::Status started = s->server_.Start();
    if (!started.ok()) return started;
    return s;
  }

  int port() const { return server_.port(); }
  // "http://127.0.0.1:<port>" or "https://...".
  std::string url() const {
    return absl::StrCat(server_.tls() ? "https" : "http",
                        "://127.0.0.1:", server_.port());
  }

 private:
  ScriptedServer(apiserver::HttpServerOptions options,
                 apiserver::HttpHandler handler)
      : server_(std::move(options), std::move(handler)) {}

  apiserver::HttpServer server_;
};

}  // namespace kcr::client::testing

#endif  // KCR_TEST_RUNTIME_CLIENT_SCRIPTED_SERVER_H_
