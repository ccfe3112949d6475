// EventSink: where the broadcaster writes Events, as client-go's
// record.EventSink; NewRestEventSink writes them to the API server.
#ifndef KCR_RUNTIME_EVENTS_EVENT_SINK_H_
#define KCR_RUNTIME_EVENTS_EVENT_SINK_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "base/context.h"
#include "runtime/client/rest_client.h"

namespace kcr::events {

// Called from the broadcaster's sink thread only; errors are API errors
// (api/errors/errors.h) or transport errors as the REST client gives them.
class EventSink {
 public:
  virtual ~EventSink() = default;

  // Creates `event` (a v1 Event) in its namespace.
  virtual absl::StatusOr<api::ObjectPtr> Create(const Context& ctx,
                                                const api::Object& event) = 0;
  // Applies the JSON merge patch `patch` to the Event named as `event`.
  virtual absl::StatusOr<api::ObjectPtr> Patch(const Context& ctx,
                                               const api::Object& event,
                                               std::string_view patch) = 0;
};

// Writes core/v1 Events through `client` (not owned; must outlive the
// sink).
std::unique_ptr<EventSink> NewRestEventSink(client::RestClient* client);

}  // namespace kcr::events

#endif  // KCR_RUNTIME_EVENTS_EVENT_SINK_H_
