#include "api/types/event.h"

#include "api/types/field.h"
#include "api/types/time.h"

namespace kcr {
namespace api {

ObjectReference ObjectReference::To(const Object& o) {
  ObjectReference ref;
  ref.api_version = std::string(o.api_version());
  ref.kind = std::string(o.kind());
  ref.namespace_ = std::string(o.namespace_());
  ref.name = std::string(o.name());
  ref.uid = std::string(o.uid());
  ref.resource_version = std::string(o.resource_version());
  return ref;
}

absl::StatusOr<EventView> EventView::Create(ObjectPtr event) {
  if (absl::Status s = Check(event, "Event"); !s.ok()) return s;
  return EventView(std::move(event));
}

ObjectReference EventView::involved_object() const {
  const rapidjson::Value* v = field::Object(&object().json(), "involvedObject");
  ObjectReference ref;
  ref.api_version = std::string(field::String(v, "apiVersion"));
  ref.kind = std::string(field::String(v, "kind"));
  ref.namespace_ = std::string(field::String(v, "namespace"));
  ref.name = std::string(field::String(v, "name"));
  ref.uid = std::string(field::String(v, "uid"));
  ref.resource_version = std::string(field::String(v, "resourceVersion"));
  ref.field_path = std::string(field::String(v, "fieldPath"));
  return ref;
}

std::string_view EventView::reason() const {
  return field::String(&object().json(), "reason");
}
std::string_view EventView::message() const {
  return field::String(&object().json(), "message");
}
std::string_view EventView::type() const {
  return field::String(&object().json(), "type");
}
int32_t EventView::count() const {
  return field::Int32(&object().json(), "count").value_or(0);
}
std::string_view EventView::first_timestamp() const {
  return field::String(&object().json(), "firstTimestamp");
}
std::string_view EventView::last_timestamp() const {
  return field::String(&object().json(), "lastTimestamp");
}
std::string_view EventView::source_component() const {
  return field::String(field::Object(&object().json(), "source"), "component");
}
std::string_view EventView::source_host() const {
  return field::String(field::Object(&object().json(), "source"), "host");
}

EventBuilder::EventBuilder(std::string_view namespace_, std::string_view name)
    : builder_("v1", "Event") {
  builder_.SetName(name).SetNamespace(namespace_);
}

EventBuilder::EventBuilder(const Object& event) : builder_(event) {}

EventBuilder& EventBuilder::SetInvolvedObject(const ObjectReference& ref) {
  auto& a = builder_.allocator();
  rapidjson::Value v(rapidjson::kObjectType);
  auto add = [&](const char* key, const std::string& value) {
    if (!value.empty()) {
      v.AddMember(
          rapidjson::StringRef(key),
          rapidjson::Value(value.c_str(),
                           static_cast<rapidjson::SizeType>(value.size()), a),
          a);
    }
  };
  add("kind", ref.kind);
  add("namespace", ref.namespace_);
  add("name", ref.name);
  add("uid", ref.uid);
  add("apiVersion", ref.api_version);
  add("resourceVersion", ref.resource_version);
  add("fieldPath", ref.field_path);
  (void)builder_.Set("/involvedObject", v);
  return *this;
}

EventBuilder& EventBuilder::SetReason(std::string_view reason) {
  (void)builder_.SetString("/reason", reason);
  return *this;
}
EventBuilder& EventBuilder::SetMessage(std::string_view message) {
  (void)builder_.SetString("/message", message);
  return *this;
}
EventBuilder& EventBuilder::SetType(std::string_view type) {
  (void)builder_.SetString("/type", type);
  return *this;
}
EventBuilder& EventBuilder::SetCount(int32_t count) {
  (void)builder_.SetInt("/count", count);
  return *this;
}
EventBuilder& EventBuilder::SetFirstTimestamp(absl::Time t) {
  (void)builder_.SetString("/firstTimestamp", FormatRfc3339(t));
  return *this;
}
EventBuilder& EventBuilder::SetLastTimestamp(absl::Time t) {
  (void)builder_.SetString("/lastTimestamp", FormatRfc3339(t));
  return *this;
}
EventBuilder& EventBuilder::SetSource(std::string_view component,
                                      std::string_view host) {
  (void)builder_.SetString("/source/component", component);
  if (!host.empty()) (void)builder_.SetString("/source/host", host);
  return *this;
}

}  // namespace api
}  // namespace kcr
