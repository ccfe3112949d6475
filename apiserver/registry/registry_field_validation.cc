// Registry (registry.h): decoding and fieldValidation. CheckUnknownFields
// and CheckFields find the fields a built-in kind's Go type or a custom
// resource's schema does not know (Strict, Warn, Ignore); built-in bodies
// are decoded as their Go types, and what decoding drops is dropped.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "apiserver/internal/object_fields.h"
#include "apiserver/registry/builtin_schema.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/registry_internal.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

using api::FieldError;
using rapidjson::Value;

void CollectUnknown(const Value& before, const Value& after,
                    const std::string& path, int depth,
                    std::vector<std::string>* out) {
  if (depth > 64) return;
  if (before.IsObject() && after.IsObject()) {
    for (const auto& m : before.GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      std::string p = path.empty() ? key : path + "." + key;
      auto it = after.FindMember(m.name);
      if (it == after.MemberEnd()) {
        out->push_back(p);
      } else {
        CollectUnknown(m.value, it->value, p, depth + 1, out);
      }
    }
  } else if (before.IsArray() && after.IsArray() &&
             before.Size() == after.Size()) {
    for (rapidjson::SizeType i = 0; i < before.Size(); ++i) {
      CollectUnknown(before[i], after[i],
                     Cat(path, "[", static_cast<int>(i), "]"), depth + 1, out);
    }
  }
}

// "<Kind> in version "v1" cannot be handled as a <Kind>: <why>", 400.
absl::Status DecodeError(const ResourceInfo& r, std::string_view why) {
  return api::StatusError::BadRequest(
             Cat(r.kind(), " in version ", Quote(r.version()),
                 " cannot be handled as a ", r.kind(), ": ", why))
      .ToStatus();
}

}  // namespace

namespace registry_internal {

absl::Status DecodePatched(const ResourceInfo& r, rapidjson::Value* patched) {
  const GoType* type =
      r.custom ? nullptr : BuiltinKindType(r.group(), r.version(), r.kind());
  if (type == nullptr) return absl::OkStatus();
  DecodeReport report = CheckDecode(*type, *patched);
  if (!report.error.empty()) {
    auto text = json::JsonToString(*patched);
    return api::StatusError::Invalid(
               {}, "",
               {FieldErr(FieldError::Type::kInvalid, "patch",
                         Quote(text.ok() ? *text : ""), report.error)})
        .ToStatus();
  }
  DropUnknownFields(*type, patched);
  return absl::OkStatus();
}

void DropBuiltinUnknownFields(const ResourceInfo& r, api::ObjectBuilder* b) {
  const GoType* type =
      r.custom ? nullptr : BuiltinKindType(r.group(), r.version(), r.kind());
  if (type != nullptr) DropUnknownFields(*type, &b->json());
}

}  // namespace registry_internal

absl::Status Registry::CheckUnknownFields(const ResourceInfo& r,
                                          const rapidjson::Value& object,
                                          const std::string& mode,
                                          std::vector<std::string>* warnings) {
  return CheckFields(r, object, mode, false, warnings);
}

absl::Status Registry::CheckFields(const ResourceInfo& r,
                                   const rapidjson::Value& object,
                                   const std::string& mode, bool patch,
                                   std::vector<std::string>* warnings) {
  if (!object.IsObject()) return absl::OkStatus();
  std::vector<std::string> unknown;
  if (!r.custom) {
    const GoType* type = BuiltinKindType(r.group(), r.version(), r.kind());
    if (type == nullptr) return absl::OkStatus();
    DecodeReport report = CheckDecode(*type, object, patch);
    // A patch decodes once applied (DecodePatched).
    if (!patch && !report.error.empty()) return DecodeError(r, report.error);
    if (mode == "Ignore") return absl::OkStatus();
    unknown = std::move(report.unknown_fields);
  } else {
    if (r.schema == nullptr || mode == "Ignore") return absl::OkStatus();
    rapidjson::Document pruned;
    pruned.CopyFrom(object, pruned.GetAllocator());
    r.schema->Prune(&pruned, pruned.GetAllocator());
    CollectUnknown(object, pruned, "", 0, &unknown);
  }
  if (unknown.empty()) return absl::OkStatus();
  std::vector<std::string> texts;
  for (const std::string& f : unknown)
    texts.push_back(Cat("unknown field ", Quote(f)));
  if (mode == "Strict") {
    std::string why =
        Cat("strict decoding error: ", absl::StrJoin(texts, ", "));
    // kube-apiserver's patcher answers the strict error alone, its create
    // and update handlers with the decoder's "cannot be handled" prefix.
    if (patch) return api::StatusError::BadRequest(why).ToStatus();
    return DecodeError(r, why);
  }
  if (warnings != nullptr) {
    warnings->insert(warnings->end(), texts.begin(), texts.end());
  }
  return absl::OkStatus();
}

}  // namespace apiserver
}  // namespace kcr
