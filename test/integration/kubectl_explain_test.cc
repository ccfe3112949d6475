// `kubectl explain` of the custom resources and the built-in kinds, with
// the kubectl the dispatcher on the PATH picks for the server's /version
// (an old and a new minor): it reads the OpenAPI v3 documents built from
// the CRDs and from the generated built-in types, so their fields, types
// and descriptions are printed. Serving OpenAPI must
// not change what apply does with custom resources (server-side field
// validation, JSON merge patches).
#include <unistd.h>

#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "apiserver/api_server.h"
#include "apiserver/registry/resources.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_apiserver_fixture.h"
#include "test/integration/kubectl_harness.h"

namespace kcr::integration {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kWidgetCrd[] = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A Widget is made in batches.
        properties:
          spec:
            type: object
            description: What the widget factory makes.
            required: [size]
            properties:
              size:
                type: integer
                description: How big each widget is, in millimetres.
              colour:
                type: string
                description: The paint on the widget.
)";

struct Version {
  std::string git_version;
  std::string minor;
};

void PrintTo(const Version& v, std::ostream* os) { *os << v.git_version; }

class KubectlExplainTest : public KubectlApiServerFixture,
                           public ::testing::WithParamInterface<Version> {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.controllers.node_simulator = false;
    options.git_version = GetParam().git_version;
    options.minor = GetParam().minor;
    ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
    char cwd[4096];
    ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
    const std::string crds = std::string(cwd) + "/manifests/crds/";
    KubectlResult r = kubectl_->Run({"apply", "-f", crds + "nginx.yaml", "-f",
                                     crds + "copyrator_rule.yaml", "-f",
                                     crds + "loadtest.yaml"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  KubectlResult Explain(const std::string& what) {
    return kubectl_->Run({"explain", what});
  }
};

TEST_P(KubectlExplainTest, TheServedVersionRuns) {
  KubectlResult r = kubectl_->Run({"version", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"minor\": \"" + GetParam().minor + "\""));
}

TEST_P(KubectlExplainTest, Nginx) {
  KubectlResult r = Explain("nginx");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("KIND: +Nginx"));
  EXPECT_THAT(r.out, ContainsRegex("VERSION: +v1"));
  EXPECT_THAT(r.out, ContainsRegex("apiVersion\t<string>"));
  EXPECT_THAT(r.out, ContainsRegex("metadata\t<ObjectMeta>"));
  EXPECT_THAT(r.out, ContainsRegex("spec\t<Object>"));
  EXPECT_THAT(r.out, ContainsRegex("status\t<Object>"));
}

TEST_P(KubectlExplainTest, NginxSpec) {
  KubectlResult r = Explain("nginx.spec");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("FIELD: +spec <Object>"));
  EXPECT_THAT(r.out, ContainsRegex("image\t<string>"));
  EXPECT_THAT(r.out, ContainsRegex("port\t<integer>"));
  EXPECT_THAT(r.out, ContainsRegex("replicas\t<integer>"));
  // The CRD's descriptions (manifests/crds/nginx.yaml).
  EXPECT_THAT(r.out, HasSubstr("What the Deployment runs."));
  EXPECT_THAT(r.out, HasSubstr("How many nginx pods to run"));
}

TEST_P(KubectlExplainTest, CopyratorsByPlural) {
  KubectlResult r = Explain("copyrators");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("GROUP: +flant.com"));
  EXPECT_THAT(r.out, ContainsRegex("KIND: +CopyratorRule"));
  KubectlResult field = Explain("copyrators.ruleType");
  ASSERT_EQ(field.exit_code, 0) << field.err;
  EXPECT_THAT(field.out, ContainsRegex("FIELD: +ruleType <string>"));
  EXPECT_THAT(field.out, HasSubstr("What to copy: configmap or secret."));
}

TEST_P(KubectlExplainTest, LoadTestSpecTest) {
  KubectlResult r = Explain("loadtest.spec.test");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("KIND: +LoadTest"));
  EXPECT_THAT(r.out, ContainsRegex("method\t<string>"));
  EXPECT_THAT(r.out, ContainsRegex("repeat\t<integer>"));
  EXPECT_THAT(r.out, ContainsRegex("serviceName\t<string> -required-"));
}

TEST_P(KubectlExplainTest, DescriptionsOfACrdCreatedLater) {
  EXPECT_NE(Explain("widgets").exit_code, 0);
  KubectlResult created = kubectl_->Run({"apply", "-f", "-"}, kWidgetCrd);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  KubectlResult r = Explain("widgets");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("A Widget is made in batches."));
  KubectlResult spec = Explain("widget.spec");
  ASSERT_EQ(spec.exit_code, 0) << spec.err;
  EXPECT_THAT(spec.out, HasSubstr("What the widget factory makes."));
  EXPECT_THAT(spec.out, ContainsRegex("size\t<integer> -required-"));
  EXPECT_THAT(spec.out, HasSubstr("How big each widget is, in millimetres."));
  KubectlResult meta = Explain("widget.metadata.name");
  ASSERT_EQ(meta.exit_code, 0) << meta.err;
  EXPECT_THAT(meta.out, ContainsRegex("FIELD: +name <string>"));

  KubectlResult deleted =
      kubectl_->Run({"delete", "crd", "widgets.example.com"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_NE(Explain("widgets").exit_code, 0);
}

// Built-in kinds: kube's field types (the Go types' names), required
// fields and descriptions.
TEST_P(KubectlExplainTest, BuiltinKinds) {
  KubectlResult r = Explain("pod.spec.containers");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("KIND: +Pod"));
  EXPECT_THAT(r.out, ContainsRegex("FIELD: +containers <\\[\\]Container>"));
  EXPECT_THAT(r.out, HasSubstr("List of containers belonging to the pod."));
  EXPECT_THAT(r.out, ContainsRegex("image\t<string>"));
  EXPECT_THAT(r.out, ContainsRegex("name\t<string> -required-"));
  EXPECT_THAT(r.out, ContainsRegex("ports\t<\\[\\]ContainerPort>"));
  EXPECT_THAT(r.out, ContainsRegex("resources\t<ResourceRequirements>"));
  EXPECT_THAT(r.out, HasSubstr("Container image name."));
  KubectlResult d = Explain("deployments.spec.replicas");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_THAT(d.out, ContainsRegex("GROUP: +apps"));
  EXPECT_THAT(d.out, ContainsRegex("FIELD: +replicas <integer>"));
  EXPECT_THAT(d.out, HasSubstr("Number of desired pods."));
  KubectlResult spec = Explain("deployment.spec");
  ASSERT_EQ(spec.exit_code, 0) << spec.err;
  EXPECT_THAT(spec.out, ContainsRegex("FIELD: +spec <DeploymentSpec>"));
  EXPECT_THAT(spec.out,
              HasSubstr("DeploymentSpec is the specification of the desired"));
  EXPECT_THAT(spec.out, ContainsRegex("selector\t<LabelSelector> -required-"));
  EXPECT_THAT(spec.out, ContainsRegex("strategy\t<DeploymentStrategy>"));
  EXPECT_THAT(spec.out,
              ContainsRegex("template\t<PodTemplateSpec> -required-"));
  KubectlResult cm = Explain("configmap");
  ASSERT_EQ(cm.exit_code, 0) << cm.err;
  EXPECT_THAT(cm.out, ContainsRegex("KIND: +ConfigMap"));
  EXPECT_THAT(cm.out, HasSubstr("ConfigMap holds configuration data for pods"));
  EXPECT_THAT(cm.out, ContainsRegex("data\t<map\\[string\\]string>"));
  EXPECT_THAT(cm.out, ContainsRegex("immutable\t<boolean>"));
  EXPECT_THAT(cm.out, ContainsRegex("metadata\t<ObjectMeta>"));
}

// Every built-in resource served has kube's description of its kind.
TEST_P(KubectlExplainTest, EveryServedBuiltinKindHasItsDescription) {
  apiserver::ResourceRegistry registry;
  for (const apiserver::ResourceInfoPtr& r : registry.All()) {
    if (r->custom) continue;
    const std::string name =
        r->group().empty() ? r->resource() : r->resource() + "." + r->group();
    // kubectl reads "events.events.k8s.io" as core events and a field
    // path: a plural the core group has too is named by --api-version.
    const bool core_too =
        !r->group().empty() && registry.Lookup("", "v1", r->resource());
    KubectlResult e = core_too
                          ? kubectl_->Run({"explain", r->resource(),
                                           "--api-version", r->api_version()})
                          : Explain(name);
    ASSERT_EQ(e.exit_code, 0) << name << ": " << e.err;
    EXPECT_THAT(e.out, ContainsRegex("KIND: +" + r->kind())) << name;
    const size_t at = e.out.find("DESCRIPTION:\n");
    ASSERT_NE(at, std::string::npos) << name;
    EXPECT_THAT(e.out.substr(at), Not(HasSubstr("<empty>"))) << name;
    EXPECT_THAT(e.out, ContainsRegex("metadata\t<ObjectMeta>")) << name;
  }
}

// With OpenAPI served, apply of a custom resource still validates on the
// server (fieldValidation=Strict) and updates with a JSON merge patch.
TEST_P(KubectlExplainTest, ApplyOfCustomResourcesIsUnchanged) {
  const std::string nginx = R"(apiVersion: example.org/v1
kind: Nginx
metadata: {name: web}
spec: {replicas: 1}
)";
  KubectlResult created = kubectl_->Run({"apply", "-f", "-"}, nginx);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  KubectlResult updated = kubectl_->Run({"apply", "-f", "-", "-v=8"},
                                        R"(apiVersion: example.org/v1
kind: Nginx
metadata: {name: web}
spec: {replicas: 3}
)");
  ASSERT_EQ(updated.exit_code, 0) << updated.err;
  EXPECT_THAT(updated.err, HasSubstr("application/merge-patch+json"));
  EXPECT_THAT(updated.err, Not(HasSubstr("strategic-merge-patch")));
  KubectlResult got =
      kubectl_->Run({"get", "nginx", "web", "-o", "jsonpath={.spec.replicas}"});
  EXPECT_EQ(got.out, "3");
  KubectlResult bad = kubectl_->Run({"apply", "-f", "-"},
                                    R"(apiVersion: example.org/v1
kind: Nginx
metadata: {name: typo}
spec: {replicas: 1, replica: 2}
)");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr(R"(unknown field "spec.replica")"));
}

// Built-in kinds keep strategic merge patches computed from kubectl's
// compiled-in types, and server-side validation.
TEST_P(KubectlExplainTest, ApplyOfBuiltinKindsIsUnchanged) {
  const std::string deployment = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: a, image: "busybox:1", env: [{name: X, value: "1"}]}
      - {name: b, image: "busybox:1"}
)";
  KubectlResult created = kubectl_->Run({"apply", "-f", "-"}, deployment);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  std::string changed = deployment;
  changed.replace(changed.find("env: [{name: X, value: \"1\"}]"),
                  std::string("env: [{name: X, value: \"1\"}]").size(),
                  "env: []");
  KubectlResult updated = kubectl_->Run({"apply", "-f", "-", "-v=8"}, changed);
  ASSERT_EQ(updated.exit_code, 0) << updated.err;
  EXPECT_THAT(updated.err, HasSubstr("application/strategic-merge-patch+json"));
  // Computed from kubectl's compiled-in types, which know the merge keys.
  EXPECT_THAT(updated.err, HasSubstr("$setElementOrder/containers"));
  KubectlResult bad = kubectl_->Run({"apply", "-f", "-"},
                                    R"(apiVersion: v1
kind: ConfigMap
metadata: {name: typo}
dta: {a: b}
)");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr(R"(unknown field "dta")"));
}

INSTANTIATE_TEST_SUITE_P(Minors, KubectlExplainTest,
                         ::testing::Values(Version{"v1.28.15", "28"},
                                           Version{"v1.33.1", "33"}),
                         [](const ::testing::TestParamInfo<Version>& info) {
                           return "Minor" + info.param.minor;
                         });

}  // namespace
}  // namespace kcr::integration
