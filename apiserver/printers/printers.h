// What every printer of a Table row shares (kube-apiserver's
// pkg/printers): the cell and row-condition model, column definitions and
// the formatting helpers the per-group printers (core_printers.h,
// apps_printers.h, coordination_printers.h, custom_columns.h) use. Internal
// to the table library (table.h).
#ifndef KCR_APISERVER_PRINTERS_PRINTERS_H_
#define KCR_APISERVER_PRINTERS_PRINTERS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "apiserver/printers/table.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace printers {

using Value = rapidjson::Value;

// A cell: null, string, integer, number or boolean.
using Cell = std::variant<std::monostate, std::string, int64_t, double, bool>;
using Cells = std::vector<Cell>;

struct RowCondition {
  std::string type, status, reason, message;
};

// metav1.ObjectMeta's field documentation.
inline constexpr char kNameDescription[] =
    "Name must be unique within a namespace. Is required when creating "
    "resources, although some resources may allow a client to request the "
    "generation of an appropriate name automatically. Name is primarily "
    "intended for creation idempotence and configuration definition. Cannot "
    "be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/"
    "names#names";
inline constexpr char kCreationTimestampDescription[] =
    "CreationTimestamp is a timestamp representing the server time when this "
    "object was created. It is not guaranteed to be set in happens-before "
    "order across separate operations. Clients may not set this value. It is "
    "represented in RFC3339 form and is in UTC.\n\nPopulated by the system. "
    "Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#metadata";

ColumnDefinition Column(std::string name, std::string type,
                        std::string description, int32_t priority = 0,
                        std::string format = "");
ColumnDefinition NameColumn(int32_t priority = 0);
ColumnDefinition AgeColumn();

std::string_view Str(const Value& v);

// metav1.Time of a string member; nullopt when absent, empty or malformed
// (a Go client would have failed to decode the latter; printing "<unknown>"
// is the kinder reading).
std::optional<absl::Time> TimeMember(const Value* object, std::string_view key);

// HumanDuration of now - t, "<unknown>" without t.
std::string TimestampSince(std::optional<absl::Time> t, absl::Time now);

const Value* Metadata(const Value& object);
std::string NameOf(const Value& object);
std::string AgeOf(const Value& object, absl::Time now);
size_t MemberCount(const Value* object, std::string_view key);
size_t ArraySize(const Value* object, std::string_view key);
// The integer member `key`, 0 when absent.
int64_t Int(const Value* object, std::string_view key);

// labels.FormatLabels: "k=v" sorted by key, "<none>" when empty.
std::string FormatLabels(const Value* map);

// metav1.FormatLabelSelector.
std::string FormatLabelSelector(const Value* selector);

// layoutContainerCells: names and images joined with ",".
std::pair<std::string, std::string> ContainerCells(const Value* containers);

// Whether status.conditions holds `type` with status "True".
bool ConditionTrue(const Value* status, std::string_view type);

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_PRINTERS_PRINTERS_H_
