// Fuzzes JSON patch and JSON merge patch. The input is two documents split
// at the first newline: a target, then a patch. Nothing may crash, a failed
// JSON patch must leave its document unchanged, and a merge patch computed
// between the two documents must turn the first into the second.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>
#include <vector>

#include "api/json/json_util.h"
#include "api/patch/json_patch.h"
#include "api/patch/merge_patch.h"
#include "rapidjson/document.h"
#include "test/fuzz/server_stack.h"

namespace {

using namespace ::kcr::api;  // NOLINT: a fuzz driver over one namespace

void Check(bool ok) {
  if (!ok) std::abort();
}

// A merge patch cannot set an object member to null, and JSON objects with
// a repeated key have no single meaning, so the round trip is checked only
// on documents free of both.
bool RoundTripExpressible(const rapidjson::Value& v, bool allow_null) {
  std::vector<const rapidjson::Value*> stack = {&v};
  while (!stack.empty()) {
    const rapidjson::Value* x = stack.back();
    stack.pop_back();
    if (x->IsObject()) {
      std::set<std::string_view> keys;
      for (const auto& m : x->GetObject()) {
        if (m.value.IsNull() && !allow_null) return false;
        if (!keys.emplace(m.name.GetString(), m.name.GetStringLength())
                 .second) {
          return false;
        }
        stack.push_back(&m.value);
      }
    } else if (x->IsArray()) {
      for (const auto& e : x->GetArray()) stack.push_back(&e);
    }
  }
  return true;
}

}  // namespace

static int FuzzOne(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  std::string_view first = input.substr(0, newline);
  std::string_view second =
      newline == std::string_view::npos ? "" : input.substr(newline + 1);

  // The text entry points parse untrusted bytes themselves.
  (void)ApplyJsonPatch(first, second);
  (void)ApplyMergePatch(first, second);
  (void)CreateMergePatch(first, second);

  rapidjson::Document target, patch;
  if (!kcr::json::ParseJson(std::string_view(first.data(), first.size()),
                            &target)
           .ok() ||
      !kcr::json::ParseJson(std::string_view(second.data(), second.size()),
                            &patch)
           .ok()) {
    return 0;
  }

  JsonPatchOptions options;
  options.max_copied_bytes = size_t{1} << 20;
  rapidjson::Document doc;
  doc.CopyFrom(target, doc.GetAllocator());
  absl::Status s = ApplyJsonPatch(patch, &doc, options);
  if (s.ok()) {
    Check(kcr::json::JsonToString(doc).ok());
  } else {
    Check(kcr::json::JsonDeepEqual(doc, target));  // atomic
  }

  absl::StatusOr<rapidjson::Document> merged = ApplyMergePatch(target, patch);
  Check(merged.ok());
  Check(kcr::json::JsonToString(*merged).ok());

  absl::StatusOr<rapidjson::Document> diff = CreateMergePatch(target, patch);
  Check(diff.ok());
  absl::StatusOr<rapidjson::Document> round = ApplyMergePatch(target, *diff);
  Check(round.ok());
  if (RoundTripExpressible(target, true) &&
      RoundTripExpressible(patch, false)) {
    Check(kcr::json::JsonDeepEqual(*round, patch));
  }
  return 0;
}

// On a thread with the local API server's connection stack, so that
// recursion the server could not afford fails here too.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kcr::fuzz::RunOnServerStack([data, size] { FuzzOne(data, size); });
  return 0;
}
