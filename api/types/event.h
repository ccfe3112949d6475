// Event (v1, core): what an event recorder writes and a user reads with
// `kubectl describe` — involvedObject, reason, message, type, count,
// first/lastTimestamp and source.
#ifndef KCR_API_TYPES_EVENT_H_
#define KCR_API_TYPES_EVENT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/types/view.h"

namespace kcr {
namespace api {

inline constexpr std::string_view kEventTypeNormal = "Normal";
inline constexpr std::string_view kEventTypeWarning = "Warning";

// v1.ObjectReference, as an Event's involvedObject.
struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string field_path;

  // A reference to `object` (as reference.GetReference does).
  static ObjectReference To(const Object& object);
};

class EventView : public TypedView {
 public:
  // Where it lives on the server (GroupVersionResource and scope).
  static constexpr char kGroup[] = "";
  static constexpr char kVersion[] = "v1";
  static constexpr char kPlural[] = "events";
  static constexpr bool kNamespaced = true;

  static absl::StatusOr<EventView> Create(ObjectPtr event);

  // Fields absent or mistyped read as empty / zero.
  ObjectReference involved_object() const;
  std::string_view reason() const;
  std::string_view message() const;
  std::string_view type() const;
  int32_t count() const;
  std::string_view first_timestamp() const;
  std::string_view last_timestamp() const;
  std::string_view source_component() const;
  std::string_view source_host() const;

 private:
  explicit EventView(ObjectPtr o) : TypedView(std::move(o)) {}
};

class EventBuilder {
 public:
  // An Event named `name` in `namespace_` (recorders use
  // "<involved name>.<unique suffix>", in the involved object's namespace).
  EventBuilder(std::string_view namespace_, std::string_view name);
  // Edits an existing Event (e.g. to bump count on a repeat).
  explicit EventBuilder(const Object& event);

  EventBuilder& SetInvolvedObject(const ObjectReference& ref);
  EventBuilder& SetReason(std::string_view reason);
  EventBuilder& SetMessage(std::string_view message);
  EventBuilder& SetType(std::string_view type);
  EventBuilder& SetCount(int32_t count);
  EventBuilder& SetFirstTimestamp(absl::Time t);
  EventBuilder& SetLastTimestamp(absl::Time t);
  EventBuilder& SetSource(std::string_view component, std::string_view host);

  ObjectBuilder& object() { return builder_; }
  absl::StatusOr<ObjectPtr> Build() const { return builder_.Build(); }

 private:
  ObjectBuilder builder_;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TYPES_EVENT_H_
