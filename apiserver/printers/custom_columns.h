// Custom resources' columns (apiextensions-apiserver's tableconvertor):
// Name, then a CRD version's additionalPrinterColumns, each a jsonPath
// evaluated with api/jsonpath and a cell typed by the column's type; or
// Age when the version declares none.
#ifndef KCR_APISERVER_PRINTERS_CUSTOM_COLUMNS_H_
#define KCR_APISERVER_PRINTERS_CUSTOM_COLUMNS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/jsonpath/jsonpath.h"
#include "apiserver/printers/printers.h"
#include "apiserver/printers/table.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace printers {

struct CustomColumn {
  api::jsonpath::JsonPath path;
  std::string type;
};

// The columns after Name: `columns` (definitions, in order) and `custom`
// (how to fill each). `age`: an Age column (AgeOf) follows them.
struct CustomColumns {
  std::vector<ColumnDefinition> columns;
  std::vector<CustomColumn> custom;
  bool age = false;
};

// From a version's additionalPrinterColumns (a JSON array, or null / empty
// for none). InvalidArgument when a jsonPath does not parse
// ("unrecognized column definition \".spec[\""). `append_age_column` adds
// an Age column after declared columns that have none.
absl::StatusOr<CustomColumns> ParsePrinterColumns(const Value& columns,
                                                  bool append_age_column);

// The cell of `column` for `object`; null when the path finds nothing.
Cell CustomCell(const CustomColumn& column, const Value& object,
                absl::Time now);

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_PRINTERS_CUSTOM_COLUMNS_H_
