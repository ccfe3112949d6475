// EventBroadcaster: takes the events its recorders record and writes them
// to an EventSink (the API server) on one thread of its own, as client-go's
// record.EventBroadcaster with StartRecordingToSink.
//
//   auto broadcaster = events::NewBroadcaster(client.get());
//   std::unique_ptr<events::EventRecorder> recorder =
//       broadcaster->NewRecorder({"nginx-controller", hostname});
//   recorder->Event(*nginx, api::kEventTypeNormal, "Created", "...");
//   ...
//   broadcaster->Shutdown();  // drains, within a deadline
//
// Recording never blocks: events wait in a bounded queue (1000, as
// client-go's); when it is full, an event is dropped, counted and logged.
// The sink thread passes each event through an EventCorrelator
// (event_correlator.h: counting repeats, combining similar events, the spam
// filter), then creates the Event, or patches the existing one for a repeat
// (creating it afresh if the patch meets 404). A write that fails with a
// transport error, a 5xx or a 429 is tried again, up to `max_tries` times,
// `retry_interval` apart (the first wait jittered in [0, retry_interval));
// any other API error is logged and the event given up (AlreadyExists
// quietly: it is there).
//
// Thread-safe. Recorders may outlive the broadcaster: after Shutdown they
// drop what they are given.
#ifndef KCR_RUNTIME_EVENTS_EVENT_BROADCASTER_H_
#define KCR_RUNTIME_EVENTS_EVENT_BROADCASTER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/time/time.h"
#include "base/clock.h"
#include "runtime/client/rest_client.h"
#include "runtime/events/event.h"
#include "runtime/events/event_correlator.h"
#include "runtime/events/event_recorder.h"
#include "runtime/events/event_sink.h"

namespace kcr::events {

// Defaults are client-go's.
struct BroadcasterOptions {
  // Events waiting for the sink thread; more are dropped.
  size_t queue_size = 1000;
  // Attempts per event, and the wait between two.
  int max_tries = 12;
  absl::Duration retry_interval = absl::Seconds(10);
  // How the sink thread waits before a retry. Null: on `clock`, cut short
  // when Shutdown's deadline passes. Tests record the waits instead.
  std::function<void(absl::Duration)> sleep;
  // Uniform in [0, 1), for the first retry's jitter. Null: seeded at random.
  std::function<double()> random;
  // Event timestamps, the correlator's windows and Shutdown's deadline.
  // Not owned; null means the real clock. Also the correlator's clock
  // unless `correlator.clock` is set.
  const Clock* clock = nullptr;
  CorrelatorOptions correlator;
};

// What a broadcaster has done with the events it was given.
struct BroadcasterStats {
  int64_t recorded = 0;  // accepted into the queue
  int64_t dropped = 0;   // refused: queue full, or after Shutdown
  int64_t written = 0;   // created or patched on the server
  int64_t skipped = 0;   // dropped by the spam filter
  int64_t failed = 0;    // given up: rejected, out of tries, or shut down
};

class EventBroadcaster {
 public:
  virtual ~EventBroadcaster() = default;

  // A recorder whose events carry `source` (source.component, source.host,
  // and the same as reportingComponent and reportingInstance when
  // kube-apiserver would accept them: a qualified name such as
  // "nginx-controller", and at most 128 characters).
  virtual std::unique_ptr<EventRecorder> NewRecorder(EventSource source) = 0;

  // Blocks until every event accepted so far has been handled (written,
  // skipped or given up), or `timeout` of real time passes. Returns
  // whether it was idle. For graceful stops and tests.
  virtual bool Flush(absl::Duration timeout) = 0;

  // Stops taking events, lets the sink thread drain the queue until
  // `timeout` passes on the clock, then cancels what is in flight (a
  // request, a retry's wait), drops what is left and joins the thread.
  // Idempotent; the destructor calls it with the default.
  virtual void Shutdown(absl::Duration timeout) = 0;
  void Shutdown() { Shutdown(absl::Seconds(10)); }

  virtual BroadcasterStats stats() const = 0;
};

// A broadcaster writing to `sink`; starts its sink thread.
std::unique_ptr<EventBroadcaster> NewBroadcaster(
    std::unique_ptr<EventSink> sink, BroadcasterOptions options = {});

// A broadcaster writing core/v1 Events through `client` (not owned; must
// outlive the broadcaster).
std::unique_ptr<EventBroadcaster> NewBroadcaster(
    client::RestClient* client, BroadcasterOptions options = {});

}  // namespace kcr::events

#endif  // KCR_RUNTIME_EVENTS_EVENT_BROADCASTER_H_
