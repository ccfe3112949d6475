// Printers of the rbac.authorization.k8s.io group: RoleBindings and
// ClusterRoleBindings (Name Role Age, and Users Groups ServiceAccounts at
// priority 1 for -o wide). Roles and ClusterRoles print Name and Created At,
// table.cc's default columns.
#ifndef KCR_APISERVER_PRINTERS_RBAC_PRINTERS_H_
#define KCR_APISERVER_PRINTERS_RBAC_PRINTERS_H_

#include <vector>

#include "absl/time/time.h"
#include "apiserver/printers/printers.h"
#include "apiserver/printers/table.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace printers {

// `cluster`: a ClusterRoleBinding (the descriptions say so).
std::vector<ColumnDefinition> RoleBindingColumns(bool cluster);
Cells RoleBindingCells(const Value& object, absl::Time now);

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_PRINTERS_RBAC_PRINTERS_H_
