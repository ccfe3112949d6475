#include "apiserver/registry/builtin_schema.h"

#include <set>
#include <string>
#include <vector>

#include "api/json/json_util.h"
#include "apiserver/registry/resources.h"
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

// The field `path` (dotted) of `type`, or nullptr.
const GoType* FieldAt(const GoType* type, const std::string& path) {
  size_t start = 0;
  while (type != nullptr && start <= path.size()) {
    size_t dot = path.find('.', start);
    if (dot == std::string::npos) dot = path.size();
    type = type->Field(path.substr(start, dot - start));
    start = dot + 1;
  }
  return type;
}

// The generated tables have every resource of Kubernetes 1.33, served here
// or not, each version of each group.
TEST(BuiltinSchemaTest, TablesCoverEveryResourceOfKubernetes133) {
  const std::vector<BuiltinResource>& resources = BuiltinResources();
  EXPECT_EQ(resources.size(), 88u);
  std::set<std::string> group_versions;
  for (const BuiltinResource& r : resources) {
    group_versions.insert(r.group + "/" + r.version);
    ASSERT_NE(r.type, nullptr) << r.plural;
    EXPECT_EQ(r.type->kind, GoType::Kind::kStruct) << r.plural;
    EXPECT_EQ(r.type->name, r.version + "." + r.kind) << r.plural;
    EXPECT_NE(r.type->Field("metadata"), nullptr) << r.plural;
    EXPECT_NE(r.type->Field("apiVersion"), nullptr) << r.plural;
  }
  EXPECT_EQ(group_versions.size(), 35u);
  EXPECT_EQ(resources.front().group, "");
  EXPECT_EQ(resources.front().plural, "bindings");

  const GoType* vap = BuiltinKindType("admissionregistration.k8s.io", "v1",
                                      "ValidatingAdmissionPolicy");
  ASSERT_NE(vap, nullptr);
  EXPECT_STREQ(vap->openapi_name,
               "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy");
  EXPECT_EQ(FieldAt(vap, "spec.validations")->name, "[]v1.Validation");
  EXPECT_EQ(FieldAt(vap, "spec.failurePolicy")->kind, GoType::Kind::kString);
  EXPECT_NE(BuiltinKindType("admissionregistration.k8s.io", "v1beta1",
                            "ValidatingAdmissionPolicy"),
            nullptr);

  const GoType* sts = BuiltinKindType("apps", "StatefulSet");
  ASSERT_NE(sts, nullptr);
  EXPECT_EQ(FieldAt(sts, "spec.replicas")->kind, GoType::Kind::kInt32);
  EXPECT_EQ(FieldAt(sts, "spec.volumeClaimTemplates")->name,
            "[]v1.PersistentVolumeClaim");
  EXPECT_EQ(FieldAt(sts, "spec.ordinals.start")->kind, GoType::Kind::kInt32);

  const GoType* cron = BuiltinKindType("batch", "v1", "CronJob");
  ASSERT_NE(cron, nullptr);
  EXPECT_EQ(FieldAt(cron, "spec.startingDeadlineSeconds")->kind,
            GoType::Kind::kInt64);
  EXPECT_EQ(FieldAt(cron, "spec.jobTemplate")->name, "v1.JobTemplateSpec");
  const GoType* cron_spec = FieldAt(cron, "spec");
  for (const GoField& f : cron_spec->fields) {
    if (f.name == "schedule") {
      EXPECT_TRUE(f.required);
      EXPECT_THAT(f.description, ::testing::HasSubstr("Cron format"));
    }
  }
  EXPECT_EQ(Error("batch", "CronJob", R"({"spec":{"schedule":5}})"),
            "json: cannot unmarshal number into Go struct field "
            "CronJobSpec.spec.schedule of type string");

  // autoscaling has v1 and v2: kube prefers v2.
  const GoType* hpa = BuiltinKindType("autoscaling", "HorizontalPodAutoscaler");
  ASSERT_NE(hpa, nullptr);
  EXPECT_EQ(hpa,
            BuiltinKindType("autoscaling", "v2", "HorizontalPodAutoscaler"));
  EXPECT_EQ(hpa->name, "v2.HorizontalPodAutoscaler");
  EXPECT_EQ(FieldAt(hpa, "spec.metrics")->name, "[]v2.MetricSpec");
  EXPECT_EQ(Error("autoscaling", "HorizontalPodAutoscaler",
                  R"({"spec":{"metrics":[{"type":"Pods","pods":{"target":)"
                  R"({"type":"AverageValue","averageValue":"lots"}}}]}})"),
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  EXPECT_EQ(
      BuiltinKindType("autoscaling", "v1", "HorizontalPodAutoscaler")->name,
      "v1.HorizontalPodAutoscaler");

  // Definitions by their kube-openapi names, apimachinery's included.
  EXPECT_EQ(BuiltinDefinition("io.k8s.api.core.v1.PodSpec"),
            FieldAt(BuiltinKindType("", "Pod"), "spec"));
  EXPECT_NE(
      BuiltinDefinition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
      nullptr);
  EXPECT_EQ(BuiltinDefinition("io.k8s.api.core.v1.Nothing"), nullptr);
}

// What the server serves is what 1.33 has under the same name: group,
// version, plural, kind and scope.
TEST(BuiltinSchemaTest, ServedResourcesAgreeWithKubernetes133) {
  ResourceRegistry registry;
  int served = 0;
  for (const ResourceInfoPtr& r : registry.All()) {
    if (r->custom) continue;
    ++served;
    const BuiltinResource* kube = nullptr;
    for (const BuiltinResource& b : BuiltinResources()) {
      if (b.group == r->group() && b.version == r->version() &&
          b.plural == r->resource()) {
        kube = &b;
      }
    }
    ASSERT_NE(kube, nullptr) << r->group() << "/" << r->resource();
    EXPECT_EQ(kube->kind, r->kind()) << r->resource();
    EXPECT_EQ(kube->namespaced, r->namespaced()) << r->resource();
    EXPECT_EQ(BuiltinKindType(r->group(), r->version(), r->kind()), kube->type);
  }
  EXPECT_GT(served, 14);
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
  // Every struct is typed to its last member, as kube's are: what an
  // affinity or a status does not have is unknown too.
  r = Decode("", "Pod",
             R"({"spec":{"affinity":{"anything":1},"nodeSelector":{"x":"y"}},)"
             R"("status":{"whatever":true}})");
  EXPECT_THAT(r.unknown_fields,
              ElementsAre("spec.affinity.anything", "status.whatever"));
  // Raw extensions keep what they are given; maps have no unknown keys.
  r = Decode("apps", "ControllerRevision",
             R"({"data":{"anything":1},"metadata":{"labels":{"x":"y"}}})");
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
            R"([{"name":"a"}],"affinity":{}}}}})");
}

}  // namespace
}  // namespace kcr::apiserver
