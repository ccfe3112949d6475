#include "runtime/handlers/diff.h"

#include <utility>

#include "absl/strings/str_join.h"
#include "api/json/json_util.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr::handlers {
namespace {

bool Absent(const rapidjson::Value* v) { return v == nullptr || v->IsNull(); }

const rapidjson::Value* Member(const rapidjson::Value& object,
                               const std::string& key) {
  auto it = object.FindMember(
      rapidjson::Value(rapidjson::StringRef(key.data(), key.size())));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string KeyOf(const rapidjson::Value& name) {
  return std::string(name.GetString(), name.GetStringLength());
}

// Appends to `ops` what turns `a` into `b` under `path`.
void DiffInto(const rapidjson::Value* a, const rapidjson::Value* b,
              FieldPath& path, std::vector<DiffOp>& ops) {
  if (Absent(a) && Absent(b)) return;
  if (Absent(a)) {
    ops.push_back({DiffKind::kAdd, path, nullptr, b});
    return;
  }
  if (Absent(b)) {
    ops.push_back({DiffKind::kRemove, path, a, nullptr});
    return;
  }
  if (a->IsObject() && b->IsObject()) {
    for (const auto& m : b->GetObject()) {
      std::string key = KeyOf(m.name);
      if (Member(*a, key) != nullptr) continue;
      path.push_back(std::move(key));
      DiffInto(nullptr, &m.value, path, ops);
      path.pop_back();
    }
    for (const auto& m : a->GetObject()) {
      std::string key = KeyOf(m.name);
      if (Member(*b, key) != nullptr) continue;
      path.push_back(std::move(key));
      DiffInto(&m.value, nullptr, path, ops);
      path.pop_back();
    }
    for (const auto& m : a->GetObject()) {
      std::string key = KeyOf(m.name);
      const rapidjson::Value* other = Member(*b, key);
      if (other == nullptr) continue;
      path.push_back(std::move(key));
      DiffInto(&m.value, other, path, ops);
      path.pop_back();
    }
    return;
  }
  if (json::JsonDeepEqual(*a, *b)) return;
  ops.push_back({DiffKind::kChange, path, a, b});
}

bool HasPrefix(const FieldPath& path, const FieldPath& prefix) {
  if (prefix.size() > path.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (path[i] != prefix[i]) return false;
  }
  return true;
}

}  // namespace

FieldPath ParseFieldPath(std::string_view dotted) {
  FieldPath path;
  if (dotted.empty()) return path;
  size_t start = 0;
  while (true) {
    const size_t dot = dotted.find('.', start);
    path.emplace_back(dotted.substr(start, dot - start));
    if (dot == std::string_view::npos) return path;
    start = dot + 1;
  }
}

std::string FormatFieldPath(const FieldPath& path) {
  return absl::StrJoin(path, ".");
}

std::string_view DiffKindName(DiffKind kind) {
  switch (kind) {
    case DiffKind::kAdd:
      return "add";
    case DiffKind::kChange:
      return "change";
    case DiffKind::kRemove:
      return "remove";
  }
  return "change";
}

const rapidjson::Value* FindField(const rapidjson::Value* doc,
                                  const FieldPath& path) {
  const rapidjson::Value* v = doc;
  for (const std::string& key : path) {
    if (v == nullptr || !v->IsObject()) return nullptr;
    v = Member(*v, key);
  }
  return v;
}

Diff Diff::Compute(std::shared_ptr<const rapidjson::Document> old_doc,
                   std::shared_ptr<const rapidjson::Document> new_doc) {
  Diff d;
  d.old_doc_ = std::move(old_doc);
  d.new_doc_ = std::move(new_doc);
  FieldPath path;
  DiffInto(d.old_doc_.get(), d.new_doc_.get(), path, d.ops_);
  return d;
}

Diff Diff::Reduce(const FieldPath& path) const {
  Diff d;
  d.old_doc_ = old_doc_;
  d.new_doc_ = new_doc_;
  for (const DiffOp& op : ops_) {
    if (HasPrefix(op.path, path)) {
      // The operation is at or under `path`: keep it, relative to it.
      d.ops_.push_back({op.kind,
                        FieldPath(op.path.begin() + path.size(), op.path.end()),
                        op.old_value, op.new_value});
    } else if (HasPrefix(path, op.path)) {
      // An ancestor of `path` changed: diff the values at `path` inside it.
      const FieldPath tail(path.begin() + op.path.size(), path.end());
      FieldPath relative;
      DiffInto(FindField(op.old_value, tail), FindField(op.new_value, tail),
               relative, d.ops_);
    }
  }
  return d;
}

std::string Diff::ToJson() const {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartArray();
  for (const DiffOp& op : ops_) {
    writer.StartArray();
    const std::string_view kind = DiffKindName(op.kind);
    writer.String(kind.data(), static_cast<rapidjson::SizeType>(kind.size()));
    writer.StartArray();
    for (const std::string& key : op.path) {
      writer.String(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    }
    writer.EndArray();
    for (const rapidjson::Value* v : {op.old_value, op.new_value}) {
      if (v == nullptr) {
        writer.Null();
      } else {
        v->Accept(writer);
      }
    }
    writer.EndArray();
  }
  writer.EndArray();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace kcr::handlers
