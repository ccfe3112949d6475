// kube-apiserver's printers (pkg/printers/internalversion) for the
// workload, autoscaling, policy, networking, storage, scheduling,
// admission, apiregistration and certificates kinds: the columns
// `kubectl get` shows for each and how a row fills them. Internal to the
// table library (table.h).
#ifndef KCR_APISERVER_PRINTERS_WORKLOAD_PRINTERS_H_
#define KCR_APISERVER_PRINTERS_WORKLOAD_PRINTERS_H_

#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "apiserver/printers/printers.h"

namespace kcr {
namespace apiserver {
namespace printers {

// The printer of one kind.
struct KindPrinter {
  const char* group;
  const char* resource;
  const char* api_version;  // of rows' objects that lack it
  const char* kind;
  std::vector<ColumnDefinition> (*columns)();
  Cells (*cells)(const Value& object, absl::Time now);
};

// The printer of group/resource among the kinds above, or null.
const KindPrinter* FindKindPrinter(std::string_view group,
                                   std::string_view resource);

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_PRINTERS_WORKLOAD_PRINTERS_H_
