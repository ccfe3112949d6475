#include "runtime/events/event_sink.h"

#include <string>

namespace kcr::events {
namespace {

client::Resource EventsIn(std::string_view ns) {
  return client::Resource::Namespaced({"", "v1", "events"}, std::string(ns));
}

class RestEventSink : public EventSink {
 public:
  explicit RestEventSink(client::RestClient* client) : client_(client) {}

  absl::StatusOr<api::ObjectPtr> Create(const Context& ctx,
                                        const api::Object& event) override {
    return client_->Create(ctx, EventsIn(event.namespace_()), event);
  }

  absl::StatusOr<api::ObjectPtr> Patch(const Context& ctx,
                                       const api::Object& event,
                                       std::string_view patch) override {
    return client_->Patch(ctx, EventsIn(event.namespace_()), event.name(),
                          api::PatchType::kMerge, patch);
  }

 private:
  client::RestClient* const client_;
};

}  // namespace

std::unique_ptr<EventSink> NewRestEventSink(client::RestClient* client) {
  return std::make_unique<RestEventSink>(client);
}

}  // namespace kcr::events
