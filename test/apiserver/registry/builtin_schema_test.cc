#include "apiserver/registry/builtin_schema.h"

#include <string>

#include "api/json/json_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr::apiserver {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

rapidjson::Document Parse(const std::string& text) {
  rapidjson::Document doc;
  absl::Status s = json::ParseJson(text, &doc);
  EXPECT_TRUE(s.ok()) << s;
  return doc;
}

DecodeReport Decode(const char* group, const char* kind,
                    const std::string& text, bool patch = false) {
  const GoType* type = BuiltinKindType(group, kind);
  EXPECT_NE(type, nullptr) << kind;
  if (type == nullptr) return {};
  return CheckDecode(*type, Parse(text), patch);
}

std::string Error(const char* group, const char* kind,
                  const std::string& text) {
  return Decode(group, kind, text).error;
}

TEST(BuiltinSchemaTest, ServedKindsHaveTypes) {
  for (const char* kind : {"ConfigMap", "Secret", "Pod", "Service", "Namespace",
                           "ServiceAccount", "Event"}) {
    EXPECT_NE(BuiltinKindType("", kind), nullptr) << kind;
  }
  EXPECT_NE(BuiltinKindType("apps", "Deployment"), nullptr);
  EXPECT_NE(BuiltinKindType("apps", "ReplicaSet"), nullptr);
  EXPECT_NE(BuiltinKindType("coordination.k8s.io", "Lease"), nullptr);
  EXPECT_EQ(BuiltinKindType("", "Deployment"), nullptr);
  EXPECT_EQ(BuiltinKindType("example.com", "Widget"), nullptr);
}

// The messages of Go's encoding/json: the innermost struct, the field path
// from the root without list indexes or map keys, the Go type.
TEST(BuiltinSchemaTest, TypeErrorsAreWordedAsGoDecoderErrors) {
  EXPECT_EQ(Error("", "ConfigMap", R"({"data":{"port":8080}})"),
            "json: cannot unmarshal number into Go struct field "
            "ConfigMap.data of type string");
  EXPECT_EQ(Error("apps", "Deployment", R"({"spec":{"replicas":"3"}})"),
            "json: cannot unmarshal string into Go struct field "
            "DeploymentSpec.spec.replicas of type int32");
  EXPECT_EQ(Error("apps", "Deployment", R"({"spec":{"replicas":3.5}})"),
            "json: cannot unmarshal number 3.5 into Go struct field "
            "DeploymentSpec.spec.replicas of type int32");
  EXPECT_EQ(Error("apps", "Deployment", R"({"spec":{"replicas":4294967296}})"),
            "json: cannot unmarshal number 4294967296 into Go struct field "
            "DeploymentSpec.spec.replicas of type int32");
  EXPECT_EQ(Error("apps", "Deployment", R"({"spec":"x"})"),
            "json: cannot unmarshal string into Go struct field "
            "Deployment.spec of type v1.DeploymentSpec");
  EXPECT_EQ(Error("apps", "Deployment",
                  R"({"spec":{"template":{"spec":{"containers":)"
                  R"([{"name":"a"},{"name":7}]}}}})"),
            "json: cannot unmarshal number into Go struct field "
            "Container.spec.template.spec.containers.name of type string");
  EXPECT_EQ(Error("", "Pod", R"({"spec":{"containers":{"name":"a"}}})"),
            "json: cannot unmarshal object into Go struct field "
            "PodSpec.spec.containers of type []v1.Container");
  EXPECT_EQ(Error("", "Pod", R"({"metadata":{"labels":["a"]}})"),
            "json: cannot unmarshal array into Go struct field "
            "ObjectMeta.metadata.labels of type map[string]string");
  EXPECT_EQ(Error("", "Namespace", R"({"spec":{"finalizers":"kubernetes"}})"),
            "json: cannot unmarshal string into Go struct field "
            "NamespaceSpec.spec.finalizers of type []string");
  EXPECT_EQ(Error("", "ConfigMap", R"({"immutable":"yes"})"),
            "json: cannot unmarshal string into Go struct field "
            "ConfigMap.immutable of type bool");
  // The first error in the document wins.
  EXPECT_EQ(Error("", "ConfigMap", R"({"data":{"a":1},"immutable":"x"})"),
            "json: cannot unmarshal number into Go struct field "
            "ConfigMap.data of type string");
}

TEST(BuiltinSchemaTest, CustomUnmarshalersAnswerWithTheirOwnErrors) {
  EXPECT_EQ(Error("", "Service",
                  R"({"spec":{"ports":[{"port":80,"targetPort":true}]}})"),
            "json: cannot unmarshal bool into Go value of type int32");
  EXPECT_EQ(Error("", "Service",
                  R"({"spec":{"ports":[{"port":80,"targetPort":"http"}]}})"),
            "");
  EXPECT_EQ(Error("", "Pod",
                  R"({"spec":{"containers":[{"name":"a","resources":)"
                  R"({"limits":{"cpu":"lots"}}}]}})"),
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  EXPECT_EQ(Error("", "Pod",
                  R"({"spec":{"containers":[{"name":"a","resources":)"
                  R"({"limits":{"cpu":"500m","memory":"1Gi","x":2,)"
                  R"("y":"1e3"}}}]}})"),
            "");
  EXPECT_EQ(
      Error("coordination.k8s.io", "Lease", R"({"spec":{"renewTime":12}})"),
      "json: cannot unmarshal number into Go value of type string");
}

TEST(BuiltinSchemaTest, NullsDecodeToZeroValues) {
  EXPECT_EQ(Error("apps", "Deployment",
                  R"({"spec":{"replicas":null,"selector":null},)"
                  R"("metadata":{"labels":{"a":null}}})"),
            "");
}

TEST(BuiltinSchemaTest, SecretDataMustBeBase64) {
  EXPECT_EQ(Error("", "Secret", R"({"data":{"k":"aGVsbG8="}})"), "");
  EXPECT_EQ(Error("", "Secret", R"({"data":{"k":"hello!"}})"),
            "illegal base64 data at input byte 5");
  EXPECT_EQ(Error("", "Secret", R"({"data":{"k":5}})"),
            "json: cannot unmarshal number into Go struct field Secret.data "
            "of type []uint8");
  EXPECT_EQ(Error("", "ConfigMap", R"({"binaryData":{"k":"%%"}})"),
            "illegal base64 data at input byte 0");
}

// Go's base64.StdEncoding: padding required, newlines skipped, nothing
// after the padding.
TEST(BuiltinSchemaTest, Base64OffsetsAreGos) {
  int64_t bad = -1;
  EXPECT_EQ(DecodeBase64Length("", &bad), 0);
  EXPECT_EQ(DecodeBase64Length("aGVsbG8=", &bad), 5);
  EXPECT_EQ(DecodeBase64Length("aGVs\nbG8=\r\n", &bad), 5);
  EXPECT_EQ(DecodeBase64Length("YQ==", &bad), 1);
  EXPECT_EQ(DecodeBase64Length("YWJj", &bad), 3);
  EXPECT_EQ(DecodeBase64Length("aGVsbG8", &bad), -1);
  EXPECT_EQ(bad, 4);
  EXPECT_EQ(DecodeBase64Length("YQ=", &bad), -1);
  EXPECT_EQ(bad, 3);
  EXPECT_EQ(DecodeBase64Length("YQ==YQ==", &bad), -1);
  EXPECT_EQ(bad, 4);
  EXPECT_EQ(DecodeBase64Length("Y===", &bad), -1);
  EXPECT_EQ(bad, 1);
  EXPECT_EQ(DecodeBase64Length("YQ=x", &bad), -1);
  EXPECT_EQ(bad, 2);
  EXPECT_EQ(DecodeBase64Length("a b", &bad), -1);
  EXPECT_EQ(bad, 1);
}

TEST(BuiltinSchemaTest, UnknownFieldsAreNamedAsTheStrictDecoderDoes) {
  DecodeReport r = Decode("apps", "Deployment",
                          R"({"spec":{"replica":3,"template":{"spec":)"
                          R"({"containers":[{"name":"a","imagee":"x"}]}}},)"
                          R"("metadata":{"name":"d","labelz":{}},"extra":1})");
  EXPECT_EQ(r.error, "");
  EXPECT_THAT(
      r.unknown_fields,
      ElementsAre("spec.replica", "spec.template.spec.containers[0].imagee",
                  "metadata.labelz", "extra"));
  // Open structs keep what they are given; maps have no unknown keys.
  r = Decode("", "Pod",
             R"({"spec":{"affinity":{"anything":1},"nodeSelector":{"x":"y"}},)"
             R"("status":{"whatever":true}})");
  EXPECT_THAT(r.unknown_fields, IsEmpty());
  // Strategic merge patch directives are not fields.
  r = Decode("", "Pod",
             R"({"spec":{"$setElementOrder/containers":[{"name":"a"}],)"
             R"("containers":[{"name":"a","$patch":"delete"}]}})",
             /*patch=*/true);
  EXPECT_THAT(r.unknown_fields, IsEmpty());
}

TEST(BuiltinSchemaTest, DropUnknownFieldsKeepsWhatTheTypeHas) {
  rapidjson::Document doc =
      Parse(R"({"spec":{"replica":3,"replicas":2,"template":{"spec":)"
            R"({"containers":[{"name":"a","imagee":"x"}],)"
            R"("affinity":{"custom":1}}}},"extra":1})");
  DropUnknownFields(*BuiltinKindType("apps", "Deployment"), &doc);
  EXPECT_EQ(*json::JsonToString(doc),
            R"({"spec":{"replicas":2,"template":{"spec":{"containers":)"
            R"([{"name":"a"}],"affinity":{"custom":1}}}}})");
}

}  // namespace
}  // namespace kcr::apiserver
