// Object's accessors, StringMapView and writing JSON back. Parsing and
// building an Object are in object_parse.cc.
#include "api/object.h"

#include <iterator>

#include "absl/strings/str_cat.h"
#include "api/internal/json_value.h"
#include "api/json_pointer.h"
#include "api/object_builder.h"
#include "base/string_view.h"

namespace kcr {
namespace api {
namespace {

using json_pointer::FindKey;
using json_pointer::FindPointer;
using object_internal::StringOf;
using object_internal::WriteJson;
using rapidjson::Value;

// What std::allocate_shared adds in front of the Object (vtable and counts).
constexpr size_t kControlBlock = 16;

}  // namespace

// ---------------------------------------------------------------------------
// StringMapView

StringMapView::value_type StringMapView::iterator::operator*() const {
  return {StringOf(it_->name), StringOf(it_->value)};
}

std::optional<std::string_view> StringMapView::Get(std::string_view key) const {
  if (map_ == nullptr) return std::nullopt;
  auto it = FindKey(*map_, key);
  if (it == map_->MemberEnd()) return std::nullopt;
  return StringOf(it->value);
}

StringMapView::iterator StringMapView::begin() const {
  return map_ == nullptr ? iterator() : iterator(map_->MemberBegin());
}

StringMapView::iterator StringMapView::end() const {
  return map_ == nullptr ? iterator() : iterator(map_->MemberEnd());
}

std::map<std::string, std::string> StringMapView::ToMap() const {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : *this) out.emplace(k, v);
  return out;
}

namespace {

// What each hot field is: its key, and whether its value is an object
// (else a string). Indexed by Object::HotField.
struct HotFieldSpec {
  const char* key;
  bool is_object;
};
constexpr HotFieldSpec kHotFieldSpecs[] = {
    {"apiVersion", false}, {"kind", false},       {"name", false},
    {"namespace", false},  {"uid", false},        {"resourceVersion", false},
    {"labels", true},      {"annotations", true},
};

}  // namespace

Value::ConstMemberIterator Object::FindHot(HotField field) const {
  const HotFieldSpec& spec = kHotFieldSpecs[field];
  const Value& parent = HotParent(field);
  auto it = parent.FindMember(spec.key);
  if (it == parent.MemberEnd()) return it;
  const bool typed =
      spec.is_object ? it->value.IsObject() : it->value.IsString();
  return typed ? it : parent.MemberEnd();
}

const Value* Object::HotByKey(HotField field) const {
  auto it = FindHot(field);
  return it == HotParent(field).MemberEnd() ? nullptr : &it->value;
}

void Object::Index() {
  static_assert(std::size(kHotFieldSpecs) == kHotFields);
  metadata_ = &root_.FindMember("metadata")->value;  // Validate checked it
  for (int f = 0; f < kHotFields; ++f) {
    const auto field = static_cast<HotField>(f);
    const Value& parent = HotParent(field);
    auto it = FindHot(field);
    const size_t index = static_cast<size_t>(it - parent.MemberBegin());
    hot_[f] = it == parent.MemberEnd() ? kAbsent
              : index < kByKey         ? static_cast<uint16_t>(index)
                                       : kByKey;
  }
}

const Value* Object::MetadataMember(std::string_view key) const {
  auto it = FindKey(*metadata_, key);
  return it == metadata_->MemberEnd() ? nullptr : &it->value;
}

std::string_view Object::generate_name() const {
  const Value* v = MetadataMember("generateName");
  return v != nullptr && v->IsString() ? StringOf(*v) : std::string_view();
}

std::string_view Object::creation_timestamp() const {
  const Value* v = MetadataMember("creationTimestamp");
  return v != nullptr && v->IsString() ? StringOf(*v) : std::string_view();
}

std::string_view Object::deletion_timestamp() const {
  const Value* v = MetadataMember("deletionTimestamp");
  return v != nullptr && v->IsString() ? StringOf(*v) : std::string_view();
}

int64_t Object::generation() const {
  const Value* v = MetadataMember("generation");
  return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
}

std::string Object::Key() const {
  if (namespace_().empty()) return std::string(name());
  return absl::StrCat(ToAbsl(namespace_()), "/", ToAbsl(name()));
}

std::vector<OwnerReferenceView> Object::owner_references() const {
  std::vector<OwnerReferenceView> out;
  const Value* refs = MetadataMember("ownerReferences");
  if (refs == nullptr || !refs->IsArray()) return out;
  out.reserve(refs->Size());
  for (const Value& ref : refs->GetArray()) {
    OwnerReferenceView view;
    for (const auto& m : ref.GetObject()) {
      std::string_view key = StringOf(m.name);
      if (m.value.IsString()) {
        if (key == "apiVersion") view.api_version = StringOf(m.value);
        if (key == "kind") view.kind = StringOf(m.value);
        if (key == "name") view.name = StringOf(m.value);
        if (key == "uid") view.uid = StringOf(m.value);
      } else if (m.value.IsBool()) {
        if (key == "controller") view.controller = m.value.GetBool();
        if (key == "blockOwnerDeletion") {
          view.block_owner_deletion = m.value.GetBool();
        }
      }
    }
    out.push_back(view);
  }
  return out;
}

std::optional<OwnerReferenceView> Object::controller_reference() const {
  for (const OwnerReferenceView& ref : owner_references()) {
    if (ref.controller) return ref;
  }
  return std::nullopt;
}

std::vector<std::string_view> Object::finalizers() const {
  std::vector<std::string_view> out;
  const Value* list = MetadataMember("finalizers");
  if (list == nullptr || !list->IsArray()) return out;
  out.reserve(list->Size());
  for (const Value& f : list->GetArray()) out.push_back(StringOf(f));
  return out;
}

bool Object::HasFinalizer(std::string_view finalizer) const {
  const Value* list = MetadataMember("finalizers");
  if (list == nullptr || !list->IsArray()) return false;
  for (const Value& f : list->GetArray()) {
    if (StringOf(f) == finalizer) return true;
  }
  return false;
}

const Value* Object::Find(std::string_view json_pointer) const {
  return FindPointer(root_, json_pointer);
}

std::string Object::ToJson() const { return WriteJson(root_); }

size_t Object::SpaceUsed() const {
  return sizeof(Object) + kControlBlock + arena_size_;
}

ObjectBuilder Object::ToBuilder() const { return ObjectBuilder(*this); }

}  // namespace api
}  // namespace kcr
