#include "apiserver/printers/custom_columns.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/internal/duration.h"
#include "base/string_view.h"

namespace kcr {
namespace apiserver {
namespace printers {

namespace field = ::kcr::api::field;

absl::StatusOr<CustomColumns> ParsePrinterColumns(const Value& columns,
                                                  bool append_age_column) {
  CustomColumns out;
  const Value* declared = columns.IsArray() ? &columns : nullptr;
  if (declared == nullptr || declared->Size() == 0) {
    out.columns.push_back(Column("Age", "date", kCreationTimestampDescription));
    absl::StatusOr<api::jsonpath::JsonPath> path =
        api::jsonpath::JsonPath::ParseExpression(".metadata.creationTimestamp");
    out.custom.push_back({*path, "date"});
    return out;
  }
  bool has_age = false;
  for (const auto& col : declared->GetArray()) {
    const std::string_view json_path = field::String(&col, "jsonPath");
    absl::StatusOr<api::jsonpath::JsonPath> path =
        api::jsonpath::JsonPath::ParseExpression(json_path);
    if (!path.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unrecognized column definition \"", ToAbsl(json_path), "\""));
    }
    ColumnDefinition def;
    def.name = std::string(field::String(&col, "name"));
    def.type = std::string(field::String(&col, "type"));
    def.format = std::string(field::String(&col, "format"));
    def.description = std::string(field::String(&col, "description"));
    if (def.description.empty()) {
      def.description = absl::StrCat(
          "Custom resource definition column (in JSONPath format): ",
          ToAbsl(json_path));
    }
    def.priority = field::Int32(&col, "priority").value_or(0);
    if (def.name == "Age") has_age = true;
    out.custom.push_back({*std::move(path), def.type});
    out.columns.push_back(std::move(def));
  }
  if (append_age_column && !has_age) {
    out.columns.push_back(AgeColumn());
    out.age = true;
  }
  return out;
}

Cell CustomCell(const CustomColumn& column, const Value& object,
                absl::Time now) {
  api::jsonpath::EvalOptions options;
  options.allow_missing_keys = true;
  absl::StatusOr<api::jsonpath::Results> results =
      column.path.FindResults(object, options);
  if (!results.ok() || results->empty() || (*results)[0].empty()) {
    return std::monostate();
  }
  // Only simple paths are supported: the first value is the cell.
  const Value& v = *(*results)[0][0];
  const std::string& type = column.type;
  if (type == "string") {
    // JSONPath.PrintResults of the value; a null prints as "<no value>".
    if (v.IsNull()) return std::string("<no value>");
    return api::jsonpath::JsonPath::PrintValue(v);
  }
  if (v.IsNull()) return std::monostate();
  if (type == "integer") {
    if (v.IsInt64()) return v.GetInt64();
    if (v.IsNumber()) {
      const double d = v.GetDouble();
      if (std::isfinite(d) && std::fabs(d) < 9.2e18) {
        return static_cast<int64_t>(d);
      }
      // Go's int64() of an out-of-range float64 on amd64.
      return std::numeric_limits<int64_t>::min();
    }
    return std::monostate();
  }
  if (type == "number") {
    if (v.IsNumber()) return v.GetDouble();
    return std::monostate();
  }
  if (type == "boolean") {
    if (v.IsBool()) return v.GetBool();
    return std::monostate();
  }
  if (type == "date") {
    if (!v.IsString()) return std::monostate();
    if (v.GetStringLength() == 0) return std::string("<unknown>");
    absl::StatusOr<absl::Time> t = api::ParseTime(Str(v));
    if (!t.ok()) return std::string("<invalid>");
    return HumanDuration(now - *t);
  }
  return std::monostate();
}

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr
