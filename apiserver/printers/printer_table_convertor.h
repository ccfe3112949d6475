// PrinterTableConvertor: the TableConvertor (table_convertor.h) the local
// API server uses by default, rendering with kube-apiserver's printers
// (table.h): the built-in columns for built-in resources, and for custom
// resources the CRD version's additionalPrinterColumns.
//
// Printers are built once per resource (per CRD version and columns) and
// cached. Thread-safe.
#ifndef KCR_APISERVER_PRINTERS_PRINTER_TABLE_CONVERTOR_H_
#define KCR_APISERVER_PRINTERS_PRINTER_TABLE_CONVERTOR_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "apiserver/printers/table.h"
#include "apiserver/printers/table_convertor.h"
#include "base/clock.h"
#include "base/mutex.h"

namespace kcr {
namespace apiserver {

class PrinterTableConvertor : public TableConvertor {
 public:
  // `clock` (ages) must outlive the convertor.
  explicit PrinterTableConvertor(const Clock* clock = Clock::Real())
      : clock_(clock) {}

  absl::StatusOr<std::string> ConvertToTable(
      const ResourceInfo& resource, const std::vector<api::ObjectPtr>& objects,
      const TableRequest& request) const override;

 private:
  absl::StatusOr<TablePrinter> PrinterFor(const ResourceInfo& resource) const;

  const Clock* const clock_;
  mutable Mutex mu_;
  mutable std::unordered_map<std::string, TablePrinter> printers_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_PRINTERS_PRINTER_TABLE_CONVERTOR_H_
