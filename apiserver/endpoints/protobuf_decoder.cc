// The protobuf wire decoder (protobuf_decoder.h): walks a message's bytes
// by its table and writes the JSON Go's encoding/json would, including the
// apimachinery types with a JSON form of their own (metav1.Time,
// IntOrString, Quantity) and map fields.
#include "apiserver/endpoints/protobuf_decoder.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/escaping.h"
#include "absl/time/time.h"
#include "api/types/time.h"
#include "base/str_cat.h"
#include "base/string_view.h"

namespace kcr {
namespace apiserver {
namespace protobuf_internal {
namespace {

// The apimachinery messages behind Type::kIntOrString, kQuantity and kTime.
const Message kIntOrString{"intstr IntOrString",
                           {{1, "type", Type::kInt64},
                            {2, "intVal", Type::kInt32},
                            {3, "strVal", Type::kString}}};

const Message kQuantity{"resource Quantity", {{1, "string", Type::kString}}};

const Message kTime{"meta/v1 Time",
                    {{1, "seconds", Type::kInt64}, {2, "nanos", Type::kInt32}}};

// A field this decoder does not know: refused rather than dropped, so that
// nothing a client sent is lost; the caller answers 415 and the client can
// send JSON or YAML instead.
absl::Status UnknownField(const Message& m, uint64_t number) {
  return absl::UnimplementedError(
      Cat("protobuf field ", number, " of ", m.name,
          " is not supported; send the object as JSON or YAML"));
}

constexpr int kMaxDepth = 32;

// Reads a map entry {1: key, 2: value}; the value is left as its bytes.
// Both point into `data`.
absl::Status DecodeMapEntry(std::string_view data, std::string_view* key,
                            std::string_view* value) {
  // A missing key or value is the empty string, as in Go; and never a null
  // pointer, which RapidJSON refuses to make a string of.
  *key = std::string_view("", 0);
  *value = std::string_view("", 0);
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
        *key = s;
      } else {
        *value = s;
      }
    } else if (!r.Skip(wire)) {
      return Malformed();
    }
  }
  return absl::OkStatus();
}

// metav1.Time: empty for the zero time, which Go's JSON writes as null.
absl::Status DecodeTime(std::string_view data, rapidjson::Value* out,
                        Allocator& a, int depth) {
  if (data.empty()) {
    out->SetNull();
    return absl::OkStatus();
  }
  rapidjson::Value t(rapidjson::kObjectType);
  if (absl::Status s = Decode(data, kTime, &t, a, depth + 1); !s.ok()) return s;
  int64_t seconds = t.HasMember("seconds") ? t["seconds"].GetInt64() : 0;
  std::string text = api::FormatRfc3339(absl::FromUnixSeconds(seconds));
  out->SetString(text.c_str(), static_cast<rapidjson::SizeType>(text.size()),
                 a);
  return absl::OkStatus();
}

// intstr.IntOrString {type, intVal, strVal}: type 1 is a string.
absl::Status DecodeIntOrString(std::string_view data, rapidjson::Value* out,
                               Allocator& a, int depth) {
  rapidjson::Value v(rapidjson::kObjectType);
  if (absl::Status s = Decode(data, kIntOrString, &v, a, depth + 1); !s.ok()) {
    return s;
  }
  int64_t type = v.HasMember("type") ? v["type"].GetInt64() : 0;
  if (type == 1) {
    if (v.HasMember("strVal")) {
      out->CopyFrom(v["strVal"], a);
    } else {
      out->SetString("", a);
    }
  } else if (type == 0) {
    out->SetInt(v.HasMember("intVal") ? v["intVal"].GetInt() : 0);
  } else {
    return absl::InvalidArgumentError(
        Cat("malformed protobuf body: IntOrString type ", type));
  }
  return absl::OkStatus();
}

// resource.Quantity {string}: its canonical string ("0" when unset, as Go
// prints the zero Quantity).
absl::Status DecodeQuantity(std::string_view data, rapidjson::Value* out,
                            Allocator& a, int depth) {
  rapidjson::Value v(rapidjson::kObjectType);
  if (absl::Status s = Decode(data, kQuantity, &v, a, depth + 1); !s.ok()) {
    return s;
  }
  if (v.HasMember("string")) {
    out->CopyFrom(v["string"], a);
  } else {
    out->SetString("0", a);
  }
  return absl::OkStatus();
}

bool IsScalar(Type t) {
  return t == Type::kString || t == Type::kBytes || t == Type::kInt64 ||
         t == Type::kInt32 || t == Type::kBool;
}

bool IsZero(const rapidjson::Value& v) {
  if (v.IsString()) return v.GetStringLength() == 0;
  if (v.IsBool()) return !v.GetBool();
  if (v.IsInt64()) return v.GetInt64() == 0;
  return false;
}

// The member `name` of `out`, added as an empty `type` when missing.
rapidjson::Value& Member(rapidjson::Value* out, const char* name,
                         rapidjson::Type type, Allocator& a) {
  auto it = out->FindMember(name);
  if (it != out->MemberEnd()) return it->value;
  out->AddMember(rapidjson::StringRef(name), rapidjson::Value(type), a);
  return out->MemberEnd()[-1].value;
}

// A length-delimited scalar: a field's value or a map entry's.
absl::Status DecodeDelimited(Type type, std::string_view s,
                             rapidjson::Value* out, Allocator& a, int depth) {
  switch (type) {
    case Type::kString:
      out->SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
      return absl::OkStatus();
    case Type::kBytes: {
      std::string b64 = absl::Base64Escape(ToAbsl(s));
      out->SetString(b64.c_str(), a);
      return absl::OkStatus();
    }
    case Type::kTime:
      return DecodeTime(s, out, a, depth);
    case Type::kIntOrString:
      return DecodeIntOrString(s, out, a, depth);
    case Type::kQuantity:
      return DecodeQuantity(s, out, a, depth);
    default:
      return Malformed();
  }
}

// The type of a map field's values.
Type MapValueType(Type map) {
  switch (map) {
    case Type::kBytesMap:
      return Type::kBytes;
    case Type::kQuantityMap:
      return Type::kQuantity;
    default:
      return Type::kString;
  }
}

}  // namespace

absl::Status Malformed() {
  return absl::InvalidArgumentError("malformed protobuf body");
}

absl::Status Decode(std::string_view data, const Message& m,
                    rapidjson::Value* out, Allocator& a, int depth) {
  if (depth > kMaxDepth) return Malformed();
  Reader r(data);
  while (!r.done()) {
    uint64_t tag;
    if (!r.Varint(&tag)) return Malformed();
    int wire = static_cast<int>(tag & 7);
    const Field* f = m.Find(static_cast<int>(tag >> 3));
    if (f == nullptr) {
      // Check the rest is well formed first: malformed input stays a 400.
      if (!r.Skip(wire)) return Malformed();
      return UnknownField(m, tag >> 3);
    }
    rapidjson::Value value;
    if (f->type == Type::kInt64 || f->type == Type::kInt32 ||
        f->type == Type::kBool) {
      uint64_t v;
      if (wire != 0 || !r.Varint(&v)) return Malformed();
      if (f->type == Type::kBool) {
        value.SetBool(v != 0);
      } else if (f->type == Type::kInt32) {
        // Negative int32s are sent sign-extended to 64 bits; Go keeps the
        // low 32 bits.
        value.SetInt(static_cast<int32_t>(static_cast<uint32_t>(v)));
      } else {
        value.SetInt64(static_cast<int64_t>(v));
      }
    } else {
      std::string_view s;
      if (wire != 2 || !r.Bytes(&s)) return Malformed();
      absl::Status st;
      switch (f->type) {
        case Type::kString:
        case Type::kBytes:
        case Type::kTime:
        case Type::kIntOrString:
        case Type::kQuantity:
          st = DecodeDelimited(f->type, s, &value, a, depth);
          break;
        case Type::kInline:
          st = Decode(s, *f->message, out, a, depth + 1);
          if (!st.ok()) return st;
          continue;
        case Type::kMessage:
          if (!(f->flags & kRepeated)) {
            // A message sent twice is merged, as protobuf does.
            rapidjson::Value& existing =
                Member(out, f->json, rapidjson::kObjectType, a);
            if (!existing.IsObject()) existing.SetObject();
            st = Decode(s, *f->message, &existing, a, depth + 1);
            if (!st.ok()) return st;
            continue;
          }
          value.SetObject();
          st = Decode(s, *f->message, &value, a, depth + 1);
          break;
        case Type::kStringMap:
        case Type::kBytesMap:
        case Type::kQuantityMap: {
          std::string_view key;
          std::string_view raw;
          st = DecodeMapEntry(s, &key, &raw);
          if (!st.ok()) return st;
          rapidjson::Value v;
          st = DecodeDelimited(MapValueType(f->type), raw, &v, a, depth);
          if (!st.ok()) return st;
          rapidjson::Value& map =
              Member(out, f->json, rapidjson::kObjectType, a);
          rapidjson::Value name(
              key.data(), static_cast<rapidjson::SizeType>(key.size()), a);
          auto it = map.FindMember(name);
          if (it != map.MemberEnd()) {
            it->value = v;  // the last entry for a key wins, as in Go
          } else {
            map.AddMember(name, v, a);
          }
          continue;
        }
        default:
          return Malformed();
      }
      if (!st.ok()) return st;
    }
    if (f->flags & kRepeated) {
      Member(out, f->json, rapidjson::kArrayType, a).PushBack(value, a);
    } else if (IsScalar(f->type) && !(f->flags & kKeepZero) && IsZero(value)) {
      out->RemoveMember(f->json);  // the last value wins, and it is empty
    } else {
      Member(out, f->json, rapidjson::kNullType, a) = value;
    }
  }
  return absl::OkStatus();
}

}  // namespace protobuf_internal
}  // namespace apiserver
}  // namespace kcr
