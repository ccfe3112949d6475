// Fuzzes Table rendering: any JSON object, rendered by every built-in
// printer and by a custom-resource printer whose columns exercise every
// column type, as a list, a single object and a watch event. Nothing may
// crash, and every rendering must be valid JSON.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "api/json/json_util.h"
#include "apiserver/printers/table.h"
#include "rapidjson/document.h"
#include "test/fuzz/server_stack.h"

namespace {

void CheckJson(const std::string& text) {
  rapidjson::Document d;
  if (!kcr::json::ParseJson(text, &d).ok()) std::abort();
}

}  // namespace

static int FuzzOne(const uint8_t* data, size_t size) {
  using kcr::apiserver::TablePrinter;
  std::string input(reinterpret_cast<const char*>(data), size);
  rapidjson::Document object;
  if (!kcr::json::ParseJson(input, &object).ok() || !object.IsObject()) {
    return 0;
  }
  static const char* const kResources[][2] = {
      {"", "pods"},
      {"apps", "deployments"},
      {"", "namespaces"},
      {"", "configmaps"},
      {"", "secrets"},
      {"", "services"},
      {"", "serviceaccounts"},
      {"", "events"},
      {"coordination.k8s.io", "leases"},
      {"apiextensions.k8s.io", "customresourcedefinitions"},
      {"example.com", "things"}};
  const rapidjson::Value* items[] = {&object};
  for (const auto& r : kResources) {
    TablePrinter p = TablePrinter::ForResource(r[0], r[1]);
    CheckJson(p.RenderList(items, {}));
    CheckJson(p.RenderObject(object));
    CheckJson(p.RenderWatchEvent("ADDED", object));
  }
  rapidjson::Document columns;
  columns.Parse(R"([
      {"name":"I","type":"integer","jsonPath":".spec.i"},
      {"name":"N","type":"number","jsonPath":"..n"},
      {"name":"B","type":"boolean","jsonPath":".spec.b"},
      {"name":"S","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"},
      {"name":"O","type":"string","jsonPath":".metadata"},
      {"name":"D","type":"date","jsonPath":".metadata.creationTimestamp"}])");
  auto cr = TablePrinter::ForPrinterColumns(columns, "example.com/v1", "Thing");
  if (!cr.ok()) std::abort();
  kcr::apiserver::TableOptions full;
  full.include_object = kcr::apiserver::IncludeObject::kObject;
  CheckJson(cr->RenderList(items, {}, full));
  CheckJson(cr->RenderCells(object));
  return 0;
}

// On a thread with the local API server's connection stack, so that
// recursion the server could not afford fails here too.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kcr::fuzz::RunOnServerStack([data, size] { FuzzOne(data, size); });
  return 0;
}
