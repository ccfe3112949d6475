// Table-driven decoding of protobuf wire format into JSON: the message
// tables (Type, Field, Message) that describe a Go type's protobuf fields
// and JSON names, the wire reader, and Decode, which walks a message's
// bytes by its table. What the tables hold for Kubernetes' types is in
// protobuf_messages.h; the envelope around them in protobuf.h.
//
// Internal to KubernetesProtobufToJson (protobuf.h).
#ifndef KCR_APISERVER_ENDPOINTS_PROTOBUF_DECODER_H_
#define KCR_APISERVER_ENDPOINTS_PROTOBUF_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {
namespace protobuf_internal {

using Allocator = rapidjson::Document::AllocatorType;

// How a field is encoded on the wire and written in JSON.
enum class Type {
  kString,
  kBytes,  // base64 in JSON
  kInt64,  // varint
  kInt32,  // varint, truncated to 32 bits (negatives are sign-extended)
  kBool,
  kTime,  // metav1.Time -> RFC 3339; the zero time (empty) -> null
  kMessage,
  kInline,       // an embedded Go struct (`json:",inline"`): its fields
                 // land in the enclosing JSON object
  kIntOrString,  // intstr.IntOrString -> JSON number or string
  kQuantity,     // resource.Quantity -> its string
  kStringMap,    // map<string,string>
  kBytesMap,     // map<string,bytes>
  kQuantityMap,  // map<string,Quantity> (ResourceList)
};

// Field flags.
constexpr int kRepeated = 1;
// Keep a zero scalar (0, "", false) in the JSON. Go's generated protobuf
// code writes every non-pointer scalar, zero or not, while encoding/json
// leaves out the zero ones tagged omitempty; so zeros are dropped unless
// the field is a pointer (sent only when set, so 0 means 0) or is not
// omitempty in its Go json tag.
constexpr int kKeepZero = 2;

struct Message;

struct Field {
  int number;
  const char* json;
  Type type;
  int flags = 0;
  const Message* message = nullptr;
};

struct Message {
  // "<apiVersion> <Go type>", named in errors.
  const char* name;
  std::vector<Field> fields;
  const Field* Find(int n) const {
    for (const Field& f : fields) {
      if (f.number == n) return &f;
    }
    return nullptr;
  }
};

// Reads the protobuf wire format: varints, length-delimited bytes, and
// skips the fields it is not asked for. Points into the data it reads.
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

// InvalidArgument "malformed protobuf body" (the caller answers 400).
absl::Status Malformed();

// Decodes the message `m` encoded in `data` into the JSON object `out`,
// as Go's encoding/json writes the same Go struct (protobuf.h). `depth` is
// the nesting of `data` (0 for a top-level object); too deep is Malformed.
// A field number `m` does not know is Unimplemented, naming the field.
absl::Status Decode(std::string_view data, const Message& m,
                    rapidjson::Value* out, Allocator& a, int depth);

}  // namespace protobuf_internal
}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_PROTOBUF_DECODER_H_
