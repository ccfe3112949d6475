#include "apiserver/printers/rbac_printers.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/types/field.h"

namespace kcr {
namespace apiserver {
namespace printers {

namespace field = ::kcr::api::field;

std::vector<ColumnDefinition> RoleBindingColumns(bool cluster) {
  const std::string what = cluster ? "clusterRoleBinding" : "roleBinding";
  return {NameColumn(),
          Column("Role", "string",
                 cluster ? "RoleRef can only reference a ClusterRole in the "
                           "global namespace. If the RoleRef cannot be "
                           "resolved, the Authorizer must return an error."
                         : "RoleRef can reference a Role in the current "
                           "namespace or a ClusterRole in the global "
                           "namespace. If the RoleRef cannot be resolved, the "
                           "Authorizer must return an error."),
          AgeColumn(),
          Column("Users", "string", absl::StrCat("Users in the ", what), 1),
          Column("Groups", "string", absl::StrCat("Groups in the ", what), 1),
          Column("ServiceAccounts", "string",
                 absl::StrCat("ServiceAccounts in the ", what), 1)};
}

Cells RoleBindingCells(const Value& object, absl::Time now) {
  const Value* role_ref = field::Object(&object, "roleRef");
  // rbac.SubjectsStrings: service accounts as namespace/name; subjects of
  // other kinds are not shown.
  std::vector<std::string> users, groups, service_accounts;
  if (const Value* subjects = field::Array(&object, "subjects")) {
    for (const auto& s : subjects->GetArray()) {
      const std::string_view kind = field::String(&s, "kind");
      const std::string name(field::String(&s, "name"));
      if (kind == "ServiceAccount") {
        service_accounts.push_back(std::string(field::String(&s, "namespace")) +
                                   "/" + name);
      } else if (kind == "User") {
        users.push_back(name);
      } else if (kind == "Group") {
        groups.push_back(name);
      }
    }
  }
  return {NameOf(object),
          std::string(field::String(role_ref, "kind")) + "/" +
              std::string(field::String(role_ref, "name")),
          AgeOf(object, now),
          absl::StrJoin(users, ", "),
          absl::StrJoin(groups, ", "),
          absl::StrJoin(service_accounts, ", ")};
}

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr
