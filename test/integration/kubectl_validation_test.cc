// What a kubectl user sees when a manifest of a built-in kind is one a real
// cluster refuses: `kubectl apply -f` exits 1 with kube-apiserver's message
// on stderr, and nothing is stored, so the namespace stays readable by
// every typed client (`kubectl describe`). Runs the kubectl on the PATH
// (a dispatcher that picks the version matching /version).
#include <memory>
#include <string>
#include <vector>

#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_apiserver_fixture.h"
#include "test/integration/kubectl_harness.h"

namespace kcr::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class KubectlValidationTest : public KubectlApiServerFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.controllers.node_simulator = false;
    ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
  }

  KubectlResult Apply(const std::string& manifest,
                      const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"apply", "-f", "-"};
    args.insert(args.end(), extra.begin(), extra.end());
    return kubectl_->Run(args, manifest);
  }

  // Applies a manifest that must be accepted.
  void MustApply(const std::string& manifest) {
    KubectlResult r = Apply(manifest);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
};

constexpr char kDeployment[] = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
)";

std::string Replace(std::string text, const std::string& from,
                    const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST_F(KubectlValidationTest, AConfigMapWithANumberIsRefusedAndNotStored) {
  KubectlResult r = Apply(R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  port: 8080
)");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err,
              HasSubstr("Error from server (BadRequest): error when creating "
                        "\"STDIN\": ConfigMap in version \"v1\" cannot be "
                        "handled as a ConfigMap: json: cannot unmarshal number "
                        "into Go struct field ConfigMap.data of type string"));
  // Typed readers of the namespace keep working.
  MustApply(R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: good
data:
  port: "8080"
)");
  KubectlResult describe = kubectl_->Run({"describe", "configmaps"});
  EXPECT_EQ(describe.exit_code, 0) << describe.err;
  EXPECT_THAT(describe.out, HasSubstr("good"));
  EXPECT_THAT(describe.out, Not(HasSubstr("settings")));
}

TEST_F(KubectlValidationTest, SecretDataMustBeBase64) {
  KubectlResult r = Apply(R"(apiVersion: v1
kind: Secret
metadata:
  name: creds
data:
  password: hunter2!
)");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err,
              HasSubstr("Secret in version \"v1\" cannot be handled as "
                        "a Secret: illegal base64 data at input byte 7"));
  EXPECT_EQ(kubectl_->Run({"get", "secret", "creds"}).exit_code, 1);
}

TEST_F(KubectlValidationTest, UnknownFieldsFollowValidate) {
  const std::string typo = Replace(kDeployment, "replicas: 2", "replica: 3");
  KubectlResult r = Apply(typo);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("strict decoding error: unknown field "
                               "\"spec.replica\""));
  EXPECT_EQ(kubectl_->Run({"get", "deployment", "web"}).exit_code, 1);

  // --validate=warn: created, the field dropped, a warning printed.
  r = Apply(typo, {"--validate=warn"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("unknown field \"spec.replica\""));
  KubectlResult got =
      kubectl_->Run({"get", "deployment", "web", "-o", "jsonpath={.spec}"});
  EXPECT_EQ(got.exit_code, 0) << got.err;
  EXPECT_THAT(got.out, Not(HasSubstr("\"replica\"")));
  EXPECT_THAT(got.out, HasSubstr("\"replicas\":1"));
}

TEST_F(KubectlValidationTest, DeploymentRulesAreKubeApiserversWith422) {
  KubectlResult r =
      Apply(Replace(kDeployment, "labels: {app: web}", "labels: {app: other}"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err,
              HasSubstr("The Deployment \"web\" is invalid: "
                        "spec.template.metadata.labels: Invalid value: "
                        "map[string]string{\"app\":\"other\"}: `selector` does "
                        "not match template `labels`"));

  r = Apply(R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: []
)");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err,
              HasSubstr("spec.template.spec.containers: Required value"));

  r = Apply(
      Replace(kDeployment, "image: nginx:1.25", "imagePullPolicy: Always"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err,
              HasSubstr("spec.template.spec.containers[0].image: Required "
                        "value"));
  EXPECT_EQ(kubectl_->Run({"get", "deployment", "web"}).exit_code, 1);

  // Once created, the selector does not change.
  MustApply(kDeployment);
  r = Apply(Replace(Replace(kDeployment, "matchLabels: {app: web}",
                            "matchLabels: {app: web, v: '2'}"),
                    "labels: {app: web}", "labels: {app: web, v: '2'}"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("spec.selector: Invalid value: "
                               "v1.LabelSelector{MatchLabels:map[string]"
                               "string{\"app\":\"web\", \"v\":\"2\"}, "
                               "MatchExpressions:[]v1.LabelSelectorRequirement"
                               "(nil)}: field is immutable"));
  // Everything else does.
  MustApply(Replace(kDeployment, "replicas: 2", "replicas: 4"));
}

TEST_F(KubectlValidationTest, PodSpecsAreImmutableButImages) {
  const std::string pod = R"(apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    image: nginx:1.25
)";
  MustApply(pod);
  MustApply(Replace(pod, "nginx:1.25", "nginx:1.26"));
  KubectlResult r = Apply(Replace(
      pod, "  - name: c\n", "  - name: c\n    env: [{name: A, value: b}]\n"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("The Pod \"p\" is invalid: spec: Forbidden: pod "
                               "updates may not change fields other than "
                               "`spec.containers[*].image`"));
}

TEST_F(KubectlValidationTest, ImmutableConfigMaps) {
  const std::string cm = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: frozen
immutable: true
data:
  a: b
)";
  MustApply(cm);
  KubectlResult r = Apply(Replace(cm, "a: b", "a: c"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("The ConfigMap \"frozen\" is invalid: data: "
                               "Forbidden: field is immutable when `immutable` "
                               "is set"));
}

TEST_F(KubectlValidationTest, ConfigMapDataIsAtMostOneMebibyte) {
  std::string cm =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  a: ";
  cm += std::string((1 << 20) + 1, 'x');
  cm += "\n";
  // create: apply would copy the data into an annotation as well.
  KubectlResult r = kubectl_->Run({"create", "-f", "-"}, cm);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("The ConfigMap \"big\" is invalid: []: Too "
                               "long: must have at most 1048576 bytes"));
}

}  // namespace
}  // namespace kcr::integration
