// Protobuf wire helpers for hand-made Kubernetes request bodies in tests:
// varints, length-delimited and varint fields, and the "k8s\0" envelope
// (runtime.Unknown) kube-apiserver expects around an object.
#ifndef KCR_TEST_APISERVER_PROTOBUF_WIRE_H_
#define KCR_TEST_APISERVER_PROTOBUF_WIRE_H_

#include <cstdint>
#include <string>

namespace kcr::apiserver::testing {

inline std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

// Field `field` holding `data` (wire type 2).
inline std::string Bytes(int field, const std::string& data) {
  return Varint(static_cast<uint64_t>(field) << 3 | 2) + Varint(data.size()) +
         data;
}

// Field `field` holding the varint `v` (wire type 0).
inline std::string VarintField(int field, uint64_t v) {
  return Varint(static_cast<uint64_t>(field) << 3) + Varint(v);
}

// `raw` in the envelope, as apiVersion/kind; `content_type` is left out
// when empty.
inline std::string Envelope(
    const std::string& api_version, const std::string& kind,
    const std::string& raw,
    const std::string& content_type = "application/vnd.kubernetes.protobuf") {
  std::string out = std::string("k8s\0", 4) +
                    Bytes(1, Bytes(1, api_version) + Bytes(2, kind)) +
                    Bytes(2, raw);
  if (!content_type.empty()) out += Bytes(4, content_type);
  return out;
}

}  // namespace kcr::apiserver::testing

#endif  // KCR_TEST_APISERVER_PROTOBUF_WIRE_H_
