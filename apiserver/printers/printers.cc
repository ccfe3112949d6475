#include "apiserver/printers/printers.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/selector/label_selector.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/internal/duration.h"

namespace kcr {
namespace apiserver {
namespace printers {

namespace field = ::kcr::api::field;

ColumnDefinition Column(std::string name, std::string type,
                        std::string description, int32_t priority,
                        std::string format) {
  ColumnDefinition c;
  c.name = std::move(name);
  c.type = std::move(type);
  c.format = std::move(format);
  c.description = std::move(description);
  c.priority = priority;
  return c;
}

ColumnDefinition NameColumn(int32_t priority) {
  return Column("Name", "string", kNameDescription, priority, "name");
}
ColumnDefinition AgeColumn() {
  return Column("Age", "string", kCreationTimestampDescription);
}

std::string_view Str(const Value& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

std::optional<absl::Time> TimeMember(const Value* object,
                                     std::string_view key) {
  std::string_view s = field::String(object, key);
  if (s.empty()) return std::nullopt;
  absl::StatusOr<absl::Time> t = api::ParseTime(s);
  if (!t.ok()) return std::nullopt;
  return *t;
}

std::string TimestampSince(std::optional<absl::Time> t, absl::Time now) {
  if (!t.has_value()) return "<unknown>";
  return HumanDuration(now - *t);
}

const Value* Metadata(const Value& object) {
  return field::Object(&object, "metadata");
}

std::string NameOf(const Value& object) {
  return std::string(field::String(Metadata(object), "name"));
}

std::string AgeOf(const Value& object, absl::Time now) {
  return TimestampSince(TimeMember(Metadata(object), "creationTimestamp"), now);
}

size_t MemberCount(const Value* object, std::string_view key) {
  const Value* m = field::Object(object, key);
  return m == nullptr ? 0 : m->MemberCount();
}

size_t ArraySize(const Value* object, std::string_view key) {
  const Value* a = field::Array(object, key);
  return a == nullptr ? 0 : a->Size();
}

std::string FormatLabels(const Value* map) {
  if (map == nullptr || !map->IsObject() || map->MemberCount() == 0) {
    return "<none>";
  }
  std::map<std::string, std::string> sorted;
  for (const auto& m : map->GetObject()) {
    sorted[std::string(Str(m.name))] =
        m.value.IsString() ? std::string(Str(m.value)) : std::string();
  }
  std::vector<std::string> parts;
  for (const auto& [k, v] : sorted) parts.push_back(absl::StrCat(k, "=", v));
  return absl::StrJoin(parts, ",");
}

std::string FormatLabelSelector(const Value* selector) {
  Value null_value;
  absl::StatusOr<api::LabelSelector> s = api::LabelSelector::FromLabelSelector(
      selector == nullptr ? null_value : *selector);
  if (!s.ok()) return "<error>";
  std::string text = s->ToString();
  return text.empty() ? "<none>" : text;
}

std::pair<std::string, std::string> ContainerCells(const Value* containers) {
  std::vector<std::string> names;
  std::vector<std::string> images;
  if (containers != nullptr && containers->IsArray()) {
    for (const auto& c : containers->GetArray()) {
      names.emplace_back(field::String(&c, "name"));
      images.emplace_back(field::String(&c, "image"));
    }
  }
  return {absl::StrJoin(names, ","), absl::StrJoin(images, ",")};
}

bool ConditionTrue(const Value* status, std::string_view type) {
  const Value* conditions = field::Array(status, "conditions");
  if (conditions == nullptr) return false;
  for (const auto& c : conditions->GetArray()) {
    if (field::String(&c, "type") == type &&
        field::String(&c, "status") == "True") {
      return true;
    }
  }
  return false;
}

int64_t Int(const Value* object, std::string_view key) {
  return field::Int64(object, key).value_or(0);
}

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr
