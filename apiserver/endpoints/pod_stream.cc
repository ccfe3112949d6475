#include "apiserver/endpoints/pod_stream.h"

#include <openssl/sha.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/errors/errors.h"
#include "api/types/field.h"
#include "apiserver/endpoints/pod_log.h"
#include "apiserver/endpoints/response_writers.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {
namespace {

namespace field = api::field;

// How long the server waits for what it needs from the client (the streams
// an exec asks for, the client's close) before it ends the connection.
constexpr absl::Duration kClientWait = absl::Seconds(5);

// The k8s channel numbers of exec and attach (remotecommand).
constexpr int kErrorChannel = 3;

bool QueryTrue(const HttpRequest& req, const std::string& name) {
  const std::string v = req.Query(name);
  return v == "true" || v == "1" || v == "True";
}

std::vector<std::string> HeaderList(const HttpRequest& req,
                                    const std::string& name) {
  std::vector<std::string> out;
  for (absl::string_view v : absl::StrSplit(req.Header(name), ',')) {
    v = absl::StripAsciiWhitespace(v);
    if (!v.empty()) out.emplace_back(v);
  }
  return out;
}

// kube's NewInternalError(err) as JSON: what the kubelet writes on the error
// channel of v4 and later when it cannot run the command.
std::string InternalErrorStatus(const std::string& err) {
  api::StatusError e = api::StatusError::InternalError(err);
  return e.ToJson();
}

// ---- WebSocket ----

enum class Encoding { kBinary, kBase64 };

struct WebSocketProtocol {
  std::string name;
  Encoding encoding = Encoding::kBinary;
  // v4 and later carry a Status on the error channel; before, plain text.
  bool status_errors = false;
};

// The channel protocols the kubelet speaks, by name.
bool FindChannelProtocol(const std::string& name, WebSocketProtocol* out) {
  struct Known {
    const char* name;
    Encoding encoding;
    bool status_errors;
  };
  static constexpr Known kKnown[] = {
      {"v5.channel.k8s.io", Encoding::kBinary, true},
      {"v4.channel.k8s.io", Encoding::kBinary, true},
      {"v4.base64.channel.k8s.io", Encoding::kBase64, true},
      {"v3.channel.k8s.io", Encoding::kBinary, false},
      {"v2.channel.k8s.io", Encoding::kBinary, false},
      {"channel.k8s.io", Encoding::kBinary, false},
      {"base64.channel.k8s.io", Encoding::kBase64, false},
  };
  for (const Known& k : kKnown) {
    if (name == k.name) {
      *out = {k.name, k.encoding, k.status_errors};
      return true;
    }
  }
  return false;
}

// One message on a k8s channel.
std::string ChannelMessage(const WebSocketProtocol& p, int channel,
                           std::string_view data) {
  if (p.encoding == Encoding::kBase64) {
    return WebSocketFrame(
        1,
        Cat(std::string(1, static_cast<char>('0' + channel)),
            absl::Base64Escape(absl::string_view(data.data(), data.size()))));
  }
  return WebSocketFrame(2,
                        Cat(std::string(1, static_cast<char>(channel)), data));
}

// Reads and drops what the client sends until it closes or `wait` passes,
// so that closing the socket does not reset what was just written.
void DrainUntilClosed(HttpExchange* ex, absl::Duration wait) {
  const absl::Time deadline = absl::Now() + wait;
  char scratch[4096];
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return;
    if (ex->ReadRaw(scratch, sizeof(scratch), left) < 0) return;
  }
}

void ServeWebSocket(const HttpRequest& req, HttpExchange* ex,
                    const std::string& subresource, const std::string& error,
                    const std::vector<int>& ports) {
  // The first protocol the client offers that the kubelet speaks; none
  // offered means channel.k8s.io.
  const std::vector<std::string> offered =
      HeaderList(req, "sec-websocket-protocol");
  WebSocketProtocol protocol{"", Encoding::kBinary, false};
  bool found = offered.empty();
  for (const std::string& name : offered) {
    if (FindChannelProtocol(name, &protocol)) {
      found = true;
      break;
    }
  }
  if (!found) {
    return SendApiError(
        ex, api::StatusError::BadRequest(Cat(
                "requested protocol(s) are not supported: [",
                absl::StrJoin(offered, " "),
                "]; supports [v5.channel.k8s.io v4.channel.k8s.io "
                "v4.base64.channel.k8s.io v3.channel.k8s.io "
                "v2.channel.k8s.io channel.k8s.io base64.channel.k8s.io]")));
  }
  std::string out =
      Cat("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
          "Connection: Upgrade\r\nSec-WebSocket-Accept: ",
          WebSocketAccept(req.Header("sec-websocket-key")), "\r\n");
  if (!protocol.name.empty()) {
    CatAppend(&out, "Sec-WebSocket-Protocol: ", protocol.name, "\r\n");
  }
  out += "\r\n";
  if (subresource == "portforward") {
    // Each port has a data channel (2i) and an error channel (2i+1); the
    // first message on each is the port, little-endian.
    for (size_t i = 0; i < ports.size(); ++i) {
      const std::string port{static_cast<char>(ports[i] & 0xff),
                             static_cast<char>((ports[i] >> 8) & 0xff)};
      out += ChannelMessage(protocol, static_cast<int>(2 * i), port);
      out += ChannelMessage(protocol, static_cast<int>(2 * i + 1), port);
      out += ChannelMessage(
          protocol, static_cast<int>(2 * i + 1),
          Cat("error forwarding port ", ports[i], " to pod ", error));
    }
  } else {
    out += ChannelMessage(
        protocol, kErrorChannel,
        protocol.status_errors ? InternalErrorStatus(error) : error);
  }
  // Close: 1000, normal closure.
  out += WebSocketFrame(8, std::string("\x03\xe8", 2));
  if (!ex->WriteRaw(out)) return;
  DrainUntilClosed(ex, kClientWait);
}

// ---- SPDY/3.1 ----

// Writes SPDY/3 frames. Header blocks are compressed as one zlib stream per
// connection; without a preset dictionary, which readers accept (the
// dictionary is only needed to read blocks that were written with it).
class SpdyWriter {
 public:
  SpdyWriter() {
    zs_.zalloc = Z_NULL;
    zs_.zfree = Z_NULL;
    zs_.opaque = Z_NULL;
    ok_ = deflateInit(&zs_, Z_DEFAULT_COMPRESSION) == Z_OK;
  }
  ~SpdyWriter() {
    if (ok_) deflateEnd(&zs_);
  }
  SpdyWriter(const SpdyWriter&) = delete;
  SpdyWriter& operator=(const SpdyWriter&) = delete;

  bool ok() const { return ok_; }

  // SYN_REPLY with no headers.
  std::string SynReply(uint32_t stream_id) {
    std::string payload;
    AppendU32(&payload, stream_id & 0x7fffffff);
    payload += EmptyHeaderBlock();
    return Control(2, 0, payload);
  }

  static std::string Data(uint32_t stream_id, bool fin, std::string_view data) {
    std::string out;
    AppendU32(&out, stream_id & 0x7fffffff);
    out += static_cast<char>(fin ? 1 : 0);
    AppendU24(&out, static_cast<uint32_t>(data.size()));
    out.append(data.data(), data.size());
    return out;
  }

  static std::string Control(int type, int flags, std::string_view payload) {
    std::string out;
    out += static_cast<char>(0x80);
    out += static_cast<char>(3);  // version
    out += static_cast<char>((type >> 8) & 0xff);
    out += static_cast<char>(type & 0xff);
    out += static_cast<char>(flags);
    AppendU24(&out, static_cast<uint32_t>(payload.size()));
    out.append(payload.data(), payload.size());
    return out;
  }

 private:
  static void AppendU32(std::string* out, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      *out += static_cast<char>((v >> shift) & 0xff);
    }
  }
  static void AppendU24(std::string* out, uint32_t v) {
    for (int shift = 16; shift >= 0; shift -= 8) {
      *out += static_cast<char>((v >> shift) & 0xff);
    }
  }

  // A header block of zero pairs, flushed to a byte boundary.
  std::string EmptyHeaderBlock() {
    unsigned char in[4] = {0, 0, 0, 0};
    unsigned char buf[64];
    std::string out;
    zs_.next_in = in;
    zs_.avail_in = sizeof(in);
    do {
      zs_.next_out = buf;
      zs_.avail_out = sizeof(buf);
      deflate(&zs_, Z_SYNC_FLUSH);
      out.append(reinterpret_cast<char*>(buf), sizeof(buf) - zs_.avail_out);
    } while (zs_.avail_out == 0);
    return out;
  }

  z_stream zs_{};
  bool ok_ = false;
};

uint32_t ReadU32(std::string_view b, size_t at) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(b[at])) << 24) |
         (static_cast<uint32_t>(static_cast<unsigned char>(b[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<unsigned char>(b[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 3]));
}

// The streams client-go's remotecommand opens for an exec or attach, error
// first: stdin, stdout and stderr as asked (no stderr with a TTY), and
// resize with a TTY (v3 and later).
int ExpectedExecStreams(const HttpRequest& req, const std::string& protocol) {
  const bool tty = QueryTrue(req, "tty");
  int n = 1;
  if (QueryTrue(req, "stdin")) ++n;
  if (QueryTrue(req, "stdout")) ++n;
  if (QueryTrue(req, "stderr") && !tty) ++n;
  if (tty &&
      (protocol == "v3.channel.k8s.io" || protocol == "v4.channel.k8s.io" ||
       protocol == "v5.channel.k8s.io")) {
    ++n;
  }
  return n;
}

void ServeSpdy(const HttpRequest& req, HttpExchange* ex,
               const std::string& subresource, const std::string& error,
               const std::string& pod_label) {
  const bool portforward = subresource == "portforward";
  // The protocol: portforward.k8s.io, or the newest channel protocol the
  // client offers (none: channel.k8s.io, and no header in the answer).
  std::string protocol;
  const std::vector<std::string> offered =
      HeaderList(req, "x-stream-protocol-version");
  if (portforward) {
    protocol = "portforward.k8s.io";
  } else {
    for (const char* p :
         {"v5.channel.k8s.io", "v4.channel.k8s.io", "v3.channel.k8s.io",
          "v2.channel.k8s.io", "channel.k8s.io"}) {
      if (std::find(offered.begin(), offered.end(), p) != offered.end()) {
        protocol = p;
        break;
      }
    }
    if (protocol.empty() && !offered.empty()) {
      return SendApiError(
          ex, api::StatusError::Forbidden(
                  {"", "pods"}, "",
                  Cat("unable to upgrade: no common protocol among [",
                      absl::StrJoin(offered, " "), "]")));
    }
  }
  SpdyWriter writer;
  if (!writer.ok()) {
    return SendApiError(
        ex, api::StatusError::InternalError("cannot start SPDY compression"));
  }
  std::string head =
      "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
      "Upgrade: SPDY/3.1\r\n";
  if (!protocol.empty()) {
    CatAppend(&head, "X-Stream-Protocol-Version: ", protocol, "\r\n");
  }
  head += "\r\n";
  if (!ex->WriteRaw(head)) return;

  const bool status_errors =
      protocol == "v4.channel.k8s.io" || protocol == "v5.channel.k8s.io";
  const int expected = portforward ? 0 : ExpectedExecStreams(req, protocol);
  std::vector<uint32_t> streams;
  bool answered = false;
  std::string in;
  char buf[16 << 10];
  // An exec ends once it answered (the client then closes); a port-forward
  // lasts until the client leaves.
  absl::Time deadline = absl::Now() + kClientWait;
  while (portforward || absl::Now() < deadline) {
    const int n =
        ex->ReadRaw(buf, sizeof(buf),
                    portforward ? absl::Seconds(1) : deadline - absl::Now());
    if (n < 0) return;
    if (n == 0) {
      if (ex->Cancelled()) return;
      if (!portforward && !answered && !streams.empty() &&
          absl::Now() >= deadline) {
        break;  // answer with the streams there are
      }
      continue;
    }
    in.append(buf, static_cast<size_t>(n));
    std::string out;
    while (in.size() >= 8) {
      const size_t length =
          (static_cast<size_t>(static_cast<unsigned char>(in[5])) << 16) |
          (static_cast<size_t>(static_cast<unsigned char>(in[6])) << 8) |
          static_cast<size_t>(static_cast<unsigned char>(in[7]));
      if (in.size() < 8 + length) break;
      const std::string_view frame(in.data(), 8 + length);
      const bool control = (static_cast<unsigned char>(frame[0]) & 0x80) != 0;
      const int type = (static_cast<unsigned char>(frame[2]) << 8) |
                       static_cast<unsigned char>(frame[3]);
      if (control && type == 1 && length >= 4) {  // SYN_STREAM
        const uint32_t id = ReadU32(frame, 8) & 0x7fffffff;
        streams.push_back(id);
        out += writer.SynReply(id);
        if (portforward && streams.size() % 2 == 0) {
          // A connection's pair: its error stream, then its data stream.
          const uint32_t error_stream = streams[streams.size() - 2];
          out += SpdyWriter::Data(error_stream, true, error);
          out += SpdyWriter::Data(id, true, "");
        }
      } else if (control && type == 6) {  // PING: echo it
        out.append(frame.data(), frame.size());
      } else if (control && type == 7) {  // GOAWAY
        if (!out.empty()) ex->WriteRaw(out);
        return;
      }
      in.erase(0, 8 + length);
    }
    if (!portforward && !answered &&
        static_cast<int>(streams.size()) >= expected) {
      // The error stream carries the outcome; every stream then ends, so
      // the client's copies of stdout and stderr finish.
      out += SpdyWriter::Data(
          streams[0], true, status_errors ? InternalErrorStatus(error) : error);
      for (size_t i = 1; i < streams.size(); ++i) {
        out += SpdyWriter::Data(streams[i], true, "");
      }
      answered = true;
      deadline = absl::Now() + kClientWait;
    }
    if (!out.empty() && !ex->WriteRaw(out)) return;
  }
  if (!answered && !streams.empty()) {
    std::string out = SpdyWriter::Data(
        streams[0], true, status_errors ? InternalErrorStatus(error) : error);
    for (size_t i = 1; i < streams.size(); ++i) {
      out += SpdyWriter::Data(streams[i], true, "");
    }
    ex->WriteRaw(out);
    DrainUntilClosed(ex, kClientWait);
  }
  VLOG(2) << "pods/" << subresource << " stream ended pod=" << pod_label;
}

}  // namespace

std::string WebSocketAccept(std::string_view key) {
  static constexpr char kGuid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  const std::string input = Cat(key, kGuid);
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(input.data()), input.size(),
       digest);
  return absl::Base64Escape(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

std::string WebSocketFrame(int opcode, std::string_view payload) {
  std::string out;
  out += static_cast<char>(0x80 | (opcode & 0x0f));
  const uint64_t n = payload.size();
  if (n < 126) {
    out += static_cast<char>(n);
  } else if (n <= 0xffff) {
    out += static_cast<char>(126);
    out += static_cast<char>((n >> 8) & 0xff);
    out += static_cast<char>(n & 0xff);
  } else {
    out += static_cast<char>(127);
    for (int shift = 56; shift >= 0; shift -= 8) {
      out += static_cast<char>((n >> shift) & 0xff);
    }
  }
  out.append(payload.data(), payload.size());
  return out;
}

void ServePodStream(Registry* registry, const ResourceInfo& pods,
                    const std::string& ns, const std::string& name,
                    const std::string& subresource, const HttpRequest& req,
                    HttpExchange* ex) {
  if (req.method != "GET" && req.method != "POST") {
    return SendApiError(ex, api::StatusError::MethodNotSupported(
                                {"", Cat("pods/", subresource)}, req.method));
  }
  absl::StatusOr<api::ObjectPtr> pod = registry->Get(pods, ns, name);
  if (!pod.ok()) return SendError(ex, pod.status());
  const api::Object& p = **pod;
  std::string container;
  std::vector<int> ports;
  if (subresource == "portforward") {
    for (absl::string_view v :
         absl::StrSplit(req.Query("ports"), ',', absl::SkipWhitespace())) {
      int port = 0;
      if (!absl::SimpleAtoi(v, &port) || port <= 0 || port > 65535) {
        return SendApiError(
            ex, api::StatusError::BadRequest(
                    Cat("invalid port ", std::string(v), " in ports")));
      }
      ports.push_back(port);
    }
  } else {
    absl::StatusOr<std::string> resolved =
        ResolveContainer(p, req.Query("container"));
    if (!resolved.ok()) return SendError(ex, resolved.status());
    container = *resolved;
  }
  const std::string node(field::String(Member(p.json(), "spec"), "nodeName"));
  if (node.empty()) {
    return SendApiError(
        ex, api::StatusError::BadRequest(
                Cat("pod ", name, " does not have a host assigned")));
  }
  const std::string reason =
      Cat("the simulated node \"", node, "\" runs no containers");
  std::string error;
  if (subresource == "exec") {
    error = Cat("cannot exec in container \"", container, "\" of pod \"", name,
                "\": ", reason);
  } else if (subresource == "attach") {
    error = Cat("cannot attach to container \"", container, "\" of pod \"",
                name, "\": ", reason);
  } else {
    // The kubelet's words after the port: "... to pod <name>, uid <uid>:".
    error = Cat(name, ", uid ", p.uid(), ": ", reason);
  }

  const std::string upgrade = absl::AsciiStrToLower(req.Header("upgrade"));
  if (upgrade == "websocket" && !req.Header("sec-websocket-key").empty()) {
    // kubectl port-forward tunnels SPDY in WebSocket; refusing the upgrade
    // makes it fall back to SPDY, as against servers before 1.31.
    if (subresource == "portforward" &&
        absl::StrContains(req.Header("sec-websocket-protocol"), "SPDY/3.1")) {
      return SendApiError(
          ex, api::StatusError::BadRequest(
                  "SPDY over WebSocket is not supported; use SPDY/3.1"));
    }
    if (subresource == "portforward" && ports.empty()) {
      return SendApiError(
          ex, api::StatusError::BadRequest(
                  "query parameter \"ports\" is required for port-forward "
                  "over WebSocket"));
    }
    return ServeWebSocket(req, ex, subresource, error, ports);
  }
  if (absl::StartsWithIgnoreCase(upgrade, "spdy/3.1")) {
    if (subresource == "portforward") {
      return ServeSpdy(req, ex, subresource,
                       Cat("error forwarding port to pod ", error),
                       Cat(ns, "/", name));
    }
    return ServeSpdy(req, ex, subresource, error, Cat(ns, "/", name));
  }
  return SendApiError(ex,
                      api::StatusError::BadRequest("Upgrade request required"));
}

}  // namespace apiserver
}  // namespace kcr
