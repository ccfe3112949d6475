#include "api/patch/strategic_merge_patch.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/json/json_util.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace {

using Allocator = rapidjson::Value::AllocatorType;
using rapidjson::Value;

constexpr absl::string_view kPatchDirective = "$patch";
constexpr absl::string_view kRetainKeys = "$retainKeys";
constexpr absl::string_view kSetElementOrderPrefix = "$setElementOrder/";
constexpr absl::string_view kDeleteFromPrimitiveListPrefix =
    "$deleteFromPrimitiveList/";

absl::string_view View(const Value& v) {
  return absl::string_view(v.GetString(), v.GetStringLength());
}

// Appends ".name" to the path for the lifetime of the scope.
class PathScope {
 public:
  PathScope(std::string* path, absl::string_view name)
      : path_(path), size_(path->size()) {
    if (!path->empty()) path->push_back('.');
    path->append(name.data(), name.size());
  }
  ~PathScope() { path_->resize(size_); }
  PathScope(const PathScope&) = delete;
  PathScope& operator=(const PathScope&) = delete;

 private:
  std::string* path_;
  size_t size_;
};

template <typename... Args>
absl::Status Bad(const std::string& path, const Args&... args) {
  return absl::InvalidArgumentError(
      absl::StrCat("strategic merge patch: ", path.empty() ? "(root)" : path,
                   ": ", args...));
}

const Value* FindKey(const Value& element, absl::string_view key) {
  if (!element.IsObject()) return nullptr;
  auto it =
      element.FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  return it == element.MemberEnd() ? nullptr : &it->value;
}

// Index of the first element of `list` whose identity equals `id`, or -1.
int IndexOf(const std::vector<const Value*>& list, const Value* id) {
  if (id == nullptr) return -1;
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] != nullptr && json::JsonDeepEqual(*list[i], *id)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// apimachinery's normalizeElementOrder: elements with a patch position in
// that order, the others in server order, then the server-only elements
// interleaved before the first patch element that follows them on the
// server. Returns the new order as indices into the inputs.
std::vector<size_t> MergedOrder(const std::vector<int>& patch_pos,
                                const std::vector<int>& server_pos) {
  std::vector<size_t> in_patch, server_only;
  for (size_t i = 0; i < patch_pos.size(); ++i) {
    (patch_pos[i] >= 0 ? in_patch : server_only).push_back(i);
  }
  std::stable_sort(in_patch.begin(), in_patch.end(), [&](size_t a, size_t b) {
    return patch_pos[a] < patch_pos[b];
  });
  auto server_key = [&](size_t i) {
    return server_pos[i] < 0 ? static_cast<long>(server_pos.size()) + 1
                             : static_cast<long>(server_pos[i]);
  };
  std::stable_sort(
      server_only.begin(), server_only.end(),
      [&](size_t a, size_t b) { return server_key(a) < server_key(b); });
  std::vector<size_t> out;
  out.reserve(patch_pos.size());
  size_t i = 0, j = 0;
  while (i < server_only.size() || j < in_patch.size()) {
    if (j >= in_patch.size()) {
      out.push_back(server_only[i++]);
    } else if (i >= server_only.size()) {
      out.push_back(in_patch[j++]);
    } else {
      const int l = server_pos[server_only[i]];
      const int r = server_pos[in_patch[j]];
      if (l >= 0 && r >= 0 && l < r) {
        out.push_back(server_only[i++]);
      } else {
        out.push_back(in_patch[j++]);
      }
    }
  }
  return out;
}

// Rebuilds the array `list` in the order given by `order`.
void Reorder(Value& list, const std::vector<size_t>& order, Allocator& a) {
  std::vector<Value> items;
  items.reserve(list.Size());
  for (Value& e : list.GetArray()) items.emplace_back(std::move(e));
  list.SetArray();
  list.Reserve(static_cast<rapidjson::SizeType>(items.size()), a);
  for (size_t i : order) list.PushBack(items[i], a);
}

class Merger {
 public:
  Merger(const PatchSchema& schema, bool directives, Allocator& allocator)
      : schema_(schema), directives_(directives), a_(allocator) {}

  // Merges the object `patch` into `orig` (made an object if it is not).
  absl::Status MergeMap(Value& orig, const Value& patch, std::string* path) {
    if (directives_) {
      auto d = patch.FindMember(Value(rapidjson::StringRef(
          kPatchDirective.data(), kPatchDirective.size())));
      if (d != patch.MemberEnd()) {
        if (!d->value.IsString()) {
          return Bad(*path, "the value of $patch must be a string");
        }
        const absl::string_view type = View(d->value);
        if (type == "replace") {
          orig.SetObject();
          return MergeMembers(orig, patch, path);
        }
        if (type == "delete") {
          orig.SetObject();
          return absl::OkStatus();
        }
        return Bad(*path, "unknown patch type \"", type, "\" in map");
      }
    }
    if (!orig.IsObject()) orig.SetObject();
    return MergeMembers(orig, patch, path);
  }

  // Merges the array `patch` into the array `orig` under `meta`.
  absl::Status MergeList(Value& orig, const Value& patch,
                         const FieldPatchMeta* meta, std::string* path) {
    if (meta == nullptr || meta->strategy == FieldStrategy::kAtomic) {
      return Fresh(patch, nullptr, path, &orig, /*copy_list_raw=*/true);
    }
    if (orig.Empty() && patch.Empty()) return absl::OkStatus();
    bool objects = false, scalars = false;
    for (const Value* list : {static_cast<const Value*>(&orig), &patch}) {
      for (const Value& e : list->GetArray()) {
        if (e.IsArray()) return Bad(*path, "lists of lists are not supported");
        (e.IsObject() ? objects : scalars) = true;
      }
    }
    if (objects && scalars) {
      return Bad(*path, "list elements must be all objects or all scalars");
    }
    if (scalars) return MergePrimitives(orig, patch);
    if (meta->strategy != FieldStrategy::kMergeByKey ||
        meta->merge_key.empty()) {
      return Bad(*path, "cannot merge lists of objects without a merge key");
    }
    return MergeByKey(orig, patch, meta->merge_key, path);
  }

 private:
  // Sets `*out` to `patch` merged into nothing: directives and nulls are
  // processed away. Atomic lists are copied as sent.
  absl::Status Fresh(const Value& patch, const FieldPatchMeta* meta,
                     std::string* path, Value* out, bool copy_list_raw) {
    if (patch.IsObject()) {
      Value v(rapidjson::kObjectType);
      absl::Status s = MergeMap(v, patch, path);
      if (!s.ok()) return s;
      *out = std::move(v);
    } else if (patch.IsArray() && !copy_list_raw && meta != nullptr &&
               meta->strategy != FieldStrategy::kAtomic) {
      Value v(rapidjson::kArrayType);
      absl::Status s = MergeList(v, patch, meta, path);
      if (!s.ok()) return s;
      *out = std::move(v);
    } else {
      out->CopyFrom(patch, a_);
    }
    return absl::OkStatus();
  }

  absl::Status MergeMembers(Value& orig, const Value& patch,
                            std::string* path) {
    std::vector<absl::string_view> done;  // lists ordered by $setElementOrder
    if (directives_) {
      absl::Status s = RetainKeys(orig, patch, path);
      if (!s.ok()) return s;
      for (const auto& m : patch.GetObject()) {
        const absl::string_view name = View(m.name);
        if (!absl::StartsWith(name, kSetElementOrderPrefix)) continue;
        const absl::string_view field =
            name.substr(kSetElementOrderPrefix.size());
        s = SetElementOrder(orig, patch, field, m.value, path);
        if (!s.ok()) return s;
        done.push_back(field);
      }
    }
    for (const auto& m : patch.GetObject()) {
      const absl::string_view name = View(m.name);
      if (directives_ && absl::StartsWith(name, "$")) {
        if (name == kPatchDirective || name == kRetainKeys ||
            absl::StartsWith(name, kSetElementOrderPrefix)) {
          continue;
        }
        if (absl::StartsWith(name, kDeleteFromPrimitiveListPrefix)) {
          absl::Status s = DeleteFromPrimitiveList(
              orig, name.substr(kDeleteFromPrimitiveListPrefix.size()), m.value,
              path);
          if (!s.ok()) return s;
          continue;
        }
        return Bad(*path, "unknown directive \"", name, "\"");
      }
      if (std::find(done.begin(), done.end(), name) != done.end()) continue;
      auto it = orig.FindMember(m.name);
      if (m.value.IsNull()) {
        if (it != orig.MemberEnd()) orig.EraseMember(it);
        continue;
      }
      PathScope scope(path, name);
      const FieldPatchMeta* meta = schema_.Find(*path);
      absl::Status s;
      if (it == orig.MemberEnd()) {
        Value v;
        s = Fresh(m.value, meta, path, &v, /*copy_list_raw=*/false);
        if (!s.ok()) return s;
        orig.AddMember(Value(m.name, a_), v, a_);
      } else if (it->value.IsObject() && m.value.IsObject()) {
        s = MergeMap(it->value, m.value, path);
      } else if (it->value.IsArray() && m.value.IsArray()) {
        s = MergeList(it->value, m.value, meta, path);
      } else {
        s = Fresh(m.value, meta, path, &it->value, /*copy_list_raw=*/false);
      }
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status RetainKeys(Value& orig, const Value& patch, std::string* path) {
    auto r = patch.FindMember(
        Value(rapidjson::StringRef(kRetainKeys.data(), kRetainKeys.size())));
    if (r == patch.MemberEnd()) return absl::OkStatus();
    if (!r->value.IsArray()) {
      return Bad(*path, "invalid patch format of retainKeys: not a list");
    }
    std::vector<absl::string_view> keep;
    for (const Value& k : r->value.GetArray()) {
      if (!k.IsString()) {
        return Bad(*path, "invalid patch format of retainKeys: not a string");
      }
      keep.push_back(View(k));
    }
    auto kept = [&](absl::string_view k) {
      return std::find(keep.begin(), keep.end(), k) != keep.end();
    };
    for (const auto& m : patch.GetObject()) {
      const absl::string_view name = View(m.name);
      if (m.value.IsNull() || absl::StartsWith(name, "$")) continue;
      if (!kept(name)) {
        return Bad(*path, "patch content doesn't match retainKeys list: \"",
                   name, "\" is not retained");
      }
    }
    if (!orig.IsObject()) return absl::OkStatus();
    for (auto it = orig.MemberBegin(); it != orig.MemberEnd();) {
      if (kept(View(it->name))) {
        ++it;
      } else {
        it = orig.EraseMember(it);
      }
    }
    return absl::OkStatus();
  }

  absl::Status DeleteFromPrimitiveList(Value& orig, absl::string_view field,
                                       const Value& remove, std::string* path) {
    if (!remove.IsArray()) {
      return Bad(
          *path,
          "invalid patch format of primitive list $deleteFromPrimitiveList/",
          field);
    }
    for (const Value& e : remove.GetArray()) {
      if (e.IsObject() || e.IsArray()) {
        return Bad(*path, "$deleteFromPrimitiveList/", field,
                   " must list scalars");
      }
    }
    auto it = orig.FindMember(
        Value(rapidjson::StringRef(field.data(), field.size())));
    if (it == orig.MemberEnd() || !it->value.IsArray()) return absl::OkStatus();
    Value& list = it->value;
    for (auto e = list.Begin(); e != list.End();) {
      bool drop = false;
      for (const Value& r : remove.GetArray()) {
        if (json::JsonDeepEqual(*e, r)) {
          drop = true;
          break;
        }
      }
      e = drop ? list.Erase(e) : e + 1;
    }
    return absl::OkStatus();
  }

  absl::Status MergePrimitives(Value& orig, const Value& patch) {
    // Union without duplicates, first occurrence kept.
    std::vector<const Value*> server, in_patch;
    for (const Value& e : orig.GetArray()) server.push_back(&e);
    for (const Value& e : patch.GetArray()) in_patch.push_back(&e);
    Value merged(rapidjson::kArrayType);
    std::vector<int> patch_pos, server_pos;
    std::vector<const Value*> seen;
    for (const std::vector<const Value*>* list : {&server, &in_patch}) {
      for (const Value* e : *list) {
        if (IndexOf(seen, e) >= 0) continue;
        seen.push_back(e);
        patch_pos.push_back(IndexOf(in_patch, e));
        server_pos.push_back(IndexOf(server, e));
        merged.PushBack(Value(*e, a_), a_);
      }
    }
    Reorder(merged, MergedOrder(patch_pos, server_pos), a_);
    orig = std::move(merged);
    return absl::OkStatus();
  }

  absl::Status MergeByKey(Value& orig, const Value& patch,
                          const std::string& key, std::string* path) {
    // Special elements first: deletions and a replace marker.
    std::vector<const Value*> elements;
    bool replace = false;
    for (const Value& e : patch.GetArray()) {
      const Value* directive =
          directives_ ? FindKey(e, kPatchDirective) : nullptr;
      if (directive == nullptr) {
        elements.push_back(&e);
        continue;
      }
      if (!directive->IsString()) {
        return Bad(*path, "the value of $patch must be a string");
      }
      const absl::string_view type = View(*directive);
      if (type == "delete") {
        const Value* id = FindKey(e, key);
        if (id == nullptr) {
          return Bad(*path,
                     "a $patch: delete element does not contain the "
                     "declared merge key \"",
                     key, "\"");
        }
        for (auto it = orig.Begin(); it != orig.End();) {
          const Value* other = FindKey(*it, key);
          it = (other != nullptr && json::JsonDeepEqual(*other, *id))
                   ? orig.Erase(it)
                   : it + 1;
        }
      } else if (type == "replace") {
        replace = true;
      } else if (type == "merge") {
        return Bad(*path, "merging lists cannot yet be specified in the patch");
      } else {
        return Bad(*path, "unknown patch type \"", type, "\" in list");
      }
    }
    if (replace) {
      Value list(rapidjson::kArrayType);
      for (const Value* e : elements) {
        Value v;
        absl::Status s = Fresh(*e, nullptr, path, &v, true);
        if (!s.ok()) return s;
        list.PushBack(v, a_);
      }
      orig = std::move(list);
      return absl::OkStatus();
    }
    std::vector<const Value*> patch_ids;
    for (const Value* e : elements) {
      const Value* id = FindKey(*e, key);
      if (id == nullptr) {
        return Bad(*path,
                   "an element does not contain the declared merge key \"", key,
                   "\"");
      }
      patch_ids.push_back(id);
    }
    const size_t server_count = orig.Size();
    for (size_t p = 0; p < elements.size(); ++p) {
      int found = -1;
      for (rapidjson::SizeType i = 0; i < orig.Size(); ++i) {
        const Value* id = FindKey(orig[i], key);
        if (id != nullptr && json::JsonDeepEqual(*id, *patch_ids[p])) {
          found = static_cast<int>(i);
          break;
        }
      }
      absl::Status s;
      if (found >= 0) {
        s = MergeMap(orig[static_cast<rapidjson::SizeType>(found)],
                     *elements[p], path);
      } else {
        Value v;
        s = Fresh(*elements[p], nullptr, path, &v, true);
        if (s.ok()) orig.PushBack(v, a_);
      }
      if (!s.ok()) return s;
    }
    std::vector<int> patch_pos, server_pos;
    for (rapidjson::SizeType i = 0; i < orig.Size(); ++i) {
      patch_pos.push_back(IndexOf(patch_ids, FindKey(orig[i], key)));
      server_pos.push_back(i < server_count ? static_cast<int>(i) : -1);
    }
    Reorder(orig, MergedOrder(patch_pos, server_pos), a_);
    return absl::OkStatus();
  }

  absl::Status SetElementOrder(Value& orig, const Value& patch,
                               absl::string_view field, const Value& order,
                               std::string* path) {
    if (field.empty() || !order.IsArray()) {
      return Bad(*path, "invalid patch format of setElementOrder list");
    }
    PathScope scope(path, field);
    const FieldPatchMeta* meta = schema_.Find(*path);
    const Value field_name(rapidjson::StringRef(field.data(), field.size()));
    auto p = patch.FindMember(field_name);
    const Value* patch_list = p == patch.MemberEnd() ? nullptr : &p->value;
    if (patch_list != nullptr && !patch_list->IsArray()) {
      return Bad(*path,
                 "invalid patch format of setElementOrder list: the "
                 "patch value is not a list");
    }
    auto o = orig.FindMember(field_name);
    Value* orig_list =
        (o != orig.MemberEnd() && o->value.IsArray()) ? &o->value : nullptr;
    if (orig_list == nullptr && patch_list == nullptr) return absl::OkStatus();

    const std::string key =
        (meta != nullptr && meta->strategy == FieldStrategy::kMergeByKey)
            ? meta->merge_key
            : std::string();
    bool keyed = !key.empty();
    // A keyed field whose elements are scalars merges as primitives.
    for (const Value* list :
         {patch_list, static_cast<const Value*>(orig_list)}) {
      if (list == nullptr) continue;
      for (const Value& e : list->GetArray()) {
        if (!e.IsObject()) keyed = false;
      }
    }
    std::vector<const Value*> order_ids;
    for (const Value& e : order.GetArray()) {
      const Value* id = keyed ? FindKey(e, key) : &e;
      if (id == nullptr) {
        return Bad(*path,
                   "a $setElementOrder element does not contain the "
                   "declared merge key \"",
                   key, "\"");
      }
      order_ids.push_back(id);
    }
    if (patch_list != nullptr && !order_ids.empty()) {
      // Every patch element must appear in the order list, in that order.
      size_t at = 0;
      for (const Value& e : patch_list->GetArray()) {
        if (directives_ && FindKey(e, kPatchDirective) != nullptr) continue;
        const Value* id = keyed ? FindKey(e, key) : &e;
        if (id == nullptr) {
          return Bad(*path,
                     "an element does not contain the declared merge "
                     "key \"",
                     key, "\"");
        }
        while (at < order_ids.size() &&
               !json::JsonDeepEqual(*order_ids[at], *id))
          ++at;
        if (at == order_ids.size()) {
          return Bad(*path,
                     "the order in the patch list doesn't match the "
                     "$setElementOrder list");
        }
        ++at;
      }
    }
    // The server's order, taken before the merge changes the list.
    Value server_ids(rapidjson::kArrayType);
    if (orig_list != nullptr) {
      for (const Value& e : orig_list->GetArray()) {
        const Value* id = keyed ? FindKey(e, key) : &e;
        server_ids.PushBack(id == nullptr ? Value() : Value(*id, a_), a_);
      }
    }
    Value merged(rapidjson::kArrayType);
    if (orig_list != nullptr) merged = std::move(*orig_list);
    if (patch_list != nullptr) {
      absl::Status s = MergeList(merged, *patch_list, meta, path);
      if (!s.ok()) return s;
    }
    std::vector<const Value*> server;
    for (const Value& id : server_ids.GetArray()) {
      server.push_back(id.IsNull() && keyed ? nullptr : &id);
    }
    std::vector<int> patch_pos, server_pos;
    for (const Value& e : merged.GetArray()) {
      const Value* id = keyed ? FindKey(e, key) : &e;
      patch_pos.push_back(IndexOf(order_ids, id));
      server_pos.push_back(IndexOf(server, id));
    }
    Reorder(merged, MergedOrder(patch_pos, server_pos), a_);
    if (o != orig.MemberEnd()) {
      o->value = std::move(merged);
    } else {
      orig.AddMember(Value(field_name, a_), merged, a_);
    }
    return absl::OkStatus();
  }

  const PatchSchema& schema_;
  const bool directives_;
  Allocator& a_;
};

absl::Status CheckDepth(const Value& v, absl::string_view what) {
  if (json::JsonDepth(v) > kMaxJsonDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " nests deeper than ", kMaxJsonDepth, " levels"));
  }
  return absl::OkStatus();
}

}  // namespace

namespace internal {

absl::Status StrategicMerge(const Value& target, const Value& patch,
                            const PatchSchema& schema, bool directives,
                            Value* result, Allocator& allocator) {
  absl::Status s = CheckDepth(target, "target");
  if (s.ok()) s = CheckDepth(patch, "strategic merge patch");
  if (!s.ok()) return s;
  if (!patch.IsObject()) {
    return absl::InvalidArgumentError(
        "strategic merge patch: the patch must be a JSON object");
  }
  if (!target.IsObject()) {
    return absl::InvalidArgumentError(
        "strategic merge patch: the target must be a JSON object");
  }
  Value out(target, allocator);
  Merger merger(schema, directives, allocator);
  std::string path;
  s = merger.MergeMap(out, patch, &path);
  if (!s.ok()) return s;
  *result = std::move(out);
  return absl::OkStatus();
}

}  // namespace internal

absl::Status ApplyStrategicMergePatch(const Value& target, const Value& patch,
                                      const PatchSchema& schema, Value* result,
                                      Allocator& allocator) {
  return internal::StrategicMerge(target, patch, schema, /*directives=*/true,
                                  result, allocator);
}

absl::StatusOr<rapidjson::Document> ApplyStrategicMergePatch(
    const Value& target, const Value& patch, const PatchSchema& schema) {
  rapidjson::Document doc;
  absl::Status s =
      ApplyStrategicMergePatch(target, patch, schema, &doc, doc.GetAllocator());
  if (!s.ok()) return s;
  return doc;
}

absl::StatusOr<std::string> ApplyStrategicMergePatch(
    std::string_view target_json, std::string_view patch_json,
    const PatchSchema& schema) {
  rapidjson::Document target, patch;
  if (absl::Status s = json::ParseJson(target_json, &target); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("target: ", s.message()));
  }
  if (absl::Status s = json::ParseJson(patch_json, &patch); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("strategic merge patch: ", s.message()));
  }
  absl::StatusOr<rapidjson::Document> result =
      ApplyStrategicMergePatch(target, patch, schema);
  if (!result.ok()) return result.status();
  return json::JsonToString(*result);
}

}  // namespace api
}  // namespace kcr
