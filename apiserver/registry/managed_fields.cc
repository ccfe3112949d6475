#include "apiserver/registry/managed_fields.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/errors/errors.h"
#include "apiserver/apply/patch_request.h"

namespace kcr {
namespace apiserver {
namespace {

std::string_view StringMember(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return {};
  auto it = v.FindMember(name);
  if (it == v.MemberEnd() || !it->value.IsString()) return {};
  return std::string_view(it->value.GetString(), it->value.GetStringLength());
}

// `*dst` |= `src`, for FieldsV1 trees (objects of objects).
void UnionFields(rapidjson::Value* dst, const rapidjson::Value& src,
                 rapidjson::Value::AllocatorType& allocator) {
  if (!dst->IsObject() || !src.IsObject()) return;
  for (const auto& m : src.GetObject()) {
    auto it = dst->FindMember(m.name);
    if (it == dst->MemberEnd()) {
      dst->AddMember(rapidjson::Value(m.name, allocator),
                     rapidjson::Value(m.value, allocator), allocator);
    } else {
      UnionFields(&it->value, m.value, allocator);
    }
  }
}

}  // namespace

const api::PatchSchema* PatchSchemaFor(const ResourceInfo& resource) {
  if (resource.custom) return nullptr;
  return api::BuiltinPatchSchema(resource.group(), resource.kind());
}

FieldScope FieldScopeFor(const ResourceInfo& resource,
                         std::string_view subresource) {
  if (subresource == "status") return FieldScope::kStatus;
  if (resource.has_status()) return FieldScope::kMainResource;
  return FieldScope::kAll;
}

absl::Status RecordWriteManagedFields(
    const ResourceInfo& resource, const rapidjson::Value* old_object,
    rapidjson::Value* object, rapidjson::Value::AllocatorType& allocator,
    std::string_view field_manager, std::string_view user_agent,
    std::string_view subresource, absl::Time now) {
  absl::Status s = RecordWriteManager(
      old_object, object, allocator, PatchSchemaFor(resource), field_manager,
      user_agent, subresource, FieldScopeFor(resource, subresource), now);
  if (s.ok()) {
    CapUpdateManagers(object, allocator);
    return s;
  }
  api::StatusError e;
  e.code = 422;
  e.reason = "Invalid";
  e.message = std::string(s.message());
  return e.ToStatus();
}

void CapUpdateManagers(rapidjson::Value* object,
                       rapidjson::Value::AllocatorType& allocator, size_t max) {
  if (!object->IsObject()) return;
  auto meta = object->FindMember("metadata");
  if (meta == object->MemberEnd() || !meta->value.IsObject()) return;
  auto mf = meta->value.FindMember("managedFields");
  if (mf == meta->value.MemberEnd() || !mf->value.IsArray()) return;
  rapidjson::Value& entries = mf->value;
  std::vector<rapidjson::SizeType> updaters;
  for (rapidjson::SizeType i = 0; i < entries.Size(); ++i) {
    if (StringMember(entries[i], "operation") == "Update") {
      updaters.push_back(i);
    }
  }
  if (updaters.size() <= max) return;
  // Times are RFC 3339 in seconds ("2024-05-01T10:00:00Z"): they sort as
  // strings.
  std::stable_sort(updaters.begin(), updaters.end(),
                   [&](rapidjson::SizeType a, rapidjson::SizeType b) {
                     return std::make_pair(
                                StringMember(entries[a], "time"),
                                StringMember(entries[a], "manager")) <
                            std::make_pair(StringMember(entries[b], "time"),
                                           StringMember(entries[b], "manager"));
                   });
  std::vector<bool> merged(entries.Size(), false);
  // (apiVersion, subresource) -> the entry that is, or becomes, its bucket.
  // A bucket left by an earlier cap takes the merges of its version.
  std::map<std::pair<std::string, std::string>, rapidjson::SizeType> buckets;
  for (rapidjson::SizeType i : updaters) {
    if (StringMember(entries[i], "manager") == kAncientChangesManager) {
      buckets.emplace(
          std::make_pair(std::string(StringMember(entries[i], "apiVersion")),
                         std::string(StringMember(entries[i], "subresource"))),
          i);
    }
  }
  size_t length = updaters.size();
  for (size_t k = 0; k < updaters.size() && length > max; ++k) {
    const rapidjson::SizeType i = updaters[k];
    std::pair<std::string, std::string> version(
        StringMember(entries[i], "apiVersion"),
        StringMember(entries[i], "subresource"));
    auto [it, first] = buckets.emplace(version, i);
    if (first || it->second == i) continue;
    rapidjson::Value& bucket = entries[it->second];
    bucket["manager"].SetString(kAncientChangesManager, allocator);
    if (!bucket.HasMember("fieldsV1") || !bucket["fieldsV1"].IsObject()) {
      bucket.RemoveMember("fieldsV1");
      bucket.AddMember("fieldsV1", rapidjson::Value(rapidjson::kObjectType),
                       allocator);
    }
    if (entries[i].HasMember("fieldsV1")) {
      UnionFields(&bucket["fieldsV1"], entries[i]["fieldsV1"], allocator);
    }
    if (entries[i].HasMember("time")) {
      if (bucket.HasMember("time")) {
        bucket["time"].CopyFrom(entries[i]["time"], allocator);
      } else {
        bucket.AddMember(
            "time", rapidjson::Value(entries[i]["time"], allocator), allocator);
      }
    }
    merged[i] = true;
    --length;
  }
  // Drop the merged entries, keeping the others in their order.
  rapidjson::Value kept(rapidjson::kArrayType);
  for (rapidjson::SizeType i = 0; i < entries.Size(); ++i) {
    if (!merged[i]) kept.PushBack(entries[i].Move(), allocator);
  }
  entries = std::move(kept);
}

}  // namespace apiserver
}  // namespace kcr
