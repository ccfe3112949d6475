// The Kubernetes protobuf envelope (protobuf.h): the "k8s\0" magic and
// runtime.Unknown {typeMeta, raw}, whose raw bytes are decoded by the
// table of the kind typeMeta names.
#include "apiserver/endpoints/protobuf.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "apiserver/endpoints/protobuf_decoder.h"
#include "apiserver/endpoints/protobuf_messages.h"
#include "base/str_cat.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {
namespace {

using protobuf_internal::Decode;
using protobuf_internal::FindMessage;
using protobuf_internal::Malformed;
using protobuf_internal::Message;
using protobuf_internal::Reader;
using protobuf_internal::Type;

const Message kTypeMeta{
    "runtime TypeMeta",
    {{1, "apiVersion", Type::kString}, {2, "kind", Type::kString}}};

}  // namespace

absl::StatusOr<std::string> KubernetesProtobufToJson(std::string_view body) {
  static constexpr std::string_view kMagic("k8s\0", 4);
  if (body.substr(0, 4) != kMagic) {
    return absl::InvalidArgumentError("protobuf body without the k8s magic");
  }
  Reader r(body.substr(4));
  std::string api_version, kind;
  std::string_view raw;
  bool has_raw = false;
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
      has_raw = true;
    } else if (!r.Skip(wire)) {
      return Malformed();
    }
  }
  // A body cut short can still end on a field boundary; kubectl always sends
  // both the type and the object. The object may be empty: an empty message
  // is valid protobuf, every field at its default (kubectl drain deletes
  // with an empty DeleteOptions).
  if (kind.empty() || !has_raw) {
    return absl::InvalidArgumentError(
        "malformed protobuf body: no kind or no object in the envelope");
  }
  const Message* message = FindMessage(api_version, kind);
  if (message == nullptr) {
    return absl::UnimplementedError(
        Cat("protobuf is not supported for ", api_version, " ", kind));
  }
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  d.AddMember("apiVersion", rapidjson::Value(api_version.c_str(), a), a);
  d.AddMember("kind", rapidjson::Value(kind.c_str(), a), a);
  if (absl::Status s = Decode(raw, *message, &d, a, 0); !s.ok()) return s;
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  d.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace apiserver
}  // namespace kcr
