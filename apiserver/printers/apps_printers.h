// Printers of the apps group, as kube-apiserver prints them: deployments
// (Name Ready Up-to-date Available Age | Containers Images Selector) and
// replicasets (Name Desired Current Ready Age | Containers Images Selector).
#ifndef KCR_APISERVER_PRINTERS_APPS_PRINTERS_H_
#define KCR_APISERVER_PRINTERS_APPS_PRINTERS_H_

#include <vector>

#include "absl/time/time.h"
#include "apiserver/printers/printers.h"
#include "apiserver/printers/table.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace printers {

std::vector<ColumnDefinition> DeploymentColumns();
Cells DeploymentCells(const Value& d, absl::Time now);
std::vector<ColumnDefinition> ReplicaSetColumns();
Cells ReplicaSetCells(const Value& rs, absl::Time now);

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_PRINTERS_APPS_PRINTERS_H_
