#include "apiserver/kube_controllers/event_recorder.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "api/types/event.h"
#include "base/str_cat.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {

EventRecorder::EventRecorder(Registry* registry, std::string component)
    : registry_(registry), component_(std::move(component)) {}

void EventRecorder::Record(const api::Object& object,
                           std::string_view api_version, std::string_view kind,
                           bool warning, std::string_view reason,
                           std::string_view message, absl::Time now) {
  ResourceInfoPtr events = registry_->resources()->Lookup("", "v1", "events");
  if (events == nullptr) return;
  int64_t last = last_nanos_.load(std::memory_order_relaxed);
  int64_t nanos;
  do {
    nanos = std::max(last + 1, absl::ToUnixNanos(now));
  } while (!last_nanos_.compare_exchange_weak(last, nanos,
                                              std::memory_order_relaxed));
  char suffix[17];
  std::snprintf(suffix, sizeof(suffix), "%llx",
                static_cast<unsigned long long>(nanos));
  api::ObjectReference involved = api::ObjectReference::To(object);
  involved.api_version = std::string(api_version);
  involved.kind = std::string(kind);
  api::EventBuilder e(object.namespace_(), Cat(object.name(), ".", suffix));
  e.SetInvolvedObject(involved)
      .SetReason(reason)
      .SetMessage(message)
      .SetType(warning ? api::kEventTypeWarning : api::kEventTypeNormal)
      .SetSource(component_, "")
      .SetFirstTimestamp(now)
      .SetLastTimestamp(now)
      .SetCount(1);
  (void)e.object().SetString("/reportingComponent", component_);
  (void)e.object().SetString("/reportingInstance", "");
  absl::Status s =
      registry_->Create(*events, object.namespace_(), std::move(e.object()))
          .status();
  if (!s.ok()) {
    VLOG(2) << component_ << ": event not recorded object=" << object.Key()
            << " reason=" << reason << ": " << s;
  }
}

}  // namespace apiserver
}  // namespace kcr
