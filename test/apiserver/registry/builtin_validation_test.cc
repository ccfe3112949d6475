// The built-in kinds' decoding and validation, through the Registry as a
// request reaches it: 400 for what does not decode or (Strict) has unknown
// fields, 422 with every cause for what kube-apiserver's validation
// refuses, and nothing stored in either case.
#include "apiserver/registry/builtin_validation.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/registry_fixture.h"

namespace kcr::apiserver {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// The causes of a 422, as "<field>|<reason>|<message>".
std::vector<std::string> Causes(const absl::Status& s) {
  std::vector<std::string> out;
  std::optional<api::StatusError> e = api::GetStatusError(s);
  if (!e.has_value()) return out;
  for (const auto& c : e->causes) {
    out.push_back(absl::StrCat(c.field, "|", c.reason, "|", c.message));
  }
  return out;
}

constexpr char kDeployment[] =
    R"({"metadata":{"name":"web"},"spec":{"replicas":2,)"
    R"("selector":{"matchLabels":{"app":"web"}},)"
    R"("template":{"metadata":{"labels":{"app":"web"}},)"
    R"("spec":{"containers":[{"name":"nginx","image":"nginx:1.25"}]}}}})";

class BuiltinValidationTest : public RegistryFixture {
 protected:
  BuiltinValidationTest()
      : configmaps_(Resource("", "v1", "configmaps")),
        secrets_(Resource("", "v1", "secrets")),
        pods_(Resource("", "v1", "pods")),
        services_(Resource("", "v1", "services")),
        deployments_(Resource("apps", "v1", "deployments")),
        replicasets_(Resource("apps", "v1", "replicasets")) {}

  absl::Status Create(const ResourceInfoPtr& r, const std::string& json,
                      const std::string& validation = "Strict") {
    WriteOptions options;
    options.field_validation = validation;
    return registry_.Create(*r, "default", FromJson(json), options).status();
  }

  absl::Status Update(const ResourceInfoPtr& r, const std::string& name,
                      const std::string& json) {
    WriteOptions options;
    options.field_validation = "Strict";
    return registry_.Update(*r, "default", name, FromJson(json), options)
        .status();
  }

  absl::Status MergePatch(const ResourceInfoPtr& r, const std::string& name,
                          const std::string& patch) {
    PatchOptions options;
    options.field_validation = "Strict";
    return registry_
        .Patch(*r, "default", name, api::PatchType::kMerge, patch, options)
        .status();
  }

  bool Stored(const ResourceInfoPtr& r, const std::string& name) {
    return registry_.Get(*r, "default", name).ok();
  }

  ResourceInfoPtr configmaps_, secrets_, pods_, services_, deployments_,
      replicasets_;
};

TEST_F(BuiltinValidationTest, AValueOfTheWrongTypeIsABadRequestAndNotStored) {
  absl::Status s =
      Create(configmaps_, R"({"metadata":{"name":"c"},"data":{"port":8080}})");
  ASSERT_TRUE(api::IsBadRequest(s)) << s;
  EXPECT_EQ(Message(s),
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: "
            "json: cannot unmarshal number into Go struct field "
            "ConfigMap.data of type string");
  EXPECT_FALSE(Stored(configmaps_, "c"));
  // Whatever the field validation: decoding comes first.
  s = Create(configmaps_, R"({"metadata":{"name":"c"},"data":{"port":8080}})",
             "Ignore");
  EXPECT_TRUE(api::IsBadRequest(s)) << s;
  // An update too.
  ASSERT_TRUE(
      Create(configmaps_, R"({"metadata":{"name":"c"},"data":{"a":"b"}})")
          .ok());
  s = Update(configmaps_, "c",
             R"({"metadata":{"name":"c"},"data":{"a":true}})");
  EXPECT_TRUE(api::IsBadRequest(s)) << s;
  EXPECT_THAT(Message(s), HasSubstr("cannot unmarshal bool"));
}

TEST_F(BuiltinValidationTest, SecretDataThatIsNotBase64IsABadRequest) {
  absl::Status s = Create(
      secrets_, R"({"metadata":{"name":"s"},"data":{"k":"not base64"}})");
  ASSERT_TRUE(api::IsBadRequest(s)) << s;
  EXPECT_EQ(Message(s),
            "Secret in version \"v1\" cannot be handled as a Secret: illegal "
            "base64 data at input byte 3");
  EXPECT_FALSE(Stored(secrets_, "s"));
}

TEST_F(BuiltinValidationTest, UnknownFieldsFollowFieldValidation) {
  const std::string body =
      absl::StrCat(R"({"metadata":{"name":"web"},"spec":{"replica":3,)",
                   std::string(kDeployment)
                       .substr(std::string(kDeployment).find(R"("replicas")")));
  absl::Status s = Create(deployments_, body, "Strict");
  ASSERT_TRUE(api::IsBadRequest(s)) << s;
  EXPECT_EQ(Message(s),
            "Deployment in version \"v1\" cannot be handled as a Deployment: "
            "strict decoding error: unknown field \"spec.replica\"");
  EXPECT_FALSE(Stored(deployments_, "web"));

  WriteOptions warn;
  warn.field_validation = "Warn";
  absl::StatusOr<WriteResult> created =
      registry_.Create(*deployments_, "default", FromJson(body), warn);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_THAT(created->warnings, ElementsAre("unknown field \"spec.replica\""));
  // Dropped, as decoding into the Go type drops it.
  EXPECT_THAT(created->object->ToJson(), Not(HasSubstr("replica\"")));

  ASSERT_TRUE(registry_.Delete(*deployments_, "default", "web").ok());
  WriteOptions ignore;
  ignore.field_validation = "Ignore";
  created = registry_.Create(*deployments_, "default", FromJson(body), ignore);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_TRUE(created->warnings.empty());
  EXPECT_THAT(created->object->ToJson(), Not(HasSubstr("replica\"")));

  // In a patch as well.
  s = MergePatch(deployments_, "web", R"({"spec":{"replica":3}})");
  EXPECT_TRUE(api::IsBadRequest(s)) << s;
  EXPECT_EQ(Message(s),
            "strict decoding error: unknown field \"spec.replica\"");
}

TEST_F(BuiltinValidationTest, APatchThatBreaksTheTypesIsInvalid) {
  ASSERT_TRUE(
      Create(configmaps_, R"({"metadata":{"name":"c"},"data":{"a":"b"}})")
          .ok());
  absl::Status s = MergePatch(configmaps_, "c", R"({"data":{"port":8080}})");
  ASSERT_TRUE(api::IsInvalid(s)) << s;
  EXPECT_THAT(Message(s),
              HasSubstr("json: cannot unmarshal number into Go struct field "
                        "ConfigMap.data of type string"));
  ASSERT_EQ(Causes(s).size(), 1u);
  EXPECT_THAT(Causes(s)[0], HasSubstr("patch|FieldValueInvalid|"));
}

TEST_F(BuiltinValidationTest, DeploymentSelectorMustMatchTemplateLabels) {
  std::string body = kDeployment;
  body.replace(body.find(R"("labels":{"app":"web"})"),
               std::string(R"("labels":{"app":"web"})").size(),
               R"("labels":{"app":"other","tier":"x"})");
  absl::Status s = Create(deployments_, body);
  ASSERT_TRUE(api::IsInvalid(s)) << s;
  EXPECT_EQ(Message(s),
            "Deployment.apps \"web\" is invalid: "
            "spec.template.metadata.labels: Invalid value: "
            "map[string]string{\"app\":\"other\", \"tier\":\"x\"}: "
            "`selector` does not match template `labels`");
  EXPECT_THAT(Causes(s),
              ElementsAre("spec.template.metadata.labels|FieldValueInvalid|"
                          "Invalid value: map[string]string{\"app\":\"other\", "
                          "\"tier\":\"x\"}: `selector` does not match "
                          "template `labels`"));
  EXPECT_FALSE(Stored(deployments_, "web"));
}

TEST_F(BuiltinValidationTest, DeploymentRequiredFields) {
  absl::Status s =
      Create(deployments_,
             R"({"metadata":{"name":"web"},"spec":{"template":{"metadata":)"
             R"({"labels":{"app":"web"}},"spec":{"containers":[]}}}})");
  ASSERT_TRUE(api::IsInvalid(s)) << s;
  EXPECT_THAT(
      Causes(s),
      ElementsAre("spec.selector|FieldValueRequired|Required value",
                  "spec.template.metadata.labels|FieldValueInvalid|Invalid "
                  "value: map[string]string{\"app\":\"web\"}: `selector` does "
                  "not match template `labels`",
                  "spec.template.spec.containers|FieldValueRequired|Required "
                  "value"));

  std::string body = kDeployment;
  body.replace(
      body.find(R"({"name":"nginx","image":"nginx:1.25"})"),
      std::string(R"({"name":"nginx","image":"nginx:1.25"})").size(),
      R"({"image":"nginx"},{"name":"Web"},{"name":"Web","image":"x"})");
  s = Create(deployments_, body);
  ASSERT_TRUE(api::IsInvalid(s)) << s;
  EXPECT_THAT(
      Causes(s),
      ElementsAre(
          "spec.template.spec.containers[0].name|FieldValueRequired|Required "
          "value",
          HasSubstr("spec.template.spec.containers[1].name|FieldValueInvalid|"
                    "Invalid value: \"Web\": a lowercase RFC 1123 label"),
          "spec.template.spec.containers[1].image|FieldValueRequired|Required "
          "value",
          HasSubstr("spec.template.spec.containers[2].name|FieldValueInvalid|"),
          "spec.template.spec.containers[2].name|FieldValueDuplicate|"
          "Duplicate value: \"Web\""));
}

TEST_F(BuiltinValidationTest, DeploymentSelectorIsImmutable) {
  ASSERT_TRUE(Create(deployments_, kDeployment).ok());
  absl::Status s = MergePatch(
      deployments_, "web",
      R"({"spec":{"selector":{"matchLabels":{"app":"web","v":"2"}},)"
      R"("template":{"metadata":{"labels":{"app":"web","v":"2"}}}}})");
  ASSERT_TRUE(api::IsInvalid(s)) << s;
  EXPECT_EQ(Message(s),
            "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: "
            "v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\", "
            "\"v\":\"2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
            ": field is immutable");
  // Everything else in the spec may change.
  EXPECT_TRUE(
      MergePatch(deployments_, "web", R"({"spec":{"replicas":5}})").ok());
}

TEST_F(BuiltinValidationTest, ReplicaSetsFollowTheDeploymentRules) {
  std::string body = kDeployment;
  body.replace(body.find(R"("labels":{"app":"web"})"),
               std::string(R"("labels":{"app":"web"})").size(),
               R"("labels":{"app":"x"})");
  absl::Status s = Create(replicasets_, body);
  ASSERT_TRUE(api::IsInvalid(s)) << s;
  EXPECT_EQ(Message(s),
            "ReplicaSet.apps \"web\" is invalid: "
            "spec.template.metadata.labels: Invalid value: "
            "map[string]string{\"app\":\"x\"}: `selector` does not match "
            "template `labels`");
  ASSERT_TRUE(Create(replicasets_, kDeployment).ok());
  s = MergePatch(replicasets_, "web",
                 R"({"spec":{"selector":{"matchLabels":{"app":"other"}}}})");
  EXPECT_THAT(Message(s), HasSubstr("spec.selector: Invalid value: "
                                    "v1.LabelSelector{MatchLabels:map[string]"
                                    "string{\"app\":\"other\"}"));
  EXPECT_THAT(Message(s), HasSubstr("field is immutable"));
  EXPECT_TRUE(
      MergePatch(replicasets_, "web", R"({"spec":{"replicas":0}})").ok());
}

TEST_F(BuiltinValidationTest, PodSpecChangesAreForbiddenButImages) {
  // Without the token volume, whose mount a merge patch of the containers
  // would drop (a forbidden change, as on a cluster).
  ASSERT_TRUE(Create(pods_, R"({"metadata":{"name":"p"},"spec":{)"
                            R"("automountServiceAccountToken":false,)"
                            R"("containers":)"
                            R"([{"name":"c","image":"nginx:1"}]}})")
                  .ok());
  EXPECT_TRUE(MergePatch(pods_, "p",
                         R"({"spec":{"containers":[{"name":"c",)"
                         R"("image":"nginx:2"}]}})")
                  .ok());
  absl::Status s = MergePatch(pods_, "p", R"({"spec":{"hostname":"h"}})");
  ASSERT_TRUE(api::IsInvalid(s)) << s;
  EXPECT_THAT(Message(s),
              HasSubstr("Pod \"p\" is invalid: spec: Forbidden: pod updates "
                        "may not change fields other than "
                        "`spec.containers[*].image`"));
  s = MergePatch(pods_, "p",
                 R"({"spec":{"containers":[{"name":"c","image":"a"},)"
                 R"({"name":"d","image":"b"}]}})");
  ASSERT_TRUE(api::IsInvalid(s)) << s;
  EXPECT_THAT(Message(s),
              HasSubstr("spec.containers: Forbidden: pod updates may not add "
                        "or remove containers"));
  // Labels and status are not the spec.
  EXPECT_TRUE(
      MergePatch(pods_, "p", R"({"metadata":{"labels":{"a":"b"}}})").ok());
  // Binding: nodeName from unset to a node.
  EXPECT_TRUE(MergePatch(pods_, "p", R"({"spec":{"nodeName":"n1"}})").ok());
  EXPECT_TRUE(
      api::IsInvalid(MergePatch(pods_, "p", R"({"spec":{"nodeName":"n2"}})")));
}

TEST_F(BuiltinValidationTest, ImmutableConfigMapsAndSecrets) {
  ASSERT_TRUE(Create(configmaps_,
                     R"({"metadata":{"name":"c"},"immutable":true,)"
                     R"("data":{"a":"b"}})")
                  .ok());
  absl::Status s = MergePatch(configmaps_, "c", R"({"data":{"a":"c"}})");
  ASSERT_TRUE(api::IsInvalid(s)) << s;
  EXPECT_EQ(Message(s),
            "ConfigMap \"c\" is invalid: data: Forbidden: field is immutable "
            "when `immutable` is set");
  s = MergePatch(configmaps_, "c", R"({"immutable":false})");
  EXPECT_THAT(Causes(s), ElementsAre("immutable|FieldValueForbidden|Forbidden: "
                                     "field is immutable when `immutable` is "
                                     "set"));
  // Metadata still changes.
  EXPECT_TRUE(
      MergePatch(configmaps_, "c", R"({"metadata":{"labels":{"a":"b"}}})")
          .ok());

  ASSERT_TRUE(Create(secrets_, R"({"metadata":{"name":"s"},"immutable":true,)"
                               R"("data":{"a":"Yg=="}})")
                  .ok());
  s = MergePatch(secrets_, "s", R"({"data":{"a":"Yw=="}})");
  EXPECT_THAT(Causes(s), ElementsAre("data|FieldValueForbidden|Forbidden: "
                                     "field is immutable when `immutable` is "
                                     "set"));
  s = MergePatch(secrets_, "s", R"({"type":"kubernetes.io/tls"})");
  EXPECT_THAT(Causes(s),
              ElementsAre("type|FieldValueInvalid|Invalid value: "
                          "\"kubernetes.io/tls\": field is immutable",
                          "data[tls.crt]|FieldValueRequired|Required value",
                          "data[tls.key]|FieldValueRequired|Required value"));
}

TEST_F(BuiltinValidationTest, DataOfAConfigMapOrSecretIsAtMostOneMebibyte) {
  const std::string at_limit(kMaxConfigMapDataBytes - 1, 'x');
  EXPECT_TRUE(Create(configmaps_, absl::StrCat(R"({"metadata":{"name":"c"},)",
                                               R"("data":{"a":")", at_limit,
                                               R"(","b":"y"}})"))
                  .ok());
  absl::Status s =
      Create(configmaps_,
             absl::StrCat(R"({"metadata":{"name":"d"},)", R"("data":{"a":")",
                          at_limit, R"(","b":"yy"}})"));
  ASSERT_TRUE(api::IsInvalid(s)) << s;
  EXPECT_EQ(Message(s),
            "ConfigMap \"d\" is invalid: []: Too long: must have at most "
            "1048576 bytes");
  EXPECT_THAT(Causes(s), ElementsAre("[]|FieldValueTooLong|Too long: must "
                                     "have at most 1048576 bytes"));
  // A Secret counts decoded bytes: 4 base64 characters are 3 bytes.
  std::string encoded;
  for (size_t i = 0; i < kMaxConfigMapDataBytes / 3; ++i) encoded += "YWJj";
  EXPECT_TRUE(
      Create(secrets_, absl::StrCat(R"({"metadata":{"name":"s"},)",
                                    R"("data":{"a":")", encoded, R"("}})"))
          .ok());
  s = Create(secrets_, absl::StrCat(R"({"metadata":{"name":"t"},)",
                                    R"("data":{"a":")", encoded, R"(YWJj"}})"));
  EXPECT_EQ(Message(s),
            "Secret \"t\" is invalid: data: Too long: must have at most "
            "1048576 bytes");
}

TEST_F(BuiltinValidationTest, ConfigKeys) {
  absl::Status s =
      Create(configmaps_, R"({"metadata":{"name":"c"},"data":{"a b":"x"},)"
                          R"("binaryData":{"k":"eA==","..":"eA=="}})");
  EXPECT_THAT(Causes(s),
              ElementsAre(HasSubstr("data[a b]|FieldValueInvalid|Invalid "
                                    "value: \"a b\": a valid config key"),
                          "binaryData[..]|FieldValueInvalid|Invalid value: "
                          "\"..\": must not be '..'"));
}

TEST_F(BuiltinValidationTest, ServicePorts) {
  absl::Status s = Create(services_, R"({"metadata":{"name":"s"},"spec":{}})");
  EXPECT_THAT(Causes(s),
              ElementsAre("spec.ports|FieldValueRequired|Required value"));
  s = Create(services_,
             R"({"metadata":{"name":"s"},"spec":{"ports":[{"port":70000}]}})");
  EXPECT_THAT(Causes(s), ElementsAre("spec.ports[0].port|FieldValueInvalid|"
                                     "Invalid value: 70000: must be between 1 "
                                     "and 65535, inclusive"));
  EXPECT_TRUE(Create(services_,
                     R"({"metadata":{"name":"h"},"spec":{"clusterIP":"None"}})")
                  .ok());
}

}  // namespace
}  // namespace kcr::apiserver
