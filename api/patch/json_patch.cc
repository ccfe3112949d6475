#include "api/patch/json_patch.h"

#include <limits>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace {

using Allocator = rapidjson::Value::AllocatorType;
using Tokens = std::vector<std::string>;

std::string_view View(const rapidjson::Value& s) {
  return std::string_view(s.GetString(), s.GetStringLength());
}

rapidjson::Value NameRef(std::string_view s) {
  return rapidjson::Value(rapidjson::StringRef(
      s.data(), static_cast<rapidjson::SizeType>(s.size())));
}

// Printable and short: paths come from untrusted patches.
std::string Printable(std::string_view s) {
  constexpr size_t kMaxShown = 80;
  if (s.size() > kMaxShown)
    return absl::StrCat(absl::CHexEscape(ToAbsl(s.substr(0, kMaxShown))),
                        "...");
  return absl::CHexEscape(ToAbsl(s));
}

// RFC 6901 array index: "0", or digits without a leading zero. Returns
// false for anything else, including "-" and values beyond SizeType.
bool ParseIndex(std::string_view token, rapidjson::SizeType* index) {
  if (token.empty() || token.size() > 10) return false;
  if (token.size() > 1 && token[0] == '0') return false;
  uint64_t v = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > std::numeric_limits<rapidjson::SizeType>::max()) return false;
  *index = static_cast<rapidjson::SizeType>(v);
  return true;
}

// Approximate heap cost of a deep copy of `v`, without recursion.
size_t CopyCost(const rapidjson::Value& v) {
  size_t bytes = 0;
  std::vector<const rapidjson::Value*> stack = {&v};
  while (!stack.empty()) {
    const rapidjson::Value* x = stack.back();
    stack.pop_back();
    bytes += sizeof(rapidjson::Value);
    if (x->IsString()) {
      bytes += x->GetStringLength();
    } else if (x->IsArray()) {
      for (const rapidjson::Value& e : x->GetArray()) stack.push_back(&e);
    } else if (x->IsObject()) {
      for (const auto& m : x->GetObject()) {
        bytes += sizeof(rapidjson::Value) + m.name.GetStringLength();
        stack.push_back(&m.value);
      }
    }
  }
  return bytes;
}

class Applier {
 public:
  Applier(rapidjson::Document* doc, const JsonPatchOptions& options)
      : doc_(*doc), allocator_(doc->GetAllocator()), options_(options) {}

  absl::Status Apply(const rapidjson::Value& patch) {
    if (!patch.IsArray()) {
      return absl::InvalidArgumentError(
          "JSON patch must be an array of operations");
    }
    for (rapidjson::SizeType i = 0; i < patch.Size(); ++i) {
      absl::Status s = ApplyOne(patch[i]);
      if (!s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("operation ", i, op_label_, ": ", s.message()));
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status ApplyOne(const rapidjson::Value& op) {
    op_label_.clear();
    if (!op.IsObject()) return absl::InvalidArgumentError("not an object");
    auto op_it = op.FindMember("op");
    if (op_it == op.MemberEnd())
      return absl::InvalidArgumentError("missing \"op\"");
    if (!op_it->value.IsString()) {
      return absl::InvalidArgumentError("\"op\" must be a string");
    }
    const std::string_view name = View(op_it->value);
    // RFC 6902 A.13: an operation naming a member twice is invalid (RapidJSON
    // keeps duplicates, and FindMember would silently pick the first).
    int op_count = 0, path_count = 0, from_count = 0, value_count = 0;
    for (const auto& m : op.GetObject()) {
      const std::string_view key = View(m.name);
      op_count += key == "op";
      path_count += key == "path";
      from_count += key == "from";
      value_count += key == "value";
    }
    if (op_count > 1 || path_count > 1 || from_count > 1 || value_count > 1) {
      return absl::InvalidArgumentError("duplicate member in operation");
    }
    auto path_it = op.FindMember("path");
    if (path_it != op.MemberEnd() && path_it->value.IsString()) {
      op_label_ = absl::StrCat(" (", Printable(name), " ",
                               Printable(View(path_it->value)), ")");
    } else {
      op_label_ = absl::StrCat(" (", Printable(name), ")");
    }
    if (path_it == op.MemberEnd()) {
      return absl::InvalidArgumentError("missing \"path\"");
    }
    if (!path_it->value.IsString()) {
      return absl::InvalidArgumentError("\"path\" must be a string");
    }
    absl::StatusOr<Tokens> path = ParseJsonPointer(View(path_it->value));
    if (!path.ok()) return path.status();

    auto value_it = op.FindMember("value");
    const rapidjson::Value* value =
        value_it == op.MemberEnd() ? nullptr : &value_it->value;
    auto from_it = op.FindMember("from");
    absl::StatusOr<Tokens> from = Tokens();
    if (name == "move" || name == "copy") {
      if (from_it == op.MemberEnd()) {
        return absl::InvalidArgumentError("missing \"from\"");
      }
      if (!from_it->value.IsString()) {
        return absl::InvalidArgumentError("\"from\" must be a string");
      }
      from = ParseJsonPointer(View(from_it->value));
      if (!from.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("\"from\": ", from.status().message()));
      }
    }
    if ((name == "add" || name == "replace" || name == "test") &&
        value == nullptr) {
      return absl::InvalidArgumentError("missing \"value\"");
    }

    if (name == "add") {
      rapidjson::Value copy(*value, allocator_);
      return Add(*path, copy);
    }
    if (name == "remove") {
      rapidjson::Value removed;
      return Remove(*path, &removed);
    }
    if (name == "replace") {
      rapidjson::Value* target = Resolve(*path);
      if (target == nullptr) return NotFound();
      if (absl::Status s = CheckDepth(path->size(), *value); !s.ok()) return s;
      target->CopyFrom(*value, allocator_);
      return absl::OkStatus();
    }
    if (name == "move") {
      if (Resolve(*from) == nullptr) return NotFound("\"from\" ");
      if (*from == *path) return absl::OkStatus();
      if (from->size() < path->size() &&
          std::equal(from->begin(), from->end(), path->begin())) {
        return absl::InvalidArgumentError(
            "cannot move a value into one of its own children");
      }
      rapidjson::Value moved;
      absl::Status s = Remove(*from, &moved);
      if (!s.ok()) return s;
      return Add(*path, moved);
    }
    if (name == "copy") {
      const rapidjson::Value* source = Resolve(*from);
      if (source == nullptr) return NotFound("\"from\" ");
      if (options_.max_copied_bytes > 0) {
        copied_bytes_ += CopyCost(*source);
        if (copied_bytes_ > options_.max_copied_bytes) {
          return absl::InvalidArgumentError(
              absl::StrCat("copies exceed the limit of ",
                           options_.max_copied_bytes, " bytes"));
        }
      }
      if (absl::Status s = CheckDepth(path->size(), *source); !s.ok()) return s;
      rapidjson::Value copy(*source, allocator_);
      return Add(*path, copy);
    }
    if (name == "test") {
      const rapidjson::Value* target = Resolve(*path);
      if (target == nullptr) return NotFound();
      if (!json::JsonDeepEqual(*target, *value)) {
        return absl::InvalidArgumentError("test failed: value differs");
      }
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        "\"op\" must be one of add, remove, replace, move, copy, test");
  }

  static absl::Status NotFound(std::string_view which = "") {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(which), "path not found"));
  }

  // Depth of a value placed under `tokens`: checked before any recursive
  // copy so neither the copy nor later serialisation can overflow the stack.
  absl::Status CheckDepth(size_t tokens, const rapidjson::Value& v) const {
    const int limit = options_.max_depth;
    if (tokens > static_cast<size_t>(limit) ||
        json::JsonDepth(v, limit) > limit - static_cast<int>(tokens)) {
      return absl::InvalidArgumentError(
          absl::StrCat("result would nest deeper than ", limit, " levels"));
    }
    return absl::OkStatus();
  }

  rapidjson::Value* Resolve(const Tokens& tokens) {
    rapidjson::Value* v = &doc_;
    for (const std::string& t : tokens) {
      v = Child(v, t);
      if (v == nullptr) return nullptr;
    }
    return v;
  }

  static rapidjson::Value* Child(rapidjson::Value* v, std::string_view token) {
    if (v->IsObject()) {
      if (token.size() > std::numeric_limits<rapidjson::SizeType>::max()) {
        return nullptr;
      }
      auto it = v->FindMember(NameRef(token));
      return it == v->MemberEnd() ? nullptr : &it->value;
    }
    if (v->IsArray()) {
      rapidjson::SizeType index;
      if (!ParseIndex(token, &index) || index >= v->Size()) return nullptr;
      return &(*v)[index];
    }
    return nullptr;
  }

  // Moves `value` (allocated from the document's allocator) into place.
  absl::Status Add(const Tokens& path, rapidjson::Value& value) {
    if (absl::Status s = CheckDepth(path.size(), value); !s.ok()) return s;
    if (path.empty()) {
      static_cast<rapidjson::Value&>(doc_) = std::move(value);
      return absl::OkStatus();
    }
    rapidjson::Value* parent = ResolveParent(path);
    if (parent == nullptr) return NotFound();
    const std::string& last = path.back();
    if (parent->IsObject()) {
      if (last.size() > std::numeric_limits<rapidjson::SizeType>::max()) {
        return NotFound();
      }
      auto it = parent->FindMember(NameRef(last));
      if (it != parent->MemberEnd()) {
        it->value = std::move(value);
      } else {
        parent->AddMember(
            rapidjson::Value(last.data(),
                             static_cast<rapidjson::SizeType>(last.size()),
                             allocator_),
            value, allocator_);
      }
      return absl::OkStatus();
    }
    if (parent->IsArray()) {
      const rapidjson::SizeType size = parent->Size();
      rapidjson::SizeType index = size;
      if (last != "-") {
        if (!ParseIndex(last, &index)) {
          return absl::InvalidArgumentError(
              absl::StrCat("invalid array index \"", Printable(last), "\""));
        }
        if (index > size) {
          return absl::InvalidArgumentError(absl::StrCat(
              "array index ", index, " out of bounds (size ", size, ")"));
        }
      }
      if (size == std::numeric_limits<rapidjson::SizeType>::max()) {
        return absl::InvalidArgumentError("array is full");
      }
      // RapidJSON has no insert: append, then rotate into place.
      parent->PushBack(value, allocator_);
      for (rapidjson::SizeType i = size; i > index; --i) {
        (*parent)[i].Swap((*parent)[i - 1]);
      }
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError("parent is not an object or array");
  }

  absl::Status Remove(const Tokens& path, rapidjson::Value* removed) {
    if (path.empty()) {
      return absl::InvalidArgumentError("cannot remove the whole document");
    }
    rapidjson::Value* parent = ResolveParent(path);
    if (parent == nullptr) return NotFound();
    const std::string& last = path.back();
    if (parent->IsObject()) {
      if (last.size() > std::numeric_limits<rapidjson::SizeType>::max()) {
        return NotFound();
      }
      auto it = parent->FindMember(NameRef(last));
      if (it == parent->MemberEnd()) return NotFound();
      *removed = std::move(it->value);
      parent->EraseMember(it);
      return absl::OkStatus();
    }
    if (parent->IsArray()) {
      rapidjson::SizeType index;
      if (!ParseIndex(last, &index)) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid array index \"", Printable(last), "\""));
      }
      if (index >= parent->Size()) {
        return absl::InvalidArgumentError(absl::StrCat("array index ", index,
                                                       " out of bounds (size ",
                                                       parent->Size(), ")"));
      }
      *removed = std::move((*parent)[index]);
      parent->Erase(parent->Begin() + index);
      return absl::OkStatus();
    }
    return NotFound();
  }

  rapidjson::Value* ResolveParent(const Tokens& path) {
    rapidjson::Value* v = &doc_;
    for (size_t i = 0; i + 1 < path.size(); ++i) {
      v = Child(v, path[i]);
      if (v == nullptr) return nullptr;
    }
    return v;
  }

  rapidjson::Document& doc_;
  Allocator& allocator_;
  const JsonPatchOptions& options_;
  size_t copied_bytes_ = 0;
  std::string op_label_;
};

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseJsonPointer(
    std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON pointer \"",
                                                   Printable(pointer),
                                                   "\": must start with '/'"));
  }
  std::string token;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
      continue;
    }
    const char c = pointer[i];
    if (c != '~') {
      token.push_back(c);
      continue;
    }
    if (i + 1 < pointer.size() &&
        (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
      token.push_back(pointer[i + 1] == '0' ? '~' : '/');
      ++i;
      continue;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("invalid JSON pointer \"", Printable(pointer),
                     "\": '~' must be followed by '0' or '1'"));
  }
  return tokens;
}

const rapidjson::Value* ResolveJsonPointer(const rapidjson::Value& root,
                                           std::string_view pointer) {
  absl::StatusOr<std::vector<std::string>> tokens = ParseJsonPointer(pointer);
  if (!tokens.ok()) return nullptr;
  const rapidjson::Value* v = &root;
  for (const std::string& t : *tokens) {
    if (v->IsObject()) {
      if (t.size() > std::numeric_limits<rapidjson::SizeType>::max())
        return nullptr;
      auto it = v->FindMember(NameRef(t));
      if (it == v->MemberEnd()) return nullptr;
      v = &it->value;
    } else if (v->IsArray()) {
      rapidjson::SizeType index;
      if (!ParseIndex(t, &index) || index >= v->Size()) return nullptr;
      v = &(*v)[index];
    } else {
      return nullptr;
    }
  }
  return v;
}

absl::Status ApplyJsonPatch(const rapidjson::Value& patch,
                            rapidjson::Document* doc,
                            const JsonPatchOptions& options) {
  absl::StatusOr<rapidjson::Document> result =
      ApplyJsonPatch(*doc, patch, options);
  if (!result.ok()) return result.status();
  doc->Swap(*result);
  return absl::OkStatus();
}

absl::StatusOr<rapidjson::Document> ApplyJsonPatch(
    const rapidjson::Value& target, const rapidjson::Value& patch,
    const JsonPatchOptions& options) {
  if (json::JsonDepth(target, options.max_depth) > options.max_depth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target nests deeper than ", options.max_depth, " levels"));
  }
  if (json::JsonDepth(patch, options.max_depth) > options.max_depth) {
    return absl::InvalidArgumentError(absl::StrCat(
        "JSON patch nests deeper than ", options.max_depth, " levels"));
  }
  // Work on a copy: a failing operation leaves the caller's document as it
  // was, whatever the operations before it did.
  rapidjson::Document work;
  work.CopyFrom(target, work.GetAllocator());
  Applier applier(&work, options);
  absl::Status s = applier.Apply(patch);
  if (!s.ok()) return s;
  return work;
}

absl::StatusOr<std::string> ApplyJsonPatch(std::string_view target_json,
                                           std::string_view patch_json,
                                           const JsonPatchOptions& options) {
  rapidjson::Document target, patch;
  if (absl::Status s = json::ParseJson(target_json, &target, options.max_depth);
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("target: ", s.message()));
  }
  if (absl::Status s = json::ParseJson(patch_json, &patch, options.max_depth);
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON patch: ", s.message()));
  }
  absl::StatusOr<rapidjson::Document> result =
      ApplyJsonPatch(target, patch, options);
  if (!result.ok()) return result.status();
  return json::JsonToString(*result);
}

}  // namespace api
}  // namespace kcr
