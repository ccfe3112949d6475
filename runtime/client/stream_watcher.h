// StreamWatcher: a WatchStream over the body of a watch response, as
// client-go's watch.StreamWatcher: a thread of its own reads the body and
// hands it to Next() through a bounded queue, so that a slow consumer slows
// the reading instead of growing memory. The events are parsed on both
// threads (the reader's and the one calling Next) and come out in stream
// order, exactly as WatchDecoder decodes the body. BodyReader is the seam
// to the transport: the REST client gives the body of its HTTP response
// (runtime/client/transport/http_stream.h).
#ifndef KCR_RUNTIME_CLIENT_STREAM_WATCHER_H_
#define KCR_RUNTIME_CLIENT_STREAM_WATCHER_H_

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "base/context.h"
#include "runtime/client/watch.h"

namespace kcr::client {

// The body of a streaming response. Read is called from one thread; Cancel
// from any.
class BodyReader {
 public:
  virtual ~BodyReader() = default;
  // Waits for at least one byte, then takes whatever else has arrived, up
  // to `size` bytes in all; 0 at the clean end of the body. A broken
  // connection is an error whose message says why.
  virtual absl::StatusOr<size_t> Read(char* data, size_t size) = 0;
  // Closes the connection, so that a Read blocked on it fails at once.
  virtual void Cancel() = 0;
};

// Starts reading `body`. `ctx` bounds the stream: when it ends, so does the
// stream (status() is ctx.Err()). Events that do not decode end the stream
// with the decoder's error.
std::unique_ptr<WatchStream> NewStreamWatcher(
    const Context& ctx, std::unique_ptr<BodyReader> body,
    const api::ParseOptions& parse_options);

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_STREAM_WATCHER_H_
