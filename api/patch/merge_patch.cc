#include "api/patch/merge_patch.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/json/json_util.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace {

using Allocator = rapidjson::Value::AllocatorType;

absl::Status CheckDepth(const rapidjson::Value& v, std::string_view what) {
  if (json::JsonDepth(v) > kMaxJsonDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        ToAbsl(what), " nests deeper than ", kMaxJsonDepth, " levels"));
  }
  return absl::OkStatus();
}

// Recursion depth is bounded by the patch's depth, checked by the callers.
void MergeInto(rapidjson::Value& target, const rapidjson::Value& patch,
               Allocator& allocator) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, allocator);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (const auto& m : patch.GetObject()) {
    auto it = target.FindMember(m.name);
    if (m.value.IsNull()) {
      if (it != target.MemberEnd()) target.EraseMember(it);
      continue;
    }
    if (it != target.MemberEnd()) {
      MergeInto(it->value, m.value, allocator);
      continue;
    }
    // A new member: merging into null strips nulls from object values.
    rapidjson::Value value;
    MergeInto(value, m.value, allocator);
    target.AddMember(rapidjson::Value(m.name, allocator), value, allocator);
  }
}

// Returns false when the two are equal and nothing was written.
bool Diff(const rapidjson::Value& original, const rapidjson::Value& modified,
          rapidjson::Value* patch, Allocator& allocator) {
  if (!original.IsObject() || !modified.IsObject()) {
    if (json::JsonDeepEqual(original, modified)) return false;
    patch->CopyFrom(modified, allocator);
    return true;
  }
  patch->SetObject();
  for (const auto& m : original.GetObject()) {
    if (!modified.HasMember(m.name)) {
      patch->AddMember(rapidjson::Value(m.name, allocator), rapidjson::Value(),
                       allocator);
    }
  }
  for (const auto& m : modified.GetObject()) {
    auto it = original.FindMember(m.name);
    rapidjson::Value sub;
    if (it == original.MemberEnd()) {
      sub.CopyFrom(m.value, allocator);
    } else if (!Diff(it->value, m.value, &sub, allocator)) {
      continue;
    }
    patch->AddMember(rapidjson::Value(m.name, allocator), sub, allocator);
  }
  return patch->MemberCount() > 0;
}

absl::Status ParseBoth(std::string_view a_json, std::string_view a_name,
                       std::string_view b_json, std::string_view b_name,
                       rapidjson::Document* a, rapidjson::Document* b) {
  if (absl::Status s = json::ParseJson(a_json, a); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(a_name), ": ", s.message()));
  }
  if (absl::Status s = json::ParseJson(b_json, b); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(b_name), ": ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyMergePatch(const rapidjson::Value& target,
                             const rapidjson::Value& patch,
                             rapidjson::Value* result, Allocator& allocator) {
  if (absl::Status s = CheckDepth(target, "target"); !s.ok()) return s;
  if (absl::Status s = CheckDepth(patch, "merge patch"); !s.ok()) return s;
  rapidjson::Value out(target, allocator);
  MergeInto(out, patch, allocator);
  *result = std::move(out);
  return absl::OkStatus();
}

absl::StatusOr<rapidjson::Document> ApplyMergePatch(
    const rapidjson::Value& target, const rapidjson::Value& patch) {
  rapidjson::Document doc;
  absl::Status s = ApplyMergePatch(target, patch, &doc, doc.GetAllocator());
  if (!s.ok()) return s;
  return doc;
}

absl::StatusOr<std::string> ApplyMergePatch(std::string_view target_json,
                                            std::string_view patch_json) {
  rapidjson::Document target, patch;
  absl::Status parsed = ParseBoth(target_json, "target", patch_json,
                                  "merge patch", &target, &patch);
  if (!parsed.ok()) return parsed;
  absl::StatusOr<rapidjson::Document> result = ApplyMergePatch(target, patch);
  if (!result.ok()) return result.status();
  return json::JsonToString(*result);
}

absl::Status CreateMergePatch(const rapidjson::Value& original,
                              const rapidjson::Value& modified,
                              rapidjson::Value* patch, Allocator& allocator) {
  if (absl::Status s = CheckDepth(original, "original"); !s.ok()) return s;
  if (absl::Status s = CheckDepth(modified, "modified"); !s.ok()) return s;
  rapidjson::Value out;
  if (!Diff(original, modified, &out, allocator)) {
    // {} would turn a scalar or array into an object: an unchanged
    // non-object is expressed by giving it whole.
    if (modified.IsObject()) {
      out.SetObject();
    } else {
      out.CopyFrom(modified, allocator);
    }
  }
  *patch = std::move(out);
  return absl::OkStatus();
}

absl::StatusOr<rapidjson::Document> CreateMergePatch(
    const rapidjson::Value& original, const rapidjson::Value& modified) {
  rapidjson::Document doc;
  absl::Status s =
      CreateMergePatch(original, modified, &doc, doc.GetAllocator());
  if (!s.ok()) return s;
  return doc;
}

absl::StatusOr<std::string> CreateMergePatch(std::string_view original_json,
                                             std::string_view modified_json) {
  rapidjson::Document original, modified;
  absl::Status parsed = ParseBoth(original_json, "original", modified_json,
                                  "modified", &original, &modified);
  if (!parsed.ok()) return parsed;
  absl::StatusOr<rapidjson::Document> patch =
      CreateMergePatch(original, modified);
  if (!patch.ok()) return patch.status();
  return json::JsonToString(*patch);
}

}  // namespace api
}  // namespace kcr
