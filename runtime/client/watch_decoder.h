// WatchDecoder: the incremental decoder of a watch response body.
//
// kube-apiserver streams a watch as JSON events, one per line:
//   {"type":"ADDED","object":{...}}\n{"type":"MODIFIED","object":{...}}\n
// in HTTP chunks whose boundaries fall anywhere: inside an event, inside a
// string, between a backslash and the character it escapes. Feed() takes
// the bytes as they arrive, in chunks of any size, and returns every event
// they complete; Finish() says whether the stream ended between events.
//
// Events are framed by tracking JSON nesting (outside strings), so an event
// split over many chunks, many events in one chunk, events with no newline
// between them, and objects of any size up to `max_event_bytes` all decode
// the same. Each byte is scanned once; a pending partial event is buffered
// once (no quadratic re-scanning for huge objects). An event whole in its
// chunk and ended by a newline, as kube-apiserver writes them, is parsed
// as that line without framing it byte by byte.
//
// Errors are sticky: after a Feed or Finish error the decoder returns the
// same error from every later call. Not thread-safe; one per stream.
#ifndef KCR_RUNTIME_CLIENT_WATCH_DECODER_H_
#define KCR_RUNTIME_CLIENT_WATCH_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "api/object.h"
#include "runtime/client/watch.h"

namespace kcr::client {

struct WatchDecoderOptions {
  // The largest event accepted; a bigger one is an error (kResourceExhausted)
  // rather than unbounded buffering.
  size_t max_event_bytes = 64 << 20;
  // Passed to Object parsing (e.g. strip managedFields while decoding).
  api::ParseOptions parse_options;
};

class WatchDecoder {
 public:
  explicit WatchDecoder(WatchDecoderOptions options = {});

  // Consumes `chunk` and appends the events it completes to `*events`, in
  // stream order. Errors (kInvalidArgument): bytes other than whitespace
  // between events, an event that is not valid JSON, lacks a string `type`
  // among ADDED/MODIFIED/DELETED/BOOKMARK/ERROR, or has an `object` that is
  // not a valid Kubernetes object; nesting deeper than api::kMaxJsonDepth.
  // kResourceExhausted: an event longer than max_event_bytes. Events
  // completed before the error are still appended.
  absl::Status Feed(std::string_view chunk, std::vector<WatchEvent>* events);

  // Declares the end of the stream. kDataLoss if it ended inside an event
  // ("watch stream ended in the middle of an event after N bytes").
  absl::Status Finish();

  // Another thread's share of the work: a line of the stream (without its
  // newline) parsed as one whole event of kube-apiserver's usual form. The
  // line is exactly that event when it began where an event may start
  // (between_events() once the bytes before it were fed): a raw newline
  // cannot occur inside a JSON string, and the line parsed whole.
  // kDeclined: not that form, told from its first bytes; kParseFailed: it
  // looked so, but did not parse. `*event` is set only when kDecoded.
  // Thread-safe (const); no effect on the decoder.
  enum class LineDecode { kDecoded, kDeclined, kParseFailed };
  LineDecode DecodeLine(std::string_view line, WatchEvent* event) const;

  // Whether the bytes fed so far end between events.
  bool between_events() const { return !in_event_; }
  // The caller decoded the next `bytes` bytes of the stream as one event
  // (DecodeLine) instead of feeding them; requires between_events().
  void SkipDecoded(size_t bytes) {
    ++events_decoded_;
    offset_ += static_cast<int64_t>(bytes);
  }

  // Events decoded so far.
  int64_t events_decoded() const { return events_decoded_; }
  // Bytes of the partial event waiting for more input.
  size_t pending_bytes() const { return pending_.size(); }

 private:
  absl::Status Decode(std::string_view text, std::vector<WatchEvent>* events);
  using Fast = LineDecode;
  // The common form of an event, decoded without a DOM; appends to
  // `*events` only when kDecoded.
  Fast DecodeFast(std::string_view text, std::vector<WatchEvent>* events) const;
  absl::Status Fail(absl::Status status);

  const WatchDecoderOptions options_;
  absl::Status error_;
  std::string pending_;  // bytes of the event being framed
  bool in_event_ = false;
  bool in_string_ = false;
  bool escaped_ = false;
  // Whether an event's line is tried as a whole event first.
  bool line_fast_ = true;
  int depth_ = 0;
  int64_t events_decoded_ = 0;
  int64_t offset_ = 0;  // stream bytes consumed, for error messages
};

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_WATCH_DECODER_H_
