// HttpStream: an HTTP/1.1 request on a connection of its own, whose
// response body is read as it arrives (a list, a watch), on the caller's
// thread. Plain POSIX sockets and OpenSSL: Read() takes bytes from the
// socket straight into the caller's buffer and removes the chunked framing
// in place, where a general-purpose client copies each byte through its
// own buffers and threads first. A list or a watch closes its connection
// when the stream is destroyed (client-go also gives each watch a
// connection); a short request whose answer was read to its end may hand
// the connection back to the StreamDialer, which keeps it for the next
// request (HTTP/1.1 keep-alive), as client-go's transport does.
//
// StreamDialer holds what every connection of one REST client shares: the
// server's address, the TLS context built from the client's TLS material
// (rebuilt when an exec plugin installs a new client certificate), and the
// idle connections.
//
// No HTTP proxy: the cpprestsdk transport of the other verbs uses none
// either.
#ifndef KCR_RUNTIME_CLIENT_TRANSPORT_HTTP_STREAM_H_
#define KCR_RUNTIME_CLIENT_TRANSPORT_HTTP_STREAM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/mutex.h"
#include "runtime/client/rest_config.h"
#include "runtime/client/stream_watcher.h"
#include "runtime/client/transport/tls.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace kcr::client::transport {

// The request line and headers of a streamed GET.
struct StreamRequest {
  std::string method = "GET";
  // Path and query, appended to the path of the configured host.
  std::string target;
  // Sent as given, after Host (unless one of them is Host).
  std::vector<std::pair<std::string, std::string>> headers;
  // Bounds the connection and the response's header section, and then
  // each wait for more of the body: a silent connection fails after it.
  absl::Duration timeout = absl::Hours(1);
  // Sent after the headers with its Content-Length (which a POST, PUT or
  // PATCH always carries, 0 when empty). Must stay valid during Start.
  std::string_view body;
};

// The most a response's status line and headers may take.
inline constexpr size_t kMaxHeaderBytes = 1 << 20;

class StreamDialer;

// One request and its response. Start, Read and ReadAll are called from
// one thread at a time; Cancel from any thread, at any time until the
// stream is destroyed.
class HttpStream final : public BodyReader {
 public:
  ~HttpStream() override;
  HttpStream(const HttpStream&) = delete;
  HttpStream& operator=(const HttpStream&) = delete;

  // Connects, sends the request and reads the response up to its body.
  // kUnavailable on a failure to connect, a TLS handshake that fails (the
  // message then contains "TLS handshake" and, when the server's
  // certificate is not trusted, "certificate verify failed"), a broken or
  // malformed response; kCancelled after Cancel(), which interrupts every
  // step but the host name's resolution (getaddrinfo cannot be).
  absl::Status Start(const StreamRequest& request);

  // After Start: the response's status code and the value of its header
  // `name` (any case; "" when absent).
  int status_code() const { return status_code_; }
  std::string Header(std::string_view name) const;

  // The body as it arrives (BodyReader): 0 once it has ended cleanly (the
  // last chunk and trailers, Content-Length bytes, or the server's close
  // when the response has neither); kUnavailable when the connection
  // breaks before that or the chunked framing is malformed,
  // kDeadlineExceeded after `timeout` without a byte, kCancelled after
  // Cancel().
  absl::StatusOr<size_t> Read(char* data, size_t size) override;

  // The whole body, at most `limit` bytes of it (the rest is not read): an
  // error answer's Status.
  absl::StatusOr<std::string> ReadAll(size_t limit);

  // Makes a blocked (and every later) Start or Read fail at once. The
  // socket is only signalled, never closed here, so TLS state is touched
  // by the reading thread alone.
  void Cancel() override;

  // Whether the connection can carry another request: the answer was read
  // to its end (Content-Length, the last chunk, or no body), nothing
  // followed it, the server did not ask to close, and nothing was
  // cancelled. Start may then be called again for the next request.
  bool Reusable() const;
  // After a failed Start: the connection had carried an earlier request
  // and not one byte of an answer came back, most likely because the
  // server closed it while it was idle. Sending the request again on a new
  // connection is then safe when none of it was written (WroteRequest), or
  // when it is idempotent (as Go's transport decides).
  bool FailedOnStaleConnection() const {
    return reused_ && !answer_started_ &&
           !cancelled_.load(std::memory_order_acquire);
  }
  // Whether any byte of the current request went out.
  bool WroteRequest() const { return wrote_request_; }

 private:
  friend class StreamDialer;
  HttpStream(std::string host, std::string port, std::string path_prefix,
             std::string verify_name, bool tls, SSL_CTX* ctx);

  enum class Wait { kRead, kWrite };
  // Waits until the socket is ready for `what` or the deadline passes
  // (kDeadlineExceeded), or Cancel (kCancelled).
  absl::Status WaitFor(Wait what, absl::Time deadline);
  absl::Status Connect(absl::Time deadline);
  absl::Status Handshake(absl::Time deadline);
  absl::Status WriteAll(absl::string_view data, absl::Time deadline);
  // Up to `size` bytes from the socket, waiting for at least one; 0 at
  // the server's end of the stream.
  absl::StatusOr<size_t> ReadSome(char* data, size_t size, absl::Time deadline);
  // Reads and parses the status line and headers (skipping 1xx answers).
  absl::Status ReadHead(absl::Time deadline);
  absl::Status ParseHead(absl::string_view head);
  // Up to `size` body bytes before framing: what ReadHead read past the
  // headers, then the socket.
  absl::StatusOr<size_t> ReadRaw(char* data, size_t size);
  // Removes the chunked framing from data[0, n) in place; the data bytes
  // that remain, in front.
  absl::StatusOr<size_t> Dechunk(char* data, size_t n);
  absl::Status CancelledOr(absl::Status other) const;
  // Clears what the previous answer left, for the next request on the
  // same connection.
  void ResetAnswer();
  // An idle connection's socket is readable (the server closed it, or
  // sent what no request asked for): it cannot carry a request.
  bool IdleConnectionBroken() const;

  const std::string host_;
  const std::string port_;
  const std::string path_prefix_;
  const std::string verify_name_;
  const bool tls_;
  SSL_CTX* const ssl_ctx_;  // owned reference; null for http
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  // Written by Cancel: poll() on the socket watches it too.
  int cancel_fd_ = -1;
  std::atomic<bool> cancelled_{false};
  absl::Duration idle_timeout_ = absl::Hours(1);

  int status_code_ = 0;
  std::vector<std::pair<std::string, std::string>> headers_;
  // Bytes read past the header section, served before the socket.
  std::string pending_;
  size_t pending_pos_ = 0;

  enum class Framing { kChunked, kLength, kClose, kNone };
  Framing framing_ = Framing::kNone;
  uint64_t remaining_ = 0;  // kLength: bytes left; kChunked: of this chunk
  enum class ChunkState {
    kSize,         // hex digits of a chunk's size
    kExtension,    // after the size, up to the end of the line
    kData,         // remaining_ bytes of data
    kDataEnd,      // the CRLF after the data
    kTrailerLine,  // at the start of a trailer line (or the final CRLF)
    kTrailer,      // within a trailer line
    kDone,
  };
  ChunkState chunk_state_ = ChunkState::kSize;
  int size_digits_ = 0;
  size_t line_bytes_ = 0;  // of the chunk line or trailer being skipped
  bool body_ended_ = false;
  // Bytes came after the end of a chunked body (never read).
  bool after_body_ = false;
  // HTTP/1.1 and no "Connection: close".
  bool keep_alive_ = false;
  // Start ran on a connection that had carried a request before.
  bool reused_ = false;
  // A byte of the answer to the current request arrived.
  bool answer_started_ = false;
  // A byte of the current request was sent.
  bool wrote_request_ = false;
  // The TLS context generation the connection was made with.
  uint64_t generation_ = 0;
};

// Opens HttpStreams to the API server of one Config. Thread-safe.
class StreamDialer {
 public:
  // kInvalidArgument when config.host is not an http(s) URL. `tls` holds
  // the client's TLS material (LoadTlsMaterial) and is read at each new
  // connection.
  static absl::StatusOr<std::unique_ptr<StreamDialer>> Create(
      const Config& config, std::shared_ptr<TlsMaterial> tls);
  ~StreamDialer();

  // A stream to start; fails only when the TLS context cannot be built
  // from the material (kInvalidArgument).
  absl::StatusOr<std::unique_ptr<HttpStream>> NewStream();

  // An idle connection that carried an earlier request (made with the
  // current client certificate and not closed by the server), else a new
  // stream, as NewStream.
  absl::StatusOr<std::unique_ptr<HttpStream>> ReuseOrNewStream();
  // Keeps `stream` for a later ReuseOrNewStream when it is Reusable and
  // fewer than kMaxIdle wait; otherwise closes it.
  void Release(std::unique_ptr<HttpStream> stream);

  // Closes the idle connections (the client certificate changed).
  void CloseIdle();

  // Idle connections kept (client-go's MaxIdleConnsPerHost is 25 for
  // Kubernetes clients; the REST client's callers are a few workers).
  static constexpr size_t kMaxIdle = 16;

 private:
  StreamDialer(const Config& config, std::shared_ptr<TlsMaterial> tls)
      : config_(config), tls_material_(std::move(tls)) {}
  // The TLS context for the current certificate generation, one more
  // reference to it.
  absl::StatusOr<SSL_CTX*> Context();

  const Config config_;
  const std::shared_ptr<TlsMaterial> tls_material_;
  bool tls_ = false;
  std::string host_;
  std::string port_;
  std::string path_prefix_;
  std::string verify_name_;
  // The current client certificate's generation (TLS), else 0.
  uint64_t CurrentGeneration() const;

  Mutex mu_;
  SSL_CTX* ctx_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t ctx_generation_ ABSL_GUARDED_BY(mu_) = 0;
  // Most recently released last.
  std::vector<std::unique_ptr<HttpStream>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::client::transport

#endif  // KCR_RUNTIME_CLIENT_TRANSPORT_HTTP_STREAM_H_
