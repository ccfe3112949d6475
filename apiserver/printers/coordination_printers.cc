#include "apiserver/printers/coordination_printers.h"

#include <string>
#include <vector>

#include "api/types/field.h"

namespace kcr {
namespace apiserver {
namespace printers {

namespace field = ::kcr::api::field;

std::vector<ColumnDefinition> LeaseColumns() {
  return {NameColumn(),
          Column("Holder", "string",
                 "holderIdentity contains the identity of the holder of a "
                 "current lease."),
          AgeColumn()};
}

Cells LeaseCells(const Value& object, absl::Time now) {
  return {NameOf(object),
          std::string(
              field::String(field::Object(&object, "spec"), "holderIdentity")),
          AgeOf(object, now)};
}

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr
