#include "api/object_builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/internal/arena_planner.h"
#include "api/internal/json_value.h"
#include "api/json_pointer.h"
#include "base/string_view.h"
#include "rapidjson/error/en.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace api {

using json_pointer::FindKey;
using json_pointer::FindPointer;
using json_pointer::NextToken;
using json_pointer::ParseIndex;
using object_internal::Emit;
using object_internal::EraseMember;
using object_internal::Invalid;
using object_internal::MakePlan;
using object_internal::MakeString;
using object_internal::MayHoldSurrogateEscape;
using object_internal::Plan;
using object_internal::Quote;
using object_internal::ReplaceLoneSurrogates;
using object_internal::SetMember;
using object_internal::StringOf;
using object_internal::StringSink;
using object_internal::WriteJson;
using rapidjson::Value;

namespace {
constexpr size_t kBuilderChunk = 4096;

// Whether `v` nests no deeper than kMaxJsonDepth below `depth`: the one
// check a copy into a builder needs before Emit recurses. MakePlan checks
// the same while it sizes an arena, which a builder's pool does not need.
// Recursion stops at the limit.
bool NestsWithinLimit(const Value& v, int depth) {
  if (!v.IsObject() && !v.IsArray()) return true;
  if (++depth > kMaxJsonDepth) return false;
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      if (!NestsWithinLimit(m.value, depth)) return false;
    }
  } else {
    for (const Value& e : v.GetArray()) {
      if (!NestsWithinLimit(e, depth)) return false;
    }
  }
  return true;
}

absl::Status CheckDepth(const Value& v) {
  if (NestsWithinLimit(v, 0)) return absl::OkStatus();
  return Invalid(
      absl::StrCat("JSON nests deeper than ", kMaxJsonDepth, " levels"));
}
}  // namespace

ObjectBuilder::ObjectBuilder()
    : pool_(std::make_unique<rapidjson::MemoryPoolAllocator<>>(kBuilderChunk)),
      doc_(std::make_unique<rapidjson::Document>(rapidjson::kObjectType,
                                                 pool_.get())) {
  doc_->AddMember("metadata", Value(rapidjson::kObjectType), *pool_);
}

ObjectBuilder::ObjectBuilder(std::string_view api_version,
                             std::string_view kind)
    : pool_(std::make_unique<rapidjson::MemoryPoolAllocator<>>(kBuilderChunk)),
      doc_(std::make_unique<rapidjson::Document>(rapidjson::kObjectType,
                                                 pool_.get())) {
  doc_->AddMember("apiVersion", MakeString(api_version, *pool_), *pool_);
  doc_->AddMember("kind", MakeString(kind, *pool_), *pool_);
  doc_->AddMember("metadata", Value(rapidjson::kObjectType), *pool_);
}

ObjectBuilder::ObjectBuilder(const Object& object)
    : pool_(std::make_unique<rapidjson::MemoryPoolAllocator<>>(kBuilderChunk)),
      doc_(std::make_unique<rapidjson::Document>(pool_.get())) {
  // Object trees hold strings by reference into their arena, so copy every
  // string (RapidJSON's CopyFrom would keep those references).
  StringSink sink;
  auto generator = [&](rapidjson::Document& handler) {
    return Emit(object.json(), handler, nullptr, sink);
  };
  doc_->Populate(generator);
}

absl::StatusOr<ObjectBuilder> ObjectBuilder::ReplacingMember(
    const Object& object, std::string_view key, const Value* replacement) {
  if (replacement != nullptr) {
    // Emit recurses: the replacement's depth is checked first (the
    // object's was, when it was built).
    if (absl::Status s = CheckDepth(*replacement); !s.ok()) return s;
  }
  ObjectBuilder b;
  StringSink sink;
  auto generator = [&](rapidjson::Document& handler) {
    if (!handler.StartObject()) return false;
    rapidjson::SizeType count = 0;
    bool replaced = false;
    for (const auto& m : object.json().GetObject()) {
      const Value* value = &m.value;
      if (!replaced && StringOf(m.name) == key) {
        replaced = true;
        value = replacement;
        if (value == nullptr) continue;
      }
      if (!object_internal::EmitString(m.name, handler, sink,
                                       /*is_key=*/true) ||
          !Emit(*value, handler, nullptr, sink)) {
        return false;
      }
      ++count;
    }
    if (!replaced && replacement != nullptr) {
      if (!handler.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()),
                       /*copy=*/true) ||
          !Emit(*replacement, handler, nullptr, sink)) {
        return false;
      }
      ++count;
    }
    return handler.EndObject(count);
  };
  b.doc_->Populate(generator);
  return b;
}

ObjectBuilder::~ObjectBuilder() = default;

absl::StatusOr<ObjectBuilder> ObjectBuilder::FromJson(std::string_view json) {
  ObjectBuilder builder;
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag |
                              rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseFullPrecisionFlag;
  rapidjson::MemoryStream stream(json.data(), json.size());
  builder.doc_->ParseStream<kFlags, rapidjson::UTF8<>>(stream);
  if (builder.doc_->HasParseError()) {
    return Invalid(absl::StrCat(
        "invalid JSON at offset ", builder.doc_->GetErrorOffset(), ": ",
        rapidjson::GetParseError_En(builder.doc_->GetParseError())));
  }
  if (MayHoldSurrogateEscape(json)) ReplaceLoneSurrogates(*builder.doc_);
  if (!builder.doc_->IsObject()) {
    builder.doc_->SetObject();
    return Invalid("top level is not an object");
  }
  Plan plan;
  if (absl::Status s = MakePlan(*builder.doc_, nullptr, &plan); !s.ok()) {
    // Drop the tree: later recursive walks must not meet it.
    builder.doc_->SetObject();
    return s;
  }
  return builder;
}

Value& ObjectBuilder::ObjectMember(Value& parent, std::string_view key) {
  auto it = FindKey(parent, key);
  if (it == parent.MemberEnd()) {
    parent.AddMember(MakeString(key, *pool_), Value(rapidjson::kObjectType),
                     *pool_);
    return parent.MemberEnd()[-1].value;
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

Value& ObjectBuilder::Metadata() { return ObjectMember(*doc_, "metadata"); }

ObjectBuilder& ObjectBuilder::SetApiVersion(std::string_view v) {
  SetMember(*doc_, "apiVersion", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetKind(std::string_view v) {
  SetMember(*doc_, "kind", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetName(std::string_view v) {
  SetMember(Metadata(), "name", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetGenerateName(std::string_view v) {
  SetMember(Metadata(), "generateName", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetNamespace(std::string_view v) {
  SetMember(Metadata(), "namespace", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetUid(std::string_view v) {
  SetMember(Metadata(), "uid", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetResourceVersion(std::string_view v) {
  SetMember(Metadata(), "resourceVersion", MakeString(v, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetGeneration(int64_t v) {
  SetMember(Metadata(), "generation", Value(static_cast<int64_t>(v)), *pool_);
  return *this;
}

ObjectBuilder& ObjectBuilder::SetLabel(std::string_view key,
                                       std::string_view value) {
  SetMember(ObjectMember(Metadata(), "labels"), key, MakeString(value, *pool_),
            *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::RemoveLabel(std::string_view key) {
  EraseMember(ObjectMember(Metadata(), "labels"), key);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetLabels(
    const std::map<std::string, std::string>& labels) {
  Value& map = ObjectMember(Metadata(), "labels");
  map.RemoveAllMembers();
  for (const auto& [k, v] : labels) {
    map.AddMember(MakeString(k, *pool_), MakeString(v, *pool_), *pool_);
  }
  return *this;
}
ObjectBuilder& ObjectBuilder::SetAnnotation(std::string_view key,
                                            std::string_view value) {
  SetMember(ObjectMember(Metadata(), "annotations"), key,
            MakeString(value, *pool_), *pool_);
  return *this;
}
ObjectBuilder& ObjectBuilder::RemoveAnnotation(std::string_view key) {
  EraseMember(ObjectMember(Metadata(), "annotations"), key);
  return *this;
}
ObjectBuilder& ObjectBuilder::SetAnnotations(
    const std::map<std::string, std::string>& annotations) {
  Value& map = ObjectMember(Metadata(), "annotations");
  map.RemoveAllMembers();
  for (const auto& [k, v] : annotations) {
    map.AddMember(MakeString(k, *pool_), MakeString(v, *pool_), *pool_);
  }
  return *this;
}

namespace {
Value& ArrayMember(Value& parent, std::string_view key,
                   rapidjson::MemoryPoolAllocator<>& a) {
  auto it = FindKey(parent, key);
  if (it == parent.MemberEnd()) {
    parent.AddMember(MakeString(key, a), Value(rapidjson::kArrayType), a);
    return parent.MemberEnd()[-1].value;
  }
  if (!it->value.IsArray()) it->value.SetArray();
  return it->value;
}
}  // namespace

ObjectBuilder& ObjectBuilder::AddFinalizer(std::string_view finalizer) {
  Value& list = ArrayMember(Metadata(), "finalizers", *pool_);
  for (const Value& f : list.GetArray()) {
    if (f.IsString() && StringOf(f) == finalizer) return *this;
  }
  list.PushBack(MakeString(finalizer, *pool_), *pool_);
  return *this;
}

ObjectBuilder& ObjectBuilder::RemoveFinalizer(std::string_view finalizer) {
  Value& list = ArrayMember(Metadata(), "finalizers", *pool_);
  for (auto it = list.Begin(); it != list.End();) {
    if (it->IsString() && StringOf(*it) == finalizer) {
      it = list.Erase(it);
    } else {
      ++it;
    }
  }
  return *this;
}

ObjectBuilder& ObjectBuilder::SetFinalizers(
    const std::vector<std::string>& finalizers) {
  Value& list = ArrayMember(Metadata(), "finalizers", *pool_);
  list.Clear();
  for (const std::string& f : finalizers) {
    list.PushBack(MakeString(f, *pool_), *pool_);
  }
  return *this;
}

namespace {
Value OwnerReferenceJson(const OwnerReferenceView& ref,
                         rapidjson::MemoryPoolAllocator<>& a) {
  Value v(rapidjson::kObjectType);
  v.AddMember("apiVersion", MakeString(ref.api_version, a), a);
  v.AddMember("kind", MakeString(ref.kind, a), a);
  v.AddMember("name", MakeString(ref.name, a), a);
  v.AddMember("uid", MakeString(ref.uid, a), a);
  if (ref.controller) v.AddMember("controller", true, a);
  if (ref.block_owner_deletion) v.AddMember("blockOwnerDeletion", true, a);
  return v;
}
}  // namespace

ObjectBuilder& ObjectBuilder::AddOwnerReference(const OwnerReferenceView& ref) {
  Value& list = ArrayMember(Metadata(), "ownerReferences", *pool_);
  Value json = OwnerReferenceJson(ref, *pool_);
  for (Value& existing : list.GetArray()) {
    if (!existing.IsObject()) continue;
    auto uid = existing.FindMember("uid");
    if (uid != existing.MemberEnd() && uid->value.IsString() &&
        StringOf(uid->value) == ref.uid) {
      existing = json;
      return *this;
    }
  }
  list.PushBack(json, *pool_);
  return *this;
}

ObjectBuilder& ObjectBuilder::RemoveOwnerReference(std::string_view uid) {
  Value& list = ArrayMember(Metadata(), "ownerReferences", *pool_);
  for (auto it = list.Begin(); it != list.End();) {
    auto u = it->IsObject() ? it->FindMember("uid") : Value::MemberIterator();
    if (it->IsObject() && u != it->MemberEnd() && u->value.IsString() &&
        StringOf(u->value) == uid) {
      it = list.Erase(it);
    } else {
      ++it;
    }
  }
  return *this;
}

ObjectBuilder& ObjectBuilder::SetOwnerReferences(
    const std::vector<OwnerReferenceView>& refs) {
  Value& list = ArrayMember(Metadata(), "ownerReferences", *pool_);
  list.Clear();
  for (const auto& ref : refs)
    list.PushBack(OwnerReferenceJson(ref, *pool_), *pool_);
  return *this;
}

Value* ObjectBuilder::Resolve(std::string_view pointer, bool create,
                              absl::Status* status) {
  // Resolves the parent of the last token; the caller handles the last.
  Value* v = doc_.get();
  std::string buffer;
  std::string_view token;
  // Creating levels one per token must not build a tree deeper than any
  // Object may be (ToJson and copies recurse over it).
  if (create && static_cast<size_t>(std::count(pointer.begin(), pointer.end(),
                                               '/')) >= kMaxJsonDepth) {
    *status = Invalid("JSON pointer nests too deep");
    return nullptr;
  }
  while (!pointer.empty()) {
    if (!NextToken(&pointer, &buffer, &token)) {
      *status = Invalid("malformed JSON pointer");
      return nullptr;
    }
    if (v->IsObject()) {
      auto it = FindKey(*v, token);
      if (it == v->MemberEnd()) {
        if (!create) return nullptr;
        v->AddMember(MakeString(token, *pool_), Value(rapidjson::kObjectType),
                     *pool_);
        v = &v->MemberEnd()[-1].value;
      } else {
        v = &it->value;
      }
    } else if (v->IsArray()) {
      size_t index;
      if (!ParseIndex(token, &index) || index >= v->Size()) {
        *status = Invalid(
            absl::StrCat("array index \"", Quote(token), "\" out of range"));
        return nullptr;
      }
      v = &(*v)[static_cast<rapidjson::SizeType>(index)];
    } else {
      *status = Invalid(absl::StrCat("\"", Quote(token),
                                     "\": parent is not an object or array"));
      return nullptr;
    }
  }
  return v;
}

absl::Status ObjectBuilder::SetValue(std::string_view pointer, Value&& value) {
  if (pointer.empty()) {
    if (!value.IsObject()) return Invalid("top level must be an object");
    static_cast<Value&>(*doc_) = value;
    return absl::OkStatus();
  }
  size_t slash = pointer.rfind('/');
  if (pointer[0] != '/') return Invalid("malformed JSON pointer");
  std::string_view parent_ptr = pointer.substr(0, slash);
  std::string_view last = pointer.substr(slash);
  absl::Status status;
  Value* parent = Resolve(parent_ptr, /*create=*/true, &status);
  if (parent == nullptr) return status;
  std::string buffer;
  std::string_view token;
  if (!NextToken(&last, &buffer, &token)) {
    return Invalid("malformed JSON pointer");
  }
  if (parent->IsObject()) {
    SetMember(*parent, token, std::move(value), *pool_);
    return absl::OkStatus();
  }
  if (parent->IsArray()) {
    size_t index;
    if (token == "-") {
      parent->PushBack(value, *pool_);
      return absl::OkStatus();
    }
    if (!ParseIndex(token, &index) || index > parent->Size()) {
      return Invalid(
          absl::StrCat("array index \"", Quote(token), "\" out of range"));
    }
    if (index == parent->Size()) {
      parent->PushBack(value, *pool_);
    } else {
      (*parent)[static_cast<rapidjson::SizeType>(index)] = value;
    }
    return absl::OkStatus();
  }
  return Invalid(
      absl::StrCat("\"", Quote(token), "\": parent is not an object or array"));
}

absl::Status ObjectBuilder::Set(std::string_view pointer, const Value& value) {
  Value copy;
  StringSink sink;
  rapidjson::Document tmp(pool_.get());
  if (absl::Status s = CheckDepth(value); !s.ok()) return s;
  auto generator = [&](rapidjson::Document& handler) {
    return Emit(value, handler, nullptr, sink);
  };
  tmp.Populate(generator);
  copy.Swap(tmp);
  return SetValue(pointer, std::move(copy));
}

absl::Status ObjectBuilder::SetString(std::string_view pointer,
                                      std::string_view v) {
  return SetValue(pointer, MakeString(v, *pool_));
}
absl::Status ObjectBuilder::SetInt(std::string_view pointer, int64_t v) {
  return SetValue(pointer, Value(static_cast<int64_t>(v)));
}
absl::Status ObjectBuilder::SetBool(std::string_view pointer, bool v) {
  return SetValue(pointer, Value(v));
}
absl::Status ObjectBuilder::SetDouble(std::string_view pointer, double v) {
  if (!std::isfinite(v)) return Invalid("JSON has no NaN or infinity");
  return SetValue(pointer, Value(v));
}

absl::Status ObjectBuilder::SetJson(std::string_view pointer,
                                    std::string_view json) {
  rapidjson::Document tmp(pool_.get());
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag |
                              rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseFullPrecisionFlag;
  rapidjson::MemoryStream stream(json.data(), json.size());
  tmp.ParseStream<kFlags, rapidjson::UTF8<>>(stream);
  if (tmp.HasParseError()) {
    return Invalid(
        absl::StrCat("invalid JSON at offset ", tmp.GetErrorOffset(), ": ",
                     rapidjson::GetParseError_En(tmp.GetParseError())));
  }
  Plan plan;
  if (absl::Status s = MakePlan(tmp, nullptr, &plan); !s.ok()) return s;
  if (MayHoldSurrogateEscape(json)) ReplaceLoneSurrogates(tmp);
  Value value;
  value.Swap(tmp);
  return SetValue(pointer, std::move(value));
}

bool ObjectBuilder::Remove(std::string_view pointer) {
  if (pointer.empty() || pointer[0] != '/') return false;
  size_t slash = pointer.rfind('/');
  absl::Status status;
  Value* parent = Resolve(pointer.substr(0, slash), /*create=*/false, &status);
  if (parent == nullptr) return false;
  std::string_view last = pointer.substr(slash);
  std::string buffer;
  std::string_view token;
  if (!NextToken(&last, &buffer, &token)) return false;
  if (parent->IsObject()) {
    auto it = FindKey(*parent, token);
    if (it == parent->MemberEnd()) return false;
    parent->EraseMember(it);
    return true;
  }
  if (parent->IsArray()) {
    size_t index;
    if (!ParseIndex(token, &index) || index >= parent->Size()) return false;
    parent->Erase(parent->Begin() + index);
    return true;
  }
  return false;
}

const Value* ObjectBuilder::Find(std::string_view pointer) const {
  return FindPointer(*doc_, pointer);
}

std::string ObjectBuilder::ToJson() const { return WriteJson(*doc_); }

absl::StatusOr<ObjectPtr> ObjectBuilder::Build(
    const ParseOptions& options) const {
  return Object::FromValue(*doc_, options);
}

}  // namespace api
}  // namespace kcr
