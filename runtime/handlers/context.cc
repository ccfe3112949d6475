#include "runtime/handlers/context.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "api/types/event.h"
#include "base/str_cat.h"
#include "base/string_view.h"

namespace kcr::handlers {
namespace {

rapidjson::Value Str(std::string_view s,
                     rapidjson::Document::AllocatorType& a) {
  return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()),
                          a);
}

rapidjson::Value::StringRefType Ref(std::string_view s) {
  return rapidjson::StringRef(s.data(),
                              static_cast<rapidjson::SizeType>(s.size()));
}

// The member `name` of `parent`, made as {} when missing or not an object.
rapidjson::Value& ObjectMember(rapidjson::Value& parent, std::string_view name,
                               rapidjson::Document::AllocatorType& a) {
  auto it = parent.FindMember(Ref(name));
  if (it == parent.MemberEnd()) {
    parent.AddMember(Str(name, a), rapidjson::Value(rapidjson::kObjectType), a);
    return (parent.MemberEnd() - 1)->value;
  }
  if (!it->value.IsObject()) it->value.SetObject();
  return it->value;
}

// Sets parent.<dotted> = value, making the objects on the way.
void SetPath(rapidjson::Value& parent, std::string_view dotted,
             rapidjson::Value value, rapidjson::Document::AllocatorType& a) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(ToAbsl(dotted), '.', absl::SkipEmpty());
  if (parts.empty()) return;
  rapidjson::Value* at = &parent;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    at = &ObjectMember(*at, ToStd(parts[i]), a);
  }
  const std::string_view last = ToStd(parts.back());
  at->RemoveMember(Ref(last));
  at->AddMember(Str(last, a), value, a);
}

const rapidjson::Value& EmptyObject() {
  static const rapidjson::Value* empty =
      new rapidjson::Value(rapidjson::kObjectType);
  return *empty;
}

// RFC 6901: "~" as "~0", "/" as "~1".
std::string EscapePointer(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

Patch::Patch() : doc_(rapidjson::kObjectType) {}

rapidjson::Value& Patch::Section(std::string_view name) {
  return ObjectMember(doc_, name, doc_.GetAllocator());
}

Patch& Patch::SetStatus(std::string_view field, const rapidjson::Value& value) {
  auto& a = doc_.GetAllocator();
  SetPath(Section("status"), field, rapidjson::Value(value, a), a);
  return *this;
}

Patch& Patch::SetStatus(std::string_view field, std::string_view value) {
  auto& a = doc_.GetAllocator();
  SetPath(Section("status"), field, Str(value, a), a);
  return *this;
}

Patch& Patch::SetStatus(std::string_view field, int64_t value) {
  auto& a = doc_.GetAllocator();
  SetPath(Section("status"), field, rapidjson::Value(value), a);
  return *this;
}

Patch& Patch::SetStatus(std::string_view field, bool value) {
  auto& a = doc_.GetAllocator();
  SetPath(Section("status"), field, rapidjson::Value(value), a);
  return *this;
}

Patch& Patch::RemoveStatus(std::string_view field) {
  auto& a = doc_.GetAllocator();
  SetPath(Section("status"), field, rapidjson::Value(), a);
  return *this;
}

Patch& Patch::SetLabel(std::string_view key, std::string_view value) {
  auto& a = doc_.GetAllocator();
  rapidjson::Value& labels = ObjectMember(Section("metadata"), "labels", a);
  labels.RemoveMember(Ref(key));
  labels.AddMember(Str(key, a), Str(value, a), a);
  return *this;
}

Patch& Patch::RemoveLabel(std::string_view key) {
  auto& a = doc_.GetAllocator();
  rapidjson::Value& labels = ObjectMember(Section("metadata"), "labels", a);
  labels.RemoveMember(Ref(key));
  labels.AddMember(Str(key, a), rapidjson::Value(), a);
  return *this;
}

Patch& Patch::SetAnnotation(std::string_view key, std::string_view value) {
  auto& a = doc_.GetAllocator();
  rapidjson::Value& annotations =
      ObjectMember(Section("metadata"), "annotations", a);
  annotations.RemoveMember(Ref(key));
  annotations.AddMember(Str(key, a), Str(value, a), a);
  return *this;
}

Patch& Patch::RemoveAnnotation(std::string_view key) {
  auto& a = doc_.GetAllocator();
  rapidjson::Value& annotations =
      ObjectMember(Section("metadata"), "annotations", a);
  annotations.RemoveMember(Ref(key));
  annotations.AddMember(Str(key, a), rapidjson::Value(), a);
  return *this;
}

bool Patch::empty() const {
  for (const char* section : {"metadata", "status"}) {
    auto it = doc_.FindMember(section);
    if (it != doc_.MemberEnd() &&
        (!it->value.IsObject() || it->value.MemberCount() > 0)) {
      return false;
    }
  }
  return true;
}

const rapidjson::Value& ObjectContext::spec() const {
  const rapidjson::Value* v = body_->Find("/spec");
  return v != nullptr && v->IsObject() ? *v : EmptyObject();
}

const rapidjson::Value& ObjectContext::status() const {
  const rapidjson::Value* v = body_->Find("/status");
  return v != nullptr && v->IsObject() ? *v : EmptyObject();
}

void ObjectContext::Info(std::string_view reason, std::string_view message) {
  if (recorder_ != nullptr) {
    recorder_->Event(*body_, api::kEventTypeNormal, reason, message);
  }
}

void ObjectContext::Warn(std::string_view reason, std::string_view message) {
  if (recorder_ != nullptr) {
    recorder_->Event(*body_, api::kEventTypeWarning, reason, message);
  }
}

// kopf posts type "Error", which Kubernetes (and kcr's recorder, as
// client-go's) does not accept: a Warning it is.
void ObjectContext::Exception(std::string_view reason,
                              std::string_view message) {
  Warn(reason, message);
}

absl::Status ObjectContext::Adopt(api::ObjectBuilder& child) const {
  const api::Object& owner = *body_;
  if (owner.name().empty() || owner.uid().empty() ||
      owner.api_version().empty() || owner.kind().empty()) {
    return absl::FailedPreconditionError(
        "adopt: the owner has no apiVersion, kind, name or uid");
  }
  api::OwnerReferenceView ref;
  ref.api_version = owner.api_version();
  ref.kind = owner.kind();
  ref.name = owner.name();
  ref.uid = owner.uid();
  ref.controller = true;
  ref.block_owner_deletion = true;
  child.AddOwnerReference(ref);
  const rapidjson::Value* ns = child.Find("/metadata/namespace");
  const bool child_has_namespace =
      ns != nullptr && ns->IsString() && ns->GetStringLength() > 0;
  if (!child_has_namespace && !owner.namespace_().empty()) {
    child.SetNamespace(owner.namespace_());
  }
  const rapidjson::Value* name = child.Find("/metadata/name");
  const rapidjson::Value* generate = child.Find("/metadata/generateName");
  auto blank = [](const rapidjson::Value* v) {
    return v == nullptr || !v->IsString() || v->GetStringLength() == 0;
  };
  if (blank(name) && blank(generate)) {
    child.SetGenerateName(Cat(owner.name(), "-"));
  }
  for (const auto& [key, value] : owner.labels()) {
    if (child.Find(Cat("/metadata/labels/", EscapePointer(key))) == nullptr) {
      child.SetLabel(key, value);
    }
  }
  return absl::OkStatus();
}

void ObjectContext::Label(api::ObjectBuilder& child,
                          const std::map<std::string, std::string>& labels) {
  for (const auto& [key, value] : labels) child.SetLabel(key, value);
}

std::string_view ReasonName(Reason reason) {
  switch (reason) {
    case Reason::kCreate:
      return "create";
    case Reason::kUpdate:
      return "update";
    case Reason::kDelete:
      return "delete";
    case Reason::kResume:
      return "resume";
    case Reason::kTimer:
      return "timer";
  }
  return "unknown";
}

}  // namespace kcr::handlers
