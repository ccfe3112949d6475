// Watch: the events of a watch on a collection, as client-go's
// k8s.io/apimachinery/pkg/watch (Event, Interface).
//
// A WatchStream yields events in the order the server sent them until the
// server ends the stream, the stream breaks, or the caller stops it.
#ifndef KCR_RUNTIME_CLIENT_WATCH_H_
#define KCR_RUNTIME_CLIENT_WATCH_H_

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "api/meta/watch_event_type.h"
#include "api/object.h"
#include "base/context.h"

namespace kcr::client {

// ADDED, MODIFIED, DELETED, BOOKMARK, ERROR (api/meta/watch_event_type.h).
using api::EventType;
using api::EventTypeName;

struct WatchEvent {
  EventType type = EventType::kAdded;
  // The object (ADDED/MODIFIED/DELETED: the object's state; BOOKMARK: an
  // object of the watched kind with only metadata.resourceVersion, and the
  // annotation k8s.io/initial-events-end on the end of initial events).
  // For ERROR: the Status object if it parsed as an Object, else null.
  api::ObjectPtr object;
  // For ERROR: the server's Status as an absl::Status (api/errors/errors.h;
  // api::IsResourceExpired tells a too-old resourceVersion). OK otherwise.
  absl::Status error;
};

// The caller's end of one watch. Next() is called from one thread at a
// time; Stop() may be called from any thread, any number of times.
class WatchStream {
 public:
  virtual ~WatchStream() = default;

  // Blocks until the next event and returns true with it in `*event`, or
  // returns false once the stream is over (see status()). When `ctx` ends
  // first, the stream ends with it, as if stopped (status() is ctx.Err()):
  // one consumer giving up waiting is the end of the watch (Go's
  // `case <-ctx.Done(): w.Stop()`).
  virtual bool Next(const Context& ctx, WatchEvent* event) = 0;
  // Next without a context of its own (the watch's still applies).
  bool Next(WatchEvent* event) { return Next(Context::Background(), event); }

  // How many events Next() would return now without waiting for the
  // server: already read and decoded. A caller may use it to handle such a
  // run of events together (e.g. wake its own consumer once for all of
  // them). Called from the thread calling Next. The default, 0, is always
  // correct.
  virtual size_t Buffered() const { return 0; }

  // Ends the stream: a Next() blocked on it returns false at once, and
  // every later Next() returns false. Releases the connection.
  virtual void Stop() = 0;

  // Why the stream is over: OK when the server closed it cleanly (the
  // caller re-watches from the last resourceVersion), kCancelled after
  // Stop(), ctx.Err() when the watch's or Next's context ended,
  // kUnavailable when the connection broke, kDataLoss when it was cut in
  // the middle of an event, kInvalidArgument when an event did not decode.
  // Meaningful after Next() returned false.
  virtual absl::Status status() const = 0;
};

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_WATCH_H_
