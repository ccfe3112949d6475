// Fuzzes strategic merge patch application. The input is two documents
// split at the first newline: a target, then a patch. Nothing may crash, a
// successful result must serialise, a failed patch must leave the output
// untouched, and the empty patch must leave the target unchanged. The same
// pair also drives server-side apply (target as the live object, patch as
// the configuration) and the Update bookkeeping of managed fields.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/json/json_util.h"
#include "api/patch/patch_schema.h"
#include "api/patch/strategic_merge_patch.h"
#include "apiserver/apply/fieldmanager.h"
#include "rapidjson/document.h"
#include "test/fuzz/server_stack.h"

namespace {

using namespace ::kcr::api;  // NOLINT: a fuzz driver over one namespace

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

static int FuzzOne(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  std::string_view first = input.substr(0, newline);
  std::string_view second =
      newline == std::string_view::npos ? "" : input.substr(newline + 1);

  const PatchSchema* schemas[] = {BuiltinPatchSchema("", "Pod"),
                                  BuiltinPatchSchema("apps", "Deployment"),
                                  BuiltinPatchSchema("", "Service")};
  for (const PatchSchema* schema : schemas) {
    (void)ApplyStrategicMergePatch(first, second, *schema);
  }

  rapidjson::Document target, patch;
  if (!kcr::json::ParseJson(std::string_view(first.data(), first.size()),
                            &target)
           .ok() ||
      !kcr::json::ParseJson(std::string_view(second.data(), second.size()),
                            &patch)
           .ok()) {
    return 0;
  }
  for (const PatchSchema* schema : schemas) {
    for (bool directives : {true, false}) {
      rapidjson::Document out(rapidjson::kObjectType);
      out.AddMember("untouched", true, out.GetAllocator());
      absl::Status s = internal::StrategicMerge(
          target, patch, *schema, directives, &out, out.GetAllocator());
      if (s.ok()) {
        Check(kcr::json::JsonToString(out).ok());
      } else {
        Check(out.IsObject() && out.HasMember("untouched"));
      }
    }
  }
  if (target.IsObject()) {
    rapidjson::Document empty(rapidjson::kObjectType);
    absl::StatusOr<rapidjson::Document> same =
        ApplyStrategicMergePatch(target, empty, *schemas[0]);
    Check(same.ok() && kcr::json::JsonDeepEqual(*same, target));
  }
  for (const PatchSchema* schema :
       {schemas[1], static_cast<const PatchSchema*>(nullptr)}) {
    kcr::apiserver::ApplyOptions apply;
    apply.field_manager = "fuzz";
    absl::StatusOr<kcr::apiserver::ApplyResult> applied =
        kcr::apiserver::ServerSideApply(&target, patch, schema, apply);
    if (applied.ok() && applied->conflicts.empty()) {
      Check(kcr::json::JsonToString(applied->object).ok());
      // Applying the same configuration again never conflicts.
      absl::StatusOr<kcr::apiserver::ApplyResult> again =
          kcr::apiserver::ServerSideApply(&applied->object, patch, schema,
                                          apply);
      Check(again.ok() && again->conflicts.empty());
    }
    kcr::apiserver::UpdateOptions update;
    update.field_manager = "fuzz-update";
    rapidjson::Document next;
    next.CopyFrom(patch, next.GetAllocator());
    if (kcr::apiserver::RecordUpdateManagedFields(&target, &next, schema,
                                                  update)
            .ok()) {
      Check(kcr::json::JsonToString(next).ok());
    }
  }
  return 0;
}

// On a thread with the local API server's connection stack, so that
// recursion the server could not afford fails here too.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kcr::fuzz::RunOnServerStack([data, size] { FuzzOne(data, size); });
  return 0;
}
