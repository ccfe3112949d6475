// Event: the core/v1 Event an event recorder writes, as plain fields, and
// EventSource, who reports it. The recorder fills one per call, the
// correlator rewrites it (count, name, combined message) and the sink
// turns it into the object it sends (api/types/event.h is the read side).
#ifndef KCR_RUNTIME_EVENTS_EVENT_H_
#define KCR_RUNTIME_EVENTS_EVENT_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "api/types/event.h"

namespace kcr::events {

// v1.EventSource: the component that reports (e.g. "nginx-controller") and
// the host it runs on (may be empty).
struct EventSource {
  std::string component;
  std::string host;
};

struct Event {
  std::string namespace_;
  // "<involved name>.<unique hex suffix>".
  std::string name;
  // Set once the server has the Event (a repeat patches it).
  std::string resource_version;
  std::map<std::string, std::string> annotations;
  api::ObjectReference involved_object;
  std::string reason;
  std::string message;
  std::string type;  // "Normal" or "Warning"
  EventSource source;
  absl::Time first_timestamp;
  absl::Time last_timestamp;
  int32_t count = 1;
  // reportingComponent and reportingInstance (the source's component and
  // host, as the events.k8s.io API names them).
  std::string reporting_component;
  std::string reporting_instance;

  // The v1 Event object (apiVersion v1, kind Event).
  absl::StatusOr<api::ObjectPtr> ToObject() const;
};

// "<involved_name>.<hex nanoseconds>", as client-go names Events, from
// `now`; unique within the process even when the clock has not moved
// (the suffix is then one past the last one given out). Thread-safe.
std::string NewEventName(std::string_view involved_name, absl::Time now);

}  // namespace kcr::events

#endif  // KCR_RUNTIME_EVENTS_EVENT_H_
