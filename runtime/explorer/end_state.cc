#include "runtime/explorer/end_state.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/string_view.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr::explorer {
namespace {

using Allocator = rapidjson::Document::AllocatorType;
using StringMap = absl::flat_hash_map<std::string, std::string>;

constexpr std::string_view kMetadataDropped[] = {
    "uid",        "resourceVersion", "creationTimestamp",
    "generation", "managedFields",   "selfLink"};

bool IsTimeMember(std::string_view name) {
  return absl::EndsWith(ToAbsl(name), "Time") ||
         absl::EndsWith(ToAbsl(name), "Timestamp");
}

// A copy of `v` with members sorted by name, time values masked and
// strings found in `names` replaced.
rapidjson::Value Canonical(const rapidjson::Value& v, const StringMap& names,
                           Allocator& alloc) {
  if (v.IsObject()) {
    std::vector<const rapidjson::Value::Member*> members;
    for (const auto& m : v.GetObject()) members.push_back(&m);
    std::sort(members.begin(), members.end(), [](auto* a, auto* b) {
      return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
             std::string_view(b->name.GetString(), b->name.GetStringLength());
    });
    rapidjson::Value out(rapidjson::kObjectType);
    for (const auto* m : members) {
      const std::string_view name(m->name.GetString(),
                                  m->name.GetStringLength());
      rapidjson::Value key(m->name, alloc);
      if (IsTimeMember(name) && m->value.IsString()) {
        out.AddMember(key, rapidjson::Value("<time>", alloc), alloc);
      } else {
        out.AddMember(key, Canonical(m->value, names, alloc), alloc);
      }
    }
    return out;
  }
  if (v.IsArray()) {
    std::vector<const rapidjson::Value*> elements;
    bool keyed_by_type = !v.Empty();
    for (const auto& e : v.GetArray()) {
      elements.push_back(&e);
      keyed_by_type = keyed_by_type && e.IsObject() && e.HasMember("type") &&
                      e["type"].IsString();
    }
    // Conditions are a map keyed by type (listType=map): their order is
    // whatever order their writers happened to add them in.
    if (keyed_by_type) {
      std::stable_sort(elements.begin(), elements.end(), [](auto* a, auto* b) {
        return std::string_view((*a)["type"].GetString()) <
               std::string_view((*b)["type"].GetString());
      });
    }
    rapidjson::Value out(rapidjson::kArrayType);
    for (const rapidjson::Value* e : elements) {
      out.PushBack(Canonical(*e, names, alloc), alloc);
    }
    return out;
  }
  if (v.IsString()) {
    auto it = names.find(absl::string_view(v.GetString(), v.GetStringLength()));
    if (it != names.end()) return rapidjson::Value(it->second.c_str(), alloc);
  }
  return rapidjson::Value(v, alloc);
}

std::string Render(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// The object without what normalisation drops (but with its name).
rapidjson::Document Stripped(const api::Object& object,
                             const std::vector<std::string>& ignored_fields) {
  rapidjson::Document doc;
  doc.CopyFrom(object.json(), doc.GetAllocator());
  if (doc.HasMember("metadata") && doc["metadata"].IsObject()) {
    rapidjson::Value& meta = doc["metadata"];
    for (std::string_view field : kMetadataDropped) {
      meta.RemoveMember(rapidjson::StringRef(field.data(), field.size()));
    }
    if (meta.HasMember("ownerReferences") &&
        meta["ownerReferences"].IsArray()) {
      for (auto& ref : meta["ownerReferences"].GetArray()) {
        if (ref.IsObject()) ref.RemoveMember("uid");
      }
    }
  }
  if (doc.HasMember("status") && doc["status"].IsObject()) {
    doc["status"].RemoveMember("observedGeneration");
  }
  for (const std::string& field : ignored_fields) {
    rapidjson::Pointer(field.c_str()).Erase(doc);
  }
  return doc;
}

std::string KeyOf(const StateObject& o, std::string_view name) {
  return absl::StrCat(o.group.empty() ? "core" : o.group, "/", o.resource, " ",
                      ToAbsl(o.object->namespace_()), "/", ToAbsl(name));
}

}  // namespace

EndState EndState::Of(const std::vector<StateObject>& objects,
                      const std::vector<std::string>& ignored_fields) {
  std::vector<rapidjson::Document> docs;
  docs.reserve(objects.size());
  // Generated names, each mapped to a placeholder for ordering.
  StringMap placeholders;
  for (const StateObject& o : objects) {
    docs.push_back(Stripped(*o.object, ignored_fields));
    const std::string_view generate = o.object->generate_name();
    const std::string_view name = o.object->name();
    if (!generate.empty() && absl::StartsWith(ToAbsl(name), ToAbsl(generate)) &&
        name.size() > generate.size()) {
      placeholders[std::string(name)] =
          absl::StrCat(ToAbsl(generate), "<generated>");
    }
  }
  // Number the generated names of each prefix in the order of their
  // objects' content (with every generated name masked).
  std::vector<std::pair<std::string, std::string>> order;  // (sort key, name)
  for (size_t i = 0; i < objects.size(); ++i) {
    const std::string name(objects[i].object->name());
    if (!placeholders.contains(name)) continue;
    rapidjson::Document scratch;
    const std::string content =
        Render(Canonical(docs[i], placeholders, scratch.GetAllocator()));
    order.emplace_back(absl::StrCat(placeholders[name], "\n",
                                    KeyOf(objects[i], ""), "\n", content),
                       name);
  }
  std::sort(order.begin(), order.end());
  StringMap stable;
  absl::flat_hash_map<std::string, int> next;
  for (const auto& [sort_key, name] : order) {
    const std::string& placeholder = placeholders[name];
    const std::string prefix = placeholder.substr(
        0, placeholder.size() - std::string_view("<generated>").size());
    stable[name] = absl::StrCat(prefix, "<", next[prefix]++, ">");
  }

  EndState state;
  for (size_t i = 0; i < objects.size(); ++i) {
    rapidjson::Document scratch;
    const std::string name(objects[i].object->name());
    auto it = stable.find(name);
    state.objects_[KeyOf(objects[i], it == stable.end() ? name : it->second)] =
        Render(Canonical(docs[i], stable, scratch.GetAllocator()));
  }
  return state;
}

std::string EndState::DiffFrom(const EndState& reference) const {
  std::string out;
  for (const auto& [key, json] : reference.objects_) {
    auto it = objects_.find(key);
    if (it == objects_.end()) {
      absl::StrAppend(&out, "missing: ", key, " ", json, "\n");
    } else if (it->second != json) {
      absl::StrAppend(&out, "differs: ", key, "\n  reference=", json,
                      "\n  got=", it->second, "\n");
    }
  }
  for (const auto& [key, json] : objects_) {
    if (reference.objects_.count(key) == 0) {
      absl::StrAppend(&out, "extra: ", key, " ", json, "\n");
    }
  }
  return out;
}

std::string EndState::ToString() const {
  std::string out;
  for (const auto& [key, json] : objects_) {
    absl::StrAppend(&out, key, " ", json, "\n");
  }
  return out;
}

}  // namespace kcr::explorer
