#include "apiserver/printers/printer_table_convertor.h"

#include "api/json/json_util.h"
#include "base/str_cat.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

absl::StatusOr<TablePrinter> PrinterTableConvertor::PrinterFor(
    const ResourceInfo& resource) const {
  const std::string key =
      resource.custom
          ? Cat("cr|", resource.api_version(), "|", resource.kind(), "|",
                resource.printer_columns_json)
          : Cat("builtin|", resource.group(), "|", resource.resource());
  {
    MutexLock l(&mu_);
    auto it = printers_.find(key);
    if (it != printers_.end()) return it->second;
  }
  absl::StatusOr<TablePrinter> printer =
      TablePrinter::ForResource(resource.group(), resource.resource(), clock_);
  if (resource.custom) {
    rapidjson::Document columns;
    if (!resource.printer_columns_json.empty()) {
      absl::Status s = json::ParseJson(resource.printer_columns_json, &columns);
      if (!s.ok()) return s;
    }
    printer = TablePrinter::ForPrinterColumns(columns, resource.api_version(),
                                              resource.kind(), clock_);
    if (!printer.ok()) return printer.status();
  }
  MutexLock l(&mu_);
  printers_.emplace(key, *printer);
  return printer;
}

absl::StatusOr<std::string> PrinterTableConvertor::ConvertToTable(
    const ResourceInfo& resource, const std::vector<api::ObjectPtr>& objects,
    const TableRequest& request) const {
  absl::StatusOr<TablePrinter> printer = PrinterFor(resource);
  if (!printer.ok()) return printer.status();
  TableOptions options;
  options.no_headers = request.no_headers;
  switch (request.include_object) {
    case TableRequest::IncludeObject::kNone:
      options.include_object = IncludeObject::kNone;
      break;
    case TableRequest::IncludeObject::kMetadata:
      options.include_object = IncludeObject::kMetadata;
      break;
    case TableRequest::IncludeObject::kObject:
      options.include_object = IncludeObject::kObject;
      break;
  }
  ListMeta meta;
  meta.resource_version = request.resource_version;
  meta.continue_token = request.continue_token;
  meta.remaining_item_count = request.remaining_item_count;
  // A single object (GET, a watch event): the Table carries its
  // resourceVersion, as kube-apiserver's convertors do.
  if (meta.resource_version.empty() && objects.size() == 1 &&
      objects[0] != nullptr) {
    meta.resource_version = std::string(objects[0]->resource_version());
  }
  std::vector<const rapidjson::Value*> items;
  items.reserve(objects.size());
  for (const api::ObjectPtr& o : objects) {
    if (o != nullptr) items.push_back(&o->json());
  }
  return printer->RenderList(items, meta, options);
}

}  // namespace apiserver
}  // namespace kcr
