// Fuzzes JSONPath parsing and evaluation. The input is a template, a
// newline, then a JSON document. Nothing may crash, hang or recurse over the
// data; every successful evaluation must also print.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/json/json_util.h"
#include "api/jsonpath/jsonpath.h"
#include "rapidjson/document.h"
#include "test/fuzz/server_stack.h"

static int FuzzOne(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  const std::string tmpl = input.substr(0, newline);
  const std::string json =
      newline == std::string::npos ? "{}" : input.substr(newline + 1);
  auto path = kcr::api::jsonpath::JsonPath::Parse(tmpl);
  if (!path.ok()) return 0;
  rapidjson::Document doc;
  if (!kcr::json::ParseJson(json, &doc).ok()) return 0;
  for (bool allow : {false, true}) {
    kcr::api::jsonpath::EvalOptions options;
    options.allow_missing_keys = allow;
    (void)path->Execute(doc, options);
  }
  return 0;
}

// On a thread with the local API server's connection stack, so that
// recursion the server could not afford fails here too.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kcr::fuzz::RunOnServerStack([data, size] { FuzzOne(data, size); });
  return 0;
}
