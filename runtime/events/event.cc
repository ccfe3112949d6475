#include "runtime/events/event.h"

#include <atomic>

#include "absl/strings/str_format.h"
#include "api/object_builder.h"

namespace kcr::events {

std::string NewEventName(std::string_view involved_name, absl::Time now) {
  static std::atomic<int64_t> last{0};
  const int64_t nanos = absl::ToUnixNanos(now);
  int64_t prev = last.load(std::memory_order_relaxed);
  int64_t next;
  do {
    next = nanos > prev ? nanos : prev + 1;
  } while (!last.compare_exchange_weak(prev, next, std::memory_order_relaxed));
  return absl::StrFormat("%s.%x", involved_name, next);
}

absl::StatusOr<api::ObjectPtr> Event::ToObject() const {
  api::EventBuilder b(namespace_, name);
  if (!resource_version.empty())
    b.object().SetResourceVersion(resource_version);
  if (!annotations.empty()) b.object().SetAnnotations(annotations);
  b.SetInvolvedObject(involved_object)
      .SetReason(reason)
      .SetMessage(message)
      .SetType(type)
      .SetSource(source.component, source.host)
      .SetFirstTimestamp(first_timestamp)
      .SetLastTimestamp(last_timestamp)
      .SetCount(count);
  if (!reporting_component.empty()) {
    (void)b.object().SetString("/reportingComponent", reporting_component);
  }
  if (!reporting_instance.empty()) {
    (void)b.object().SetString("/reportingInstance", reporting_instance);
  }
  return b.Build();
}

}  // namespace kcr::events
