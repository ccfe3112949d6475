#include "api/crd/crd_common.h"

#include <cmath>
#include <memory>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "api/json/json_util.h"
#include "base/string_view.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace api {
namespace crd {

namespace {

// A copy of `value` that shares nothing with it. RapidJSON's CopyFrom keeps
// const strings by reference, and an Object's strings are references into
// the Object's own buffer (in-situ parsing), which the copy must outlive:
// write the value out and parse it back, which copies every string.
std::unique_ptr<rapidjson::Document> DeepCopy(const rapidjson::Value& value) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  value.Accept(writer);
  auto doc = std::make_unique<rapidjson::Document>();
  doc->Parse(out.GetString(), out.GetSize());
  return doc;
}

}  // namespace

RawJson::RawJson(const rapidjson::Value& value) : doc_(DeepCopy(value)) {}

RawJson::RawJson(const RawJson& other) {
  if (other.doc_ != nullptr) {
    doc_ = DeepCopy(*other.doc_);
  }
}

RawJson& RawJson::operator=(const RawJson& other) {
  if (this != &other) {
    RawJson copy(other);
    doc_ = std::move(copy.doc_);
  }
  return *this;
}

const rapidjson::Value& RawJson::value() const {
  static const rapidjson::Value kNull;
  return doc_ != nullptr ? static_cast<const rapidjson::Value&>(*doc_) : kNull;
}

std::string RawJson::StringMember(std::string_view key) const {
  return json::StringMember(value(), key);
}

bool operator==(const RawJson& a, const RawJson& b) {
  if (a.empty() != b.empty()) return false;
  return a.empty() || json::JsonDeepEqual(a.value(), b.value());
}

namespace internal {
namespace {

absl::Status WrongType(std::string_view path, std::string_view want,
                       const rapidjson::Value& got) {
  return absl::InvalidArgumentError(absl::StrCat(ToAbsl(path), ": must be ",
                                                 ToAbsl(want), ", got ",
                                                 json::JsonTypeName(got)));
}

// The member, or nullptr when absent or null.
const rapidjson::Value* Find(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

bool AsInt(const rapidjson::Value& v, int64_t* out) {
  if (v.IsInt64()) {
    *out = v.GetInt64();
    return true;
  }
  if (v.IsDouble()) {
    double d = v.GetDouble();
    // Integral doubles (2.0) are integers to the API server too.
    if (std::isfinite(d) && d == std::floor(d) && d >= -9.2e18 && d <= 9.2e18) {
      *out = static_cast<int64_t>(d);
      return true;
    }
  }
  return false;
}

rapidjson::Value Str(std::string_view s, Allocator& a) {
  return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()),
                          a);
}

}  // namespace

std::string Child(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return absl::StrCat(ToAbsl(parent), ".", ToAbsl(key));
}

absl::Status RequireObject(const rapidjson::Value& v, std::string_view path) {
  if (!v.IsObject()) {
    return WrongType(path.empty() ? "object" : path, "an object", v);
  }
  return absl::OkStatus();
}

absl::Status ReadString(const rapidjson::Value& obj, const char* key,
                        std::string_view parent,
                        std::optional<std::string>* out) {
  out->reset();
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) return absl::OkStatus();
  if (!v->IsString()) return WrongType(Child(parent, key), "a string", *v);
  out->emplace(v->GetString(), v->GetStringLength());
  return absl::OkStatus();
}

absl::Status ReadInt(const rapidjson::Value& obj, const char* key,
                     std::string_view parent, std::optional<int64_t>* out) {
  out->reset();
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) return absl::OkStatus();
  int64_t i;
  if (!v->IsNumber() || !AsInt(*v, &i)) {
    return WrongType(Child(parent, key), "an integer", *v);
  }
  *out = i;
  return absl::OkStatus();
}

absl::Status ReadDouble(const rapidjson::Value& obj, const char* key,
                        std::string_view parent, std::optional<double>* out) {
  out->reset();
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) return absl::OkStatus();
  if (!v->IsNumber()) return WrongType(Child(parent, key), "a number", *v);
  *out = v->GetDouble();
  return absl::OkStatus();
}

absl::Status ReadIntOrString(const rapidjson::Value& obj, const char* key,
                             std::string_view parent,
                             std::optional<IntOrString>* out) {
  out->reset();
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) return absl::OkStatus();
  int64_t i;
  if (v->IsString()) {
    *out =
        IntOrString::String(std::string(v->GetString(), v->GetStringLength()));
  } else if (v->IsNumber() && AsInt(*v, &i)) {
    *out = IntOrString::Int(i);
  } else {
    return WrongType(Child(parent, key), "an integer or a string", *v);
  }
  return absl::OkStatus();
}

absl::Status ReadStringList(const rapidjson::Value& obj, const char* key,
                            std::string_view parent,
                            std::vector<std::string>* out) {
  out->clear();
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) return absl::OkStatus();
  std::string path = Child(parent, key);
  if (!v->IsArray()) return WrongType(path, "a list of strings", *v);
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    const rapidjson::Value& e = (*v)[i];
    if (!e.IsString()) {
      return WrongType(absl::StrCat(path, "[", i, "]"), "a string", e);
    }
    out->emplace_back(e.GetString(), e.GetStringLength());
  }
  return absl::OkStatus();
}

absl::Status ReadObject(const rapidjson::Value& obj, const char* key,
                        std::string_view parent, const rapidjson::Value** out) {
  *out = Find(obj, key);
  if (*out != nullptr && !(*out)->IsObject()) {
    return WrongType(Child(parent, key), "an object", **out);
  }
  return absl::OkStatus();
}

absl::Status ReadConditions(const rapidjson::Value& obj, const char* key,
                            std::string_view parent,
                            std::vector<Condition>* out) {
  out->clear();
  const rapidjson::Value* v = Find(obj, key);
  if (v == nullptr) return absl::OkStatus();
  std::string path = Child(parent, key);
  if (!v->IsArray()) return WrongType(path, "a list of conditions", *v);
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    const rapidjson::Value& e = (*v)[i];
    std::string item = absl::StrCat(path, "[", i, "]");
    if (!e.IsObject()) return WrongType(item, "an object", e);
    Condition c;
    std::optional<std::string> type, status;
    absl::Status s = ReadString(e, "type", item, &type);
    if (s.ok()) s = ReadString(e, "status", item, &status);
    if (s.ok()) s = ReadString(e, "reason", item, &c.reason);
    if (s.ok()) s = ReadString(e, "message", item, &c.message);
    if (s.ok()) {
      s = ReadString(e, "lastTransitionTime", item, &c.last_transition_time);
    }
    if (s.ok()) {
      s = ReadInt(e, "observedGeneration", item, &c.observed_generation);
    }
    if (!s.ok()) return s;
    c.type = type.value_or("");
    c.status = status.value_or("");
    out->push_back(std::move(c));
  }
  return absl::OkStatus();
}

absl::Status ReadTypeAndMetadata(const rapidjson::Value& obj,
                                 std::string_view api_version,
                                 std::string_view kind, RawJson* metadata) {
  absl::Status s = RequireObject(obj, "");
  if (!s.ok()) return s;
  std::optional<std::string> got_version, got_kind;
  s = ReadString(obj, "apiVersion", "", &got_version);
  if (!s.ok()) return s;
  s = ReadString(obj, "kind", "", &got_kind);
  if (!s.ok()) return s;
  if (got_version && *got_version != api_version) {
    return absl::InvalidArgumentError(absl::StrCat("apiVersion: expected ",
                                                   Quote(api_version), ", got ",
                                                   Quote(*got_version)));
  }
  if (got_kind && *got_kind != kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kind: expected ", Quote(kind), ", got ", Quote(*got_kind)));
  }
  const rapidjson::Value* meta;
  s = ReadObject(obj, "metadata", "", &meta);
  if (!s.ok()) return s;
  *metadata = meta != nullptr ? RawJson(*meta) : RawJson();
  return absl::OkStatus();
}

absl::Status ReadStatusCommon(const rapidjson::Value& status,
                              std::optional<int64_t>* observed_generation,
                              std::vector<Condition>* conditions) {
  absl::Status s =
      ReadInt(status, "observedGeneration", "status", observed_generation);
  if (!s.ok()) return s;
  return ReadConditions(status, "conditions", "status", conditions);
}

rapidjson::Document NewDocument(std::string_view api_version,
                                std::string_view kind,
                                const RawJson& metadata) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  WriteString(&d, "apiVersion", std::string(api_version), a);
  WriteString(&d, "kind", std::string(kind), a);
  WriteRaw(&d, "metadata", metadata, a);
  return d;
}

void WriteStatusCommon(rapidjson::Value* status,
                       const std::optional<int64_t>& observed_generation,
                       const std::vector<Condition>& conditions, Allocator& a) {
  WriteInt(status, "observedGeneration", observed_generation, a);
  WriteConditions(status, "conditions", conditions, a);
}

void WriteMember(rapidjson::Value* obj, const char* key,
                 rapidjson::Value* value, Allocator& a) {
  obj->AddMember(rapidjson::Value(key, a), *value, a);
}

void WriteString(rapidjson::Value* obj, const char* key,
                 const std::optional<std::string>& v, Allocator& a) {
  if (!v) return;
  rapidjson::Value s = Str(*v, a);
  WriteMember(obj, key, &s, a);
}

void WriteInt(rapidjson::Value* obj, const char* key,
              const std::optional<int64_t>& v, Allocator& a) {
  if (!v) return;
  rapidjson::Value n(*v);
  WriteMember(obj, key, &n, a);
}

void WriteDouble(rapidjson::Value* obj, const char* key,
                 const std::optional<double>& v, Allocator& a) {
  if (!v) return;
  rapidjson::Value n(*v);
  WriteMember(obj, key, &n, a);
}

void WriteIntOrString(rapidjson::Value* obj, const char* key,
                      const std::optional<IntOrString>& v, Allocator& a) {
  if (!v) return;
  rapidjson::Value n;
  if (v->is_int) {
    n.SetInt64(v->int_value);
  } else {
    n = Str(v->str_value, a);
  }
  WriteMember(obj, key, &n, a);
}

void WriteStringList(rapidjson::Value* obj, const char* key,
                     const std::vector<std::string>& v, Allocator& a) {
  if (v.empty()) return;
  rapidjson::Value list(rapidjson::kArrayType);
  for (const std::string& s : v) list.PushBack(Str(s, a), a);
  WriteMember(obj, key, &list, a);
}

void WriteConditions(rapidjson::Value* obj, const char* key,
                     const std::vector<Condition>& v, Allocator& a) {
  if (v.empty()) return;
  rapidjson::Value list(rapidjson::kArrayType);
  for (const Condition& c : v) {
    rapidjson::Value e(rapidjson::kObjectType);
    if (!c.type.empty()) WriteString(&e, "type", c.type, a);
    if (!c.status.empty()) WriteString(&e, "status", c.status, a);
    WriteString(&e, "reason", c.reason, a);
    WriteString(&e, "message", c.message, a);
    WriteString(&e, "lastTransitionTime", c.last_transition_time, a);
    WriteInt(&e, "observedGeneration", c.observed_generation, a);
    list.PushBack(e, a);
  }
  WriteMember(obj, key, &list, a);
}

void WriteRaw(rapidjson::Value* obj, const char* key, const RawJson& v,
              Allocator& a) {
  if (v.empty()) return;
  rapidjson::Value copy(v.value(), a);
  WriteMember(obj, key, &copy, a);
}

std::string Quote(std::string_view s) {
  rapidjson::Value v(rapidjson::StringRef(
      s.data(), static_cast<rapidjson::SizeType>(s.size())));
  absl::StatusOr<std::string> out = json::JsonToString(v);
  return out.ok() ? *out : absl::StrCat("\"", ToAbsl(s), "\"");
}

}  // namespace internal
}  // namespace crd
}  // namespace api
}  // namespace kcr
