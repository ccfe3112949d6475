// EventRecorder: records core/v1 Events about objects, as client-go's
// record.EventRecorder. Recording never blocks and never fails the caller:
// the event is queued for the broadcaster's sink thread
// (event_broadcaster.h), or dropped (and counted) when the queue is full.
//
//   recorder->Event(*nginx, api::kEventTypeNormal, "Scaled",
//                   "scaled to 3 replicas");
//   recorder->Eventf(*nginx, api::kEventTypeWarning, "SyncFailed",
//                    "deployment %s: %s", name, status.ToString());
//
// Thread-safe.
#ifndef KCR_RUNTIME_EVENTS_EVENT_RECORDER_H_
#define KCR_RUNTIME_EVENTS_EVENT_RECORDER_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/strings/str_format.h"
#include "api/object.h"
#include "api/types/event.h"

namespace kcr::events {

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;

  // Records an event about `object` (referenced by kind, namespace, name,
  // uid, apiVersion and resourceVersion). `type` is "Normal" or "Warning"
  // (anything else is logged and dropped, as client-go does); `reason` is
  // a short UpperCamelCase word; `message` is for humans.
  void Event(const api::Object& object, std::string_view type,
             std::string_view reason, std::string_view message) {
    Record(api::ObjectReference::To(object), {}, type, reason, message);
  }

  // Event with an absl::StrFormat message.
  template <typename... Args>
  void Eventf(const api::Object& object, std::string_view type,
              std::string_view reason, const absl::FormatSpec<Args...>& format,
              const Args&... args) {
    Record(api::ObjectReference::To(object), {}, type, reason,
           absl::StrFormat(format, args...));
  }

  // Eventf with annotations on the Event object.
  template <typename... Args>
  void AnnotatedEventf(const api::Object& object,
                       const std::map<std::string, std::string>& annotations,
                       std::string_view type, std::string_view reason,
                       const absl::FormatSpec<Args...>& format,
                       const Args&... args) {
    Record(api::ObjectReference::To(object), annotations, type, reason,
           absl::StrFormat(format, args...));
  }

  // The primitive: an event about `ref` (which may name a fieldPath, e.g.
  // "spec.containers{nginx}"). A reference without kind or name is logged
  // and dropped.
  virtual void Record(const api::ObjectReference& ref,
                      const std::map<std::string, std::string>& annotations,
                      std::string_view type, std::string_view reason,
                      std::string_view message) = 0;
};

}  // namespace kcr::events

#endif  // KCR_RUNTIME_EVENTS_EVENT_RECORDER_H_
