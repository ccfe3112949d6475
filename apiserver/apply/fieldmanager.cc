#include "apiserver/apply/fieldmanager.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "api/json/json_util.h"
#include "api/json/yaml_to_json.h"
#include "api/patch/strategic_merge_patch.h"
#include "api/types/time.h"
#include "base/string_view.h"

namespace kcr {
namespace apiserver {
namespace {

using Allocator = rapidjson::Value::AllocatorType;
using rapidjson::Value;

constexpr size_t kMaxFieldManagerLength = 128;

absl::string_view View(const Value& v) {
  return absl::string_view(v.GetString(), v.GetStringLength());
}

std::string Compact(const Value& v) {
  absl::StatusOr<std::string> s = json::JsonToString(v);
  return s.ok() ? *s : std::string("null");
}

// A set of field paths as a tree keyed by FieldsV1 path elements ("f:x",
// `k:{"name":"a"}`, `v:"x"`, "i:0"). `member` marks the path itself as in
// the set. Trees built from an object also point at the value of each node
// (valid while that object lives) and mark list elements as `item`.
struct Node {
  bool member = false;
  bool item = false;
  const Value* value = nullptr;
  std::map<std::string, Node> children;
};

using Path = std::vector<std::string>;

bool IsEmpty(const Node& n) {
  if (n.member) return false;
  for (const auto& [k, c] : n.children) {
    if (!IsEmpty(c)) return false;
  }
  return true;
}

void DropEmpty(Node* n) {
  for (auto it = n->children.begin(); it != n->children.end();) {
    DropEmpty(&it->second);
    it = IsEmpty(it->second) ? n->children.erase(it) : std::next(it);
  }
}

void Subtract(Node* a, const Node& b) {
  if (b.member) a->member = false;
  for (const auto& [k, c] : b.children) {
    auto it = a->children.find(k);
    if (it != a->children.end()) Subtract(&it->second, c);
  }
}

void UnionInto(Node* a, const Node& b) {
  a->member = a->member || b.member;
  for (const auto& [k, c] : b.children) UnionInto(&a->children[k], c);
}

void Intersect(const Node& a, const Node& b, Node* out) {
  out->member = a.member && b.member;
  for (const auto& [k, c] : a.children) {
    auto it = b.children.find(k);
    if (it != b.children.end()) Intersect(c, it->second, &out->children[k]);
  }
}

void MemberPaths(const Node& n, Path* prefix, std::vector<Path>* out) {
  if (n.member) out->push_back(*prefix);
  for (const auto& [k, c] : n.children) {
    prefix->push_back(k);
    MemberPaths(c, prefix, out);
    prefix->pop_back();
  }
}

// True when `set` holds `path` or anything under it.
bool OwnsAtOrBelow(const Node& set, const Path& path) {
  const Node* n = &set;
  for (const std::string& e : path) {
    auto it = n->children.find(e);
    if (it == n->children.end()) return false;
    n = &it->second;
  }
  return !IsEmpty(*n);
}

bool OwnsExactly(const Node& set, const Path& path) {
  const Node* n = &set;
  for (const std::string& e : path) {
    auto it = n->children.find(e);
    if (it == n->children.end()) return false;
    n = &it->second;
  }
  return n->member;
}

// ---- Building the field set of an object ----

class SetBuilder {
 public:
  SetBuilder(const api::PatchSchema* schema, FieldScope scope)
      : schema_(schema), scope_(scope) {}

  Node Build(const Value& object) {
    Node root;
    root.value = &object;
    if (!object.IsObject()) return root;
    std::string path;
    Members(object, &path, &root, /*level=*/0);
    DropEmpty(&root);
    return root;
  }

 private:
  static bool Ignored(absl::string_view name, int level,
                      absl::string_view parent, FieldScope scope) {
    if (level == 0) {
      if (name == "apiVersion" || name == "kind") return true;
      if (scope == FieldScope::kMainResource && name == "status") return true;
      if (scope == FieldScope::kStatus && name != "status") return true;
    }
    if (level == 1 && parent == "metadata") {
      static constexpr absl::string_view kServerSet[] = {
          "name",
          "namespace",
          "uid",
          "resourceVersion",
          "generation",
          "creationTimestamp",
          "deletionTimestamp",
          "deletionGracePeriodSeconds",
          "managedFields",
          "selfLink"};
      for (absl::string_view s : kServerSet) {
        if (name == s) return true;
      }
    }
    return false;
  }

  void Members(const Value& object, std::string* path, Node* node, int level) {
    for (const auto& m : object.GetObject()) {
      const absl::string_view name = View(m.name);
      if (m.value.IsNull() || Ignored(name, level, *path, scope_)) continue;
      const size_t size = path->size();
      if (!path->empty()) path->push_back('.');
      path->append(name.data(), name.size());
      Node& child = node->children[absl::StrCat("f:", name)];
      Field(m.value, path, &child, level + 1);
      path->resize(size);
    }
  }

  void Field(const Value& v, std::string* path, Node* node, int level) {
    node->value = &v;
    const api::FieldPatchMeta* meta =
        schema_ == nullptr ? nullptr : schema_->Find(*path);
    if (v.IsObject()) {
      if (v.MemberCount() == 0 ||
          (meta != nullptr && meta->strategy == api::FieldStrategy::kAtomic)) {
        node->member = true;
        return;
      }
      Members(v, path, node, level);
      return;
    }
    if (!v.IsArray() || v.Empty() || meta == nullptr) {
      node->member = true;
      return;
    }
    if (meta->strategy == api::FieldStrategy::kMergeByKey) {
      const Value key_name(
          rapidjson::StringRef(meta->merge_key.data(), meta->merge_key.size()));
      for (const Value& e : v.GetArray()) {
        if (!e.IsObject() || !e.HasMember(key_name) || e[key_name].IsObject() ||
            e[key_name].IsArray()) {
          node->member = true;  // not a well-formed keyed list: atomic
          return;
        }
      }
      for (const Value& e : v.GetArray()) {
        Node& child = node->children[ItemKey(meta->merge_key, e[key_name])];
        child.member = true;
        child.item = true;
        child.value = &e;
        Members(e, path, &child, level + 1);
      }
      return;
    }
    if (meta->strategy == api::FieldStrategy::kMergePrimitives) {
      for (const Value& e : v.GetArray()) {
        if (e.IsObject() || e.IsArray()) {
          node->member = true;
          node->children.clear();
          return;
        }
        Node& child = node->children[absl::StrCat("v:", Compact(e))];
        child.member = true;
        child.item = true;
        child.value = &e;
      }
      return;
    }
    node->member = true;
  }

  static std::string ItemKey(const std::string& key, const Value& value) {
    rapidjson::Document k(rapidjson::kObjectType);
    k.AddMember(Value(key.c_str(), k.GetAllocator()),
                Value(value, k.GetAllocator()), k.GetAllocator());
    return absl::StrCat("k:", Compact(k));
  }

  const api::PatchSchema* schema_;
  FieldScope scope_;
};

// kube-apiserver's comparison of two states: leaf fields added, changed,
// removed. With `mark_created`, objects that did not exist before are
// marked as added too (FieldsV1 writes them with ".").
struct Comparison {
  Node modified, added, removed;
};

void CompareNodes(const Node* o, const Node* n, Node* modified, Node* added,
                  Node* removed, bool mark_created) {
  if (n != nullptr && n->member) {
    if (o == nullptr || !o->member) {
      added->member = true;
    } else if (!n->item && o->value != nullptr && n->value != nullptr &&
               !json::JsonDeepEqual(*o->value, *n->value)) {
      modified->member = true;
    }
  }
  if (o != nullptr && o->member && (n == nullptr || !n->member)) {
    removed->member = true;
  }
  if (mark_created && o == nullptr && n != nullptr && !n->member &&
      !n->children.empty()) {
    added->member = true;
  }
  static const std::map<std::string, Node> kNone;
  const auto& oc = o == nullptr ? kNone : o->children;
  const auto& nc = n == nullptr ? kNone : n->children;
  for (const auto& [k, child] : oc) {
    auto it = nc.find(k);
    CompareNodes(&child, it == nc.end() ? nullptr : &it->second,
                 &modified->children[k], &added->children[k],
                 &removed->children[k], mark_created);
  }
  for (const auto& [k, child] : nc) {
    if (oc.count(k) != 0) continue;
    CompareNodes(nullptr, &child, &modified->children[k], &added->children[k],
                 &removed->children[k], mark_created);
  }
}

Comparison Compare(const Node& old_set, const Node& new_set,
                   bool mark_created) {
  Comparison c;
  CompareNodes(&old_set, &new_set, &c.modified, &c.added, &c.removed,
               mark_created);
  DropEmpty(&c.modified);
  DropEmpty(&c.added);
  DropEmpty(&c.removed);
  return c;
}

// ---- FieldsV1 ----

bool ParseFieldsV1(const Value& v, Node* node) {
  if (!v.IsObject()) return false;
  if (v.MemberCount() == 0) {
    node->member = true;
    return true;
  }
  for (const auto& m : v.GetObject()) {
    const absl::string_view name = View(m.name);
    if (name == ".") {
      node->member = true;
      continue;
    }
    if (name.size() < 2 || name[1] != ':' ||
        absl::string_view("fkvi").find(name[0]) == absl::string_view::npos) {
      return false;
    }
    Node& child = node->children[std::string(name)];
    child.item = name[0] != 'f';
    if (!ParseFieldsV1(m.value, &child)) return false;
  }
  return true;
}

void WriteFieldsV1(const Node& n, Value* out, Allocator& a) {
  out->SetObject();
  if (n.member && !n.children.empty()) {
    out->AddMember(".", Value(rapidjson::kObjectType), a);
  }
  for (const auto& [k, c] : n.children) {
    if (IsEmpty(c)) continue;
    Value child;
    WriteFieldsV1(c, &child, a);
    out->AddMember(
        Value(k.c_str(), static_cast<rapidjson::SizeType>(k.size()), a), child,
        a);
  }
}

// One metadata.managedFields entry.
struct Manager {
  std::string manager;
  std::string operation;  // "Apply" or "Update"
  std::string api_version;
  std::string time;
  std::string subresource;
  Node set;

  bool Is(absl::string_view name, absl::string_view op,
          absl::string_view version, absl::string_view sub) const {
    return manager == name && operation == op && subresource == sub &&
           (op == "Apply" || api_version == version);
  }

  // How kube-apiserver names the manager in a conflict.
  std::string Display() const {
    std::string s =
        Compact(Value(rapidjson::StringRef(manager.data(), manager.size())));
    if (!subresource.empty()) {
      absl::StrAppend(&s, " with subresource ",
                      Compact(Value(rapidjson::StringRef(subresource.data(),
                                                         subresource.size()))));
    }
    if (operation == "Update") absl::StrAppend(&s, " using ", api_version);
    return s;
  }
};

const Value* Member(const Value& object, absl::string_view name) {
  if (!object.IsObject()) return nullptr;
  auto it =
      object.FindMember(Value(rapidjson::StringRef(name.data(), name.size())));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

const Value* ManagedFieldsOf(const Value& object) {
  const Value* metadata = Member(object, "metadata");
  return metadata == nullptr ? nullptr : Member(*metadata, "managedFields");
}

// The managers recorded in `list` (a managedFields value). Like
// kube-apiserver, an undecodable list counts as none.
std::vector<Manager> ParseManagers(const Value* list) {
  std::vector<Manager> out;
  if (list == nullptr || !list->IsArray()) return out;
  for (const Value& e : list->GetArray()) {
    Manager m;
    m.manager = json::StringMember(e, "manager");
    m.operation = json::StringMember(e, "operation");
    m.api_version = json::StringMember(e, "apiVersion");
    m.time = json::StringMember(e, "time");
    m.subresource = json::StringMember(e, "subresource");
    const Value* fields = Member(e, "fieldsV1");
    if (!e.IsObject() || (m.operation != "Apply" && m.operation != "Update") ||
        json::StringMember(e, "fieldsType") != "FieldsV1" ||
        fields == nullptr || !ParseFieldsV1(*fields, &m.set)) {
      return {};
    }
    DropEmpty(&m.set);
    out.push_back(std::move(m));
  }
  return out;
}

void WriteManagers(std::vector<Manager> managers, Value* object, Allocator& a) {
  managers.erase(
      std::remove_if(managers.begin(), managers.end(),
                     [](const Manager& m) { return IsEmpty(m.set); }),
      managers.end());
  std::stable_sort(
      managers.begin(), managers.end(), [](const Manager& p, const Manager& q) {
        return std::tie(p.operation, p.time, p.manager, p.api_version,
                        p.subresource) < std::tie(q.operation, q.time,
                                                  q.manager, q.api_version,
                                                  q.subresource);
      });
  if (!object->IsObject()) return;
  auto md = object->FindMember("metadata");
  if (md == object->MemberEnd()) {
    object->AddMember("metadata", Value(rapidjson::kObjectType), a);
    md = object->FindMember("metadata");
  }
  if (!md->value.IsObject()) return;
  md->value.RemoveMember("managedFields");
  if (managers.empty()) return;
  Value list(rapidjson::kArrayType);
  for (const Manager& m : managers) {
    Value e(rapidjson::kObjectType);
    e.AddMember("manager", Value(m.manager.c_str(), a), a);
    e.AddMember("operation", Value(m.operation.c_str(), a), a);
    e.AddMember("apiVersion", Value(m.api_version.c_str(), a), a);
    if (!m.time.empty()) e.AddMember("time", Value(m.time.c_str(), a), a);
    e.AddMember("fieldsType", "FieldsV1", a);
    Value fields;
    WriteFieldsV1(m.set, &fields, a);
    e.AddMember("fieldsV1", fields, a);
    if (!m.subresource.empty()) {
      e.AddMember("subresource", Value(m.subresource.c_str(), a), a);
    }
    list.PushBack(e, a);
  }
  md->value.AddMember("managedFields", list, a);
}

// ".spec.containers[name=\"a\"].image", as structured-merge-diff prints.
std::string PathString(const Path& path) {
  std::string s;
  for (const std::string& e : path) {
    const absl::string_view body = absl::string_view(e).substr(2);
    switch (e[0]) {
      case 'f':
        absl::StrAppend(&s, ".", body);
        break;
      case 'k': {
        rapidjson::Document key;
        if (!json::ParseJson(ToStd(body), &key).ok() || !key.IsObject()) {
          absl::StrAppend(&s, "[", body, "]");
          break;
        }
        std::vector<std::string> parts;
        for (const auto& m : key.GetObject()) {
          parts.push_back(absl::StrCat(View(m.name), "=", Compact(m.value)));
        }
        std::sort(parts.begin(), parts.end());
        absl::StrAppend(&s, "[", absl::StrJoin(parts, ","), "]");
        break;
      }
      case 'v':
        absl::StrAppend(&s, "[=", body, "]");
        break;
      default:
        absl::StrAppend(&s, "[", body, "]");
    }
  }
  return s;
}

// ---- Removing a field from an object ----

// The index of the element of `list` that path element `e` names, or -1.
int FindItem(const Value& list, absl::string_view e) {
  if (!list.IsArray() || e.size() < 2) return -1;
  const absl::string_view body = e.substr(2);
  if (e[0] == 'i') {
    size_t i = 0;
    for (char c : body) {
      if (!absl::ascii_isdigit(c) || i > list.Size()) return -1;
      i = i * 10 + static_cast<size_t>(c - '0');
    }
    return (body.empty() || i >= list.Size()) ? -1 : static_cast<int>(i);
  }
  rapidjson::Document want;
  if (!json::ParseJson(ToStd(body), &want).ok()) return -1;
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
    const Value& item = list[i];
    if (e[0] == 'v') {
      if (json::JsonDeepEqual(item, want)) return static_cast<int>(i);
      continue;
    }
    if (e[0] != 'k' || !want.IsObject() || !item.IsObject()) continue;
    bool match = true;
    for (const auto& m : want.GetObject()) {
      const Value* v = Member(item, View(m.name));
      if (v == nullptr || !json::JsonDeepEqual(*v, m.value)) {
        match = false;
        break;
      }
    }
    if (match) return static_cast<int>(i);
  }
  return -1;
}

// The value at `path` in `root`, or nullptr.
Value* Resolve(Value& root, const Path& path, size_t length) {
  Value* v = &root;
  for (size_t i = 0; i < length; ++i) {
    const std::string& e = path[i];
    if (e[0] == 'f') {
      if (!v->IsObject()) return nullptr;
      auto it = v->FindMember(
          Value(rapidjson::StringRef(e.data() + 2, e.size() - 2)));
      if (it == v->MemberEnd()) return nullptr;
      v = &it->value;
    } else {
      const int idx = FindItem(*v, e);
      if (idx < 0) return nullptr;
      v = &(*v)[static_cast<rapidjson::SizeType>(idx)];
    }
  }
  return v;
}

// Removes the field at `path`; returns false when it is not there.
bool RemoveAt(Value& root, const Path& path) {
  if (path.empty()) return false;
  Value* parent = Resolve(root, path, path.size() - 1);
  if (parent == nullptr) return false;
  const std::string& e = path.back();
  if (e[0] == 'f') {
    if (!parent->IsObject()) return false;
    auto it = parent->FindMember(
        Value(rapidjson::StringRef(e.data() + 2, e.size() - 2)));
    if (it == parent->MemberEnd()) return false;
    parent->EraseMember(it);
    return true;
  }
  const int idx = FindItem(*parent, e);
  if (idx < 0) return false;
  parent->Erase(parent->Begin() + idx);
  return true;
}

absl::Status CheckDepth(const Value& v, absl::string_view what) {
  if (json::JsonDepth(v) > api::kMaxJsonDepth) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " nests deeper than ", api::kMaxJsonDepth, " levels"));
  }
  return absl::OkStatus();
}

const api::PatchSchema& EmptySchema() {
  static const api::PatchSchema* const empty = new api::PatchSchema();
  return *empty;
}

}  // namespace

absl::Status ValidateFieldManager(std::string_view manager, bool apply) {
  if (manager.empty()) {
    if (apply) {
      return absl::InvalidArgumentError(
          "fieldManager: Required value: is required for apply patch");
    }
    return absl::OkStatus();
  }
  if (manager.size() > kMaxFieldManagerLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("fieldManager: Too long: may not be longer than ",
                     kMaxFieldManagerLength));
  }
  for (char c : manager) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fieldManager: Invalid value: ",
          Compact(Value(rapidjson::StringRef(manager.data(), manager.size()))),
          ": must only contain printable characters"));
    }
  }
  return absl::OkStatus();
}

std::string FieldManagerFromUserAgent(std::string_view user_agent) {
  const std::string_view prefix = user_agent.substr(0, user_agent.find('/'));
  std::string out;
  for (char c : prefix) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) continue;
    if (out.size() + 1 > kMaxFieldManagerLength) break;
    out.push_back(c);
  }
  return out;
}

absl::StatusOr<rapidjson::Document> ParseApplyConfiguration(
    std::string_view body) {
  const absl::string_view trimmed =
      absl::StripLeadingAsciiWhitespace(ToAbsl(body));
  rapidjson::Document doc;
  if (absl::StartsWith(trimmed, "{")) {
    absl::Status s = json::ParseJson(body, &doc);
    if (!s.ok()) return s;
  } else {
    absl::StatusOr<std::unique_ptr<rapidjson::Document>> yaml =
        json::YamlToJson(body);
    if (!yaml.ok()) return yaml.status();
    doc.Swap(**yaml);  // swaps the allocators too
  }
  if (!doc.IsObject()) {
    return absl::InvalidArgumentError(
        "the apply configuration must be an object");
  }
  return doc;
}

std::string ApplyConflictMessage(const std::vector<ApplyConflict>& conflicts) {
  if (conflicts.size() == 1) {
    return absl::StrCat("Apply failed with 1 conflict: conflict with ",
                        conflicts[0].manager, ": ", conflicts[0].field);
  }
  std::map<std::string, std::vector<std::string>> by_manager;
  for (const ApplyConflict& c : conflicts)
    by_manager[c.manager].push_back(c.field);
  std::vector<std::string> lines;
  for (const auto& [manager, fields] : by_manager) {
    lines.push_back(absl::StrCat("conflicts with ", manager, ":"));
    for (const std::string& f : fields) lines.push_back(absl::StrCat("- ", f));
  }
  return absl::StrCat("Apply failed with ", conflicts.size(),
                      " conflicts: ", absl::StrJoin(lines, "\n"));
}

absl::StatusOr<ApplyResult> ServerSideApply(const Value* live,
                                            const Value& config,
                                            const api::PatchSchema* schema,
                                            const ApplyOptions& options) {
  absl::Status s = ValidateFieldManager(options.field_manager, /*apply=*/true);
  if (!s.ok()) return s;
  s = CheckDepth(config, "apply configuration");
  if (s.ok() && live != nullptr) s = CheckDepth(*live, "live object");
  if (!s.ok()) return s;
  if (!config.IsObject()) {
    return absl::InvalidArgumentError(
        "the apply configuration must be an object");
  }
  const std::string api_version = json::StringMember(config, "apiVersion");
  if (api_version.empty() || json::StringMember(config, "kind").empty()) {
    return absl::InvalidArgumentError(
        "the apply configuration must set apiVersion and kind");
  }
  if (ManagedFieldsOf(config) != nullptr &&
      !ManagedFieldsOf(config)->IsNull()) {
    return absl::InvalidArgumentError("metadata.managedFields must be nil");
  }
  if (live != nullptr && !live->IsObject()) {
    return absl::InvalidArgumentError("the live object must be an object");
  }

  ApplyResult result;
  result.created = live == nullptr;
  const Value empty_object(rapidjson::kObjectType);
  const Value& base = live == nullptr ? empty_object : *live;
  rapidjson::Document& merged = result.object;
  s = api::internal::StrategicMerge(
      base, config, schema == nullptr ? EmptySchema() : *schema,
      /*directives=*/false, &merged, merged.GetAllocator());
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "apply: ", absl::StripPrefix(s.message(), "strategic merge patch: ")));
  }

  SetBuilder builder(schema, options.scope);
  std::vector<Manager> managers;
  if (live != nullptr) {
    managers = ParseManagers(ManagedFieldsOf(*live));
    const Value* list = ManagedFieldsOf(*live);
    if (managers.empty() &&
        (list == nullptr || !list->IsArray() || list->Empty())) {
      // As kube-apiserver: fields of an object nobody manages yet belong to
      // "before-first-apply".
      Manager before;
      before.manager = "before-first-apply";
      before.operation = "Update";
      before.api_version = json::StringMember(*live, "apiVersion");
      before.time = api::FormatRfc3339(options.now);
      before.set = builder.Build(*live);
      managers.push_back(std::move(before));
    }
  }
  const Node applied = builder.Build(config);
  const Node live_set = live == nullptr ? Node() : builder.Build(*live);
  Node merged_set = builder.Build(merged);
  const Comparison diff = Compare(live_set, merged_set, false);
  Node changed = diff.modified;
  UnionInto(&changed, diff.added);

  auto is_applier = [&](const Manager& m) {
    return m.Is(options.field_manager, "Apply", "", options.subresource);
  };
  for (Manager& m : managers) {
    if (is_applier(m)) continue;
    Node conflict;
    Intersect(m.set, changed, &conflict);
    DropEmpty(&conflict);
    if (IsEmpty(conflict)) continue;
    Path prefix;
    std::vector<Path> paths;
    MemberPaths(conflict, &prefix, &paths);
    for (const Path& p : paths) {
      result.conflicts.push_back({m.Display(), PathString(p)});
    }
    if (options.force) Subtract(&m.set, conflict);
  }
  if (!result.conflicts.empty() && !options.force) {
    result.object.SetNull();
    return result;
  }
  result.conflicts.clear();
  for (Manager& m : managers) Subtract(&m.set, diff.removed);

  // Fields the applier set last time and omits now go unless someone else
  // owns them.
  Node last;
  auto applier = std::find_if(managers.begin(), managers.end(), is_applier);
  if (applier != managers.end()) last = applier->set;
  Subtract(&last, applied);
  DropEmpty(&last);
  std::vector<Path> stale;
  Path prefix;
  MemberPaths(last, &prefix, &stale);
  std::sort(stale.begin(), stale.end(),
            [](const Path& a, const Path& b) { return a.size() < b.size(); });
  for (const Path& p : stale) {
    bool owned = OwnsAtOrBelow(applied, p);
    for (const Manager& m : managers) {
      if (!is_applier(m) && OwnsAtOrBelow(m.set, p)) owned = true;
    }
    if (owned || !RemoveAt(merged, p)) continue;
    // Objects and lists that the removal emptied go too, unless someone
    // owns them.
    for (size_t len = p.size() - 1; len >= 2; --len) {
      Path up(p.begin(), p.begin() + static_cast<long>(len));
      if (up.back()[0] != 'f') break;
      Value* v = Resolve(merged, up, up.size());
      const bool emptied =
          v != nullptr && ((v->IsObject() && v->MemberCount() == 0) ||
                           (v->IsArray() && v->Empty()));
      if (!emptied) break;
      bool up_owned = OwnsExactly(applied, up);
      for (const Manager& m : managers) {
        if (!is_applier(m) && OwnsExactly(m.set, up)) up_owned = true;
      }
      if (up_owned || !RemoveAt(merged, up)) break;
    }
  }

  Manager self;
  if (applier != managers.end()) {
    self = std::move(*applier);
    managers.erase(applier);
  }
  self.manager = options.field_manager;
  self.operation = "Apply";
  self.subresource = options.subresource;
  self.api_version = api_version;
  self.time = api::FormatRfc3339(options.now);
  self.set = applied;
  managers.push_back(std::move(self));
  WriteManagers(std::move(managers), &merged, merged.GetAllocator());
  return result;
}

absl::Status RecordUpdateManagedFields(const Value* old_object,
                                       rapidjson::Document* object,
                                       const api::PatchSchema* schema,
                                       const UpdateOptions& options) {
  return RecordUpdateManagedFields(old_object, object, object->GetAllocator(),
                                   schema, options);
}

absl::Status RecordUpdateManagedFields(const Value* old_object, Value* object,
                                       Allocator& allocator,
                                       const api::PatchSchema* schema,
                                       const UpdateOptions& options) {
  absl::Status s = ValidateFieldManager(options.field_manager, /*apply=*/false);
  if (!s.ok()) return s;
  if (options.field_manager.empty()) {
    return absl::InvalidArgumentError("fieldManager: Required value");
  }
  s = CheckDepth(*object, "object");
  if (s.ok() && old_object != nullptr)
    s = CheckDepth(*old_object, "old object");
  if (!s.ok()) return s;
  if (!object->IsObject()) {
    return absl::InvalidArgumentError("the object must be a JSON object");
  }

  std::vector<Manager> managers;
  const Value* sent = ManagedFieldsOf(*object);
  if (sent != nullptr && sent->IsArray() && sent->Size() == 1 &&
      (*sent)[0].IsObject() && (*sent)[0].MemberCount() == 0) {
    // `managedFields: [{}]` resets the ownership.
    WriteManagers({}, object, allocator);
    return absl::OkStatus();
  }
  if (sent != nullptr && sent->IsArray() && !sent->Empty()) {
    managers = ParseManagers(sent);
  }
  if (managers.empty() && old_object != nullptr) {
    managers = ParseManagers(ManagedFieldsOf(*old_object));
  }

  SetBuilder builder(schema, options.scope);
  const std::string api_version = json::StringMember(*object, "apiVersion");
  if (old_object == nullptr && managers.empty()) {
    // A create that names no owners: every field is added and the writer
    // is the only manager, so its set is the object's (what Compare and
    // the unions below would copy three times).
    Manager m;
    m.manager = options.field_manager;
    m.operation = "Update";
    m.api_version = api_version;
    m.subresource = options.subresource;
    m.set = builder.Build(*object);
    DropEmpty(&m.set);
    m.time = api::FormatRfc3339(options.now);
    managers.push_back(std::move(m));
    WriteManagers(std::move(managers), object, allocator);
    return absl::OkStatus();
  }
  const Node old_set =
      old_object == nullptr ? Node() : builder.Build(*old_object);
  const Node new_set = builder.Build(*object);
  const Comparison diff = Compare(old_set, new_set, old_object != nullptr);
  Node changed = diff.modified;
  UnionInto(&changed, diff.added);

  auto is_self = [&](const Manager& m) {
    return m.Is(options.field_manager, "Update", api_version,
                options.subresource);
  };
  for (Manager& m : managers) {
    if (!is_self(m)) Subtract(&m.set, changed);
    Subtract(&m.set, diff.removed);
    DropEmpty(&m.set);
  }
  auto self = std::find_if(managers.begin(), managers.end(), is_self);
  if (self == managers.end()) {
    Manager m;
    m.manager = options.field_manager;
    m.operation = "Update";
    m.api_version = api_version;
    m.subresource = options.subresource;
    managers.push_back(std::move(m));
    self = managers.end() - 1;
  }
  UnionInto(&self->set, changed);
  DropEmpty(&self->set);
  // As kube-apiserver: a write that changed or added any field stamps its
  // manager's time, whether or not the manager owned those fields already.
  if (self->time.empty() || !IsEmpty(changed)) {
    self->time = api::FormatRfc3339(options.now);
  }
  WriteManagers(std::move(managers), object, allocator);
  return absl::OkStatus();
}

}  // namespace apiserver
}  // namespace kcr
