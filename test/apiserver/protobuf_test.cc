#include "test/apiserver/protobuf.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

std::string Bytes(int field, const std::string& data) {
  return Varint(static_cast<uint64_t>(field) << 3 | 2) + Varint(data.size()) + data;
}

std::string Envelope(const std::string& kind, const std::string& raw) {
  std::string type_meta = Bytes(1, "v1") + Bytes(2, kind);
  return std::string("k8s\0", 4) + Bytes(1, type_meta) + Bytes(2, raw) +
         Bytes(4, "application/vnd.kubernetes.protobuf");
}

// What `kubectl create configmap c --from-literal=a=b -n team` sends.
std::string ConfigMap() {
  std::string meta = Bytes(1, "c") + Bytes(3, "team") +
                     Bytes(11, Bytes(1, "app") + Bytes(2, "web"));
  std::string data = Bytes(1, "a") + Bytes(2, "b");
  return Envelope("ConfigMap", Bytes(1, meta) + Bytes(2, data));
}

TEST(ProtobufTest, DecodesConfigMap) {
  auto json = KubernetesProtobufToJson(ConfigMap());
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json,
            R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"team","labels":{"app":"web"}},"data":{"a":"b"}})");
}

TEST(ProtobufTest, DecodesNamespaceAndSecretBytesAsBase64) {
  auto ns = KubernetesProtobufToJson(
      Envelope("Namespace", Bytes(1, Bytes(1, "team")) +
                                Bytes(2, Bytes(1, "kubernetes"))));
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ(*ns,
            R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"},"spec":{"finalizers":["kubernetes"]}})");
  auto secret = KubernetesProtobufToJson(Envelope(
      "Secret", Bytes(1, Bytes(1, "s")) + Bytes(2, Bytes(1, "k") + Bytes(2, "hi")) +
                    Bytes(3, "Opaque")));
  ASSERT_TRUE(secret.ok());
  EXPECT_THAT(*secret, HasSubstr(R"("data":{"k":"aGk="})"));
  EXPECT_THAT(*secret, HasSubstr(R"("type":"Opaque")"));
}

TEST(ProtobufTest, OtherKindsAreUnimplemented) {
  auto r = KubernetesProtobufToJson(Envelope("Pod", Bytes(1, Bytes(1, "p"))));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(ProtobufTest, MalformedInputNeverCrashes) {
  EXPECT_FALSE(KubernetesProtobufToJson("").ok());
  EXPECT_FALSE(KubernetesProtobufToJson("not protobuf").ok());
  std::string good = ConfigMap();
  for (size_t cut = 4; cut < good.size(); ++cut) {
    (void)KubernetesProtobufToJson(good.substr(0, cut));
  }
  std::string flipped = good;
  for (size_t i = 4; i < flipped.size(); ++i) {
    flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
    (void)KubernetesProtobufToJson(flipped);
  }
  // A length beyond the input.
  EXPECT_FALSE(KubernetesProtobufToJson(std::string("k8s\0", 4) + "\x12\xff\xff\xff\x0f").ok());
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
