// Printers of the core group ("" group, v1): the columns kube-apiserver's
// pkg/printers/internalversion gives pods, namespaces, configmaps,
// secrets, services, serviceaccounts, events and nodes, and the cells of
// one object's row. Columns with priority > 0 are -o wide's.
#ifndef KCR_APISERVER_PRINTERS_CORE_PRINTERS_H_
#define KCR_APISERVER_PRINTERS_CORE_PRINTERS_H_

#include <vector>

#include "absl/time/time.h"
#include "apiserver/printers/printers.h"
#include "apiserver/printers/table.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace printers {

// Pods: Name Ready Status Restarts Age | IP Node Nominated-Node
// Readiness-Gates. Completed or failed pods add a row condition.
std::vector<ColumnDefinition> PodColumns();
Cells PodCells(const Value& pod, absl::Time now,
               std::vector<RowCondition>* row_conditions);

std::vector<ColumnDefinition> NamespaceColumns();
Cells NamespaceCells(const Value& object, absl::Time now);

std::vector<ColumnDefinition> ConfigMapColumns();
Cells ConfigMapCells(const Value& object, absl::Time now);

std::vector<ColumnDefinition> SecretColumns();
Cells SecretCells(const Value& object, absl::Time now);

std::vector<ColumnDefinition> ServiceColumns();
Cells ServiceCells(const Value& svc, absl::Time now);

std::vector<ColumnDefinition> ServiceAccountColumns();
Cells ServiceAccountCells(const Value& object, absl::Time now);

// Events, in kube-apiserver's column order.
std::vector<ColumnDefinition> EventColumns();
Cells EventCells(const Value& e, absl::Time now);

std::vector<ColumnDefinition> NodeColumns();
Cells NodeCells(const Value& node, absl::Time now);

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_PRINTERS_CORE_PRINTERS_H_
