// Printers of the coordination.k8s.io group: leases (Name Holder Age).
#ifndef KCR_APISERVER_PRINTERS_COORDINATION_PRINTERS_H_
#define KCR_APISERVER_PRINTERS_COORDINATION_PRINTERS_H_

#include <vector>

#include "absl/time/time.h"
#include "apiserver/printers/printers.h"
#include "apiserver/printers/table.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace printers {

std::vector<ColumnDefinition> LeaseColumns();
Cells LeaseCells(const Value& object, absl::Time now);

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_PRINTERS_COORDINATION_PRINTERS_H_
