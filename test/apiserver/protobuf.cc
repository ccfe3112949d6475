#include "test/apiserver/protobuf.h"

#include <cstdint>
#include <map>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/time/time.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "test/apiserver/str_util.h"

namespace kcr {
namespace apiserver {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

enum class Type {
  kString,
  kBytes,       // base64 in JSON
  kInt64,
  kBool,
  kTime,        // metav1.Time -> RFC 3339
  kMessage,
  kStringMap,   // map<string,string>
  kBytesMap,    // map<string,bytes>
};

struct Message;

struct Field {
  int number;
  const char* json;
  Type type;
  bool repeated = false;
  const Message* message = nullptr;
};

struct Message {
  std::vector<Field> fields;
  const Field* Find(int n) const {
    for (const Field& f : fields) {
      if (f.number == n) return &f;
    }
    return nullptr;
  }
};

const Message kOwnerReference{{{1, "kind", Type::kString},
                               {3, "name", Type::kString},
                               {4, "uid", Type::kString},
                               {5, "apiVersion", Type::kString},
                               {6, "controller", Type::kBool},
                               {7, "blockOwnerDeletion", Type::kBool}}};

const Message kObjectMeta{
    {{1, "name", Type::kString},
     {2, "generateName", Type::kString},
     {3, "namespace", Type::kString},
     {5, "uid", Type::kString},
     {6, "resourceVersion", Type::kString},
     {7, "generation", Type::kInt64},
     {8, "creationTimestamp", Type::kTime},
     {9, "deletionTimestamp", Type::kTime},
     {10, "deletionGracePeriodSeconds", Type::kInt64},
     {11, "labels", Type::kStringMap},
     {12, "annotations", Type::kStringMap},
     {13, "ownerReferences", Type::kMessage, true, &kOwnerReference},
     {14, "finalizers", Type::kString, true}}};

const Message kNamespaceSpec{{{1, "finalizers", Type::kString, true}}};
const Message kNamespaceStatus{{{1, "phase", Type::kString}}};
const Message kNamespace{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                          {2, "spec", Type::kMessage, false, &kNamespaceSpec},
                          {3, "status", Type::kMessage, false, &kNamespaceStatus}}};
const Message kConfigMap{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                          {2, "data", Type::kStringMap},
                          {3, "binaryData", Type::kBytesMap},
                          {4, "immutable", Type::kBool}}};
const Message kSecret{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                       {2, "data", Type::kBytesMap},
                       {3, "type", Type::kString},
                       {4, "stringData", Type::kStringMap},
                       {5, "immutable", Type::kBool}}};
const Message kObjectReference{{{1, "kind", Type::kString},
                                {2, "namespace", Type::kString},
                                {3, "name", Type::kString},
                                {4, "uid", Type::kString},
                                {5, "apiVersion", Type::kString},
                                {6, "resourceVersion", Type::kString},
                                {7, "fieldPath", Type::kString}}};
const Message kLocalObjectReference{{{1, "name", Type::kString}}};
const Message kServiceAccount{
    {{1, "metadata", Type::kMessage, false, &kObjectMeta},
     {2, "secrets", Type::kMessage, true, &kObjectReference},
     {3, "imagePullSecrets", Type::kMessage, true, &kLocalObjectReference},
     {4, "automountServiceAccountToken", Type::kBool}}};
const Message kTime{{{1, "seconds", Type::kInt64}, {2, "nanos", Type::kInt64}}};
const Message kTypeMeta{{{1, "apiVersion", Type::kString},
                         {2, "kind", Type::kString}}};

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }
  bool Varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return false;
      uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool Bytes(std::string_view* out) {
    uint64_t n;
    if (!Varint(&n) || n > data_.size() - pos_) return false;
    *out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool Skip(int wire) {
    uint64_t v;
    std::string_view s;
    switch (wire) {
      case 0:
        return Varint(&v);
      case 1:
        if (data_.size() - pos_ < 8) return false;
        pos_ += 8;
        return true;
      case 2:
        return Bytes(&s);
      case 5:
        if (data_.size() - pos_ < 4) return false;
        pos_ += 4;
        return true;
      default:
        return false;
    }
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

absl::Status Malformed() {
  return absl::InvalidArgumentError("malformed protobuf body");
}

absl::Status Decode(std::string_view data, const Message& m,
                    rapidjson::Value* out, Allocator& a, int depth);

absl::Status DecodeMapEntry(std::string_view data, bool bytes_value,
                            std::string* key, std::string* value) {
  Reader r(data);
  while (!r.done()) {
    uint64_t tag;
    if (!r.Varint(&tag)) return Malformed();
    int wire = static_cast<int>(tag & 7);
    uint64_t num = tag >> 3;
    if (wire == 2 && (num == 1 || num == 2)) {
      std::string_view s;
      if (!r.Bytes(&s)) return Malformed();
      if (num == 1) {
        *key = std::string(s);
      } else {
        *value = bytes_value ? absl::Base64Escape(ToAbsl(s)) : std::string(s);
      }
    } else if (!r.Skip(wire)) {
      return Malformed();
    }
  }
  return absl::OkStatus();
}

std::string TimeString(std::string_view data) {
  rapidjson::Document d(rapidjson::kObjectType);
  if (!Decode(data, kTime, &d, d.GetAllocator(), 0).ok()) return "";
  int64_t seconds = d.HasMember("seconds") ? d["seconds"].GetInt64() : 0;
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(seconds),
                          absl::UTCTimeZone());
}

absl::Status Decode(std::string_view data, const Message& m,
                    rapidjson::Value* out, Allocator& a, int depth) {
  if (depth > 16) return Malformed();
  Reader r(data);
  while (!r.done()) {
    uint64_t tag;
    if (!r.Varint(&tag)) return Malformed();
    int wire = static_cast<int>(tag & 7);
    const Field* f = m.Find(static_cast<int>(tag >> 3));
    if (f == nullptr) {
      if (!r.Skip(wire)) return Malformed();
      continue;
    }
    rapidjson::Value value;
    if (f->type == Type::kInt64 || f->type == Type::kBool) {
      uint64_t v;
      if (wire != 0 || !r.Varint(&v)) return Malformed();
      if (f->type == Type::kBool) {
        value.SetBool(v != 0);
      } else {
        value.SetInt64(static_cast<int64_t>(v));
      }
    } else {
      std::string_view s;
      if (wire != 2 || !r.Bytes(&s)) return Malformed();
      switch (f->type) {
        case Type::kString:
          value.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
          break;
        case Type::kBytes: {
          std::string b64 = absl::Base64Escape(ToAbsl(s));
          value.SetString(b64.c_str(), a);
          break;
        }
        case Type::kTime: {
          std::string t = TimeString(s);
          value.SetString(t.c_str(), a);
          break;
        }
        case Type::kMessage:
          value.SetObject();
          if (absl::Status st = Decode(s, *f->message, &value, a, depth + 1);
              !st.ok()) {
            return st;
          }
          break;
        case Type::kStringMap:
        case Type::kBytesMap: {
          std::string key, v;
          if (absl::Status st =
                  DecodeMapEntry(s, f->type == Type::kBytesMap, &key, &v);
              !st.ok()) {
            return st;
          }
          auto it = out->FindMember(f->json);
          if (it == out->MemberEnd()) {
            out->AddMember(rapidjson::StringRef(f->json),
                           rapidjson::Value(rapidjson::kObjectType), a);
            it = out->FindMember(f->json);
          }
          it->value.AddMember(rapidjson::Value(key.c_str(), a),
                              rapidjson::Value(v.c_str(), a), a);
          continue;
        }
        default:
          return Malformed();
      }
    }
    if (f->repeated) {
      auto it = out->FindMember(f->json);
      if (it == out->MemberEnd()) {
        out->AddMember(rapidjson::StringRef(f->json),
                       rapidjson::Value(rapidjson::kArrayType), a);
        it = out->FindMember(f->json);
      }
      it->value.PushBack(value, a);
    } else {
      auto it = out->FindMember(f->json);
      if (it != out->MemberEnd()) {
        it->value = value;
      } else {
        out->AddMember(rapidjson::StringRef(f->json), value, a);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> KubernetesProtobufToJson(std::string_view body) {
  static constexpr std::string_view kMagic("k8s\0", 4);
  if (body.substr(0, 4) != kMagic) {
    return absl::InvalidArgumentError("protobuf body without the k8s magic");
  }
  Reader r(body.substr(4));
  std::string api_version, kind;
  std::string_view raw;
  while (!r.done()) {
    uint64_t tag;
    if (!r.Varint(&tag)) return Malformed();
    int wire = static_cast<int>(tag & 7);
    uint64_t num = tag >> 3;
    if (wire == 2 && num == 1) {
      std::string_view tm;
      if (!r.Bytes(&tm)) return Malformed();
      rapidjson::Document d(rapidjson::kObjectType);
      if (absl::Status s = Decode(tm, kTypeMeta, &d, d.GetAllocator(), 0);
          !s.ok()) {
        return s;
      }
      if (d.HasMember("apiVersion")) api_version = d["apiVersion"].GetString();
      if (d.HasMember("kind")) kind = d["kind"].GetString();
    } else if (wire == 2 && num == 2) {
      if (!r.Bytes(&raw)) return Malformed();
    } else if (!r.Skip(wire)) {
      return Malformed();
    }
  }
  static const std::map<std::string, const Message*> kKinds = {
      {"Namespace", &kNamespace},
      {"ConfigMap", &kConfigMap},
      {"Secret", &kSecret},
      {"ServiceAccount", &kServiceAccount}};
  auto it = kKinds.find(kind);
  if (api_version != "v1" || it == kKinds.end()) {
    return absl::UnimplementedError(
        Cat("protobuf is not supported for ", api_version, " ", kind));
  }
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("apiVersion", "v1", a);
  d.AddMember("kind", rapidjson::Value(kind.c_str(), a), a);
  if (absl::Status s = Decode(raw, *it->second, &d, a, 0); !s.ok()) return s;
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  d.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace apiserver
}  // namespace kcr
