// kubectl against the local API server for the patch paths: client-side
// `kubectl apply` (create, then strategic merge patches for edits),
// `kubectl apply --server-side` (create, update, conflicts, forcing),
// `kubectl patch --type strategic` (built-ins, and 415 for custom
// resources) and `kubectl scale`. Runs the kubectl on the PATH (a
// dispatcher that picks the version matching /version, here 1.32).
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/apiserver/api_server.h"
#include "test/apiserver/test_client.h"
#include "test/integration/kubectl_harness.h"

namespace kcr::integration {
namespace {

using ::testing::HasSubstr;
using apiserver::TestClient;
using apiserver::TestResponse;

class KubectlPatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    // Deployments keep the resourceVersion the test last wrote.
    options.controllers.node_simulator = false;
    auto s = apiserver::ApiServer::Start(options);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
    kubectl_ = std::make_unique<KubectlHarness>(server_.get());
  }

  // kubectl's stdout and stderr together.
  struct Output {
    int exit_code;
    std::string output;
  };
  Output Kubectl(const std::vector<std::string>& args,
                 const std::string& stdin_text = "") {
    KubectlResult r = kubectl_->Run(args, stdin_text);
    return {r.exit_code, r.out + r.err};
  }

  std::unique_ptr<apiserver::ApiServer> server_;
  std::unique_ptr<TestClient> client_;
  std::unique_ptr<KubectlHarness> kubectl_;
};

constexpr char kDeployment[] = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: 1
  selector:
    matchLabels: {app: d}
  template:
    metadata:
      labels: {app: d}
    spec:
      containers:
      - name: a
        image: busybox:1
        env:
        - {name: X, value: "1"}
        - {name: "Y", value: "2"}
      - name: b
        image: busybox:1
)";

// The edit kubectl turns into $setElementOrder, an image change and an env
// $patch: delete.
constexpr char kDeploymentEdited[] = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: 2
  selector:
    matchLabels: {app: d}
  template:
    metadata:
      labels: {app: d}
    spec:
      containers:
      - name: b
        image: busybox:2
      - name: a
        image: busybox:1
        env:
        - {name: "Y", value: "2"}
)";

// b removed: kubectl sends a container $patch: delete.
constexpr char kDeploymentOneContainer[] = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  replicas: 2
  selector:
    matchLabels: {app: d}
  template:
    metadata:
      labels: {app: d}
    spec:
      containers:
      - name: a
        image: busybox:1
        env:
        - {name: "Y", value: "2"}
)";

constexpr char kDeploymentPath[] = "/apis/apps/v1/namespaces/default/deployments/d";

TEST_F(KubectlPatchTest, ClientSideApplyCreateAndUpdateDeployment) {
  Output r = Kubectl({"apply", "-f", "-"}, kDeployment);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("deployment.apps/d created"));

  r = Kubectl({"apply", "-f", "-"}, kDeploymentEdited);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("deployment.apps/d configured"));
  TestResponse d = client_->Get(kDeploymentPath);
  EXPECT_EQ(d.Int("/spec/replicas"), 2);
  EXPECT_EQ(d.Str("/spec/template/spec/containers/0/name"), "b");
  EXPECT_EQ(d.Str("/spec/template/spec/containers/0/image"), "busybox:2");
  EXPECT_EQ(d.Str("/spec/template/spec/containers/1/name"), "a");
  EXPECT_EQ(d.Str("/spec/template/spec/containers/1/env/0/name"), "Y");
  EXPECT_EQ(d.Str("/spec/template/spec/containers/1/env/1/name"), "");
  EXPECT_EQ(d.Str("/metadata/managedFields/0/manager"), "kubectl-client-side-apply");

  r = Kubectl({"apply", "-f", "-"}, kDeploymentOneContainer);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  d = client_->Get(kDeploymentPath);
  EXPECT_EQ(d.Str("/spec/template/spec/containers/0/name"), "a");
  EXPECT_EQ(d.Str("/spec/template/spec/containers/1/name"), "");

  // Applying the same manifest again sends nothing and changes nothing.
  const std::string rv = d.Str("/metadata/resourceVersion");
  r = Kubectl({"apply", "-f", "-"}, kDeploymentOneContainer);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("deployment.apps/d unchanged"));
  EXPECT_EQ(client_->Get(kDeploymentPath).Str("/metadata/resourceVersion"), rv);
}

TEST_F(KubectlPatchTest, ServerSideApplyCreateUpdateConflictAndForce) {
  const std::string cm1 = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: cm1
data:
  a: "1"
  b: "2"
)";
  Output r = Kubectl({"apply", "--server-side", "-f", "-"}, cm1);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("configmap/cm1 serverside-applied"));
  const std::string cm = "/api/v1/namespaces/default/configmaps/cm1";
  EXPECT_EQ(client_->Get(cm).Str("/metadata/managedFields/0/manager"), "kubectl");

  // Update: b leaves the manifest and the object.
  const std::string cm2 =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm1\n"
      "data:\n  a: \"1\"\n";
  r = Kubectl({"apply", "--server-side", "-f", "-"}, cm2);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(client_->Get(cm).Str("/data/b"), "");

  // Someone else changes a; applying the old value now conflicts.
  r = Kubectl({"patch", "configmap", "cm1", "--type", "merge", "-p",
               R"({"data":{"a":"7"}})"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Kubectl({"apply", "--server-side", "-f", "-"}, cm2);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output,
              HasSubstr("Apply failed with 1 conflict: conflict with "
                        "\"kubectl-patch\" using v1: .data.a"));
  r = Kubectl({"apply", "--server-side", "--force-conflicts", "-f", "-"}, cm2);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(client_->Get(cm).Str("/data/a"), "1");
}

TEST_F(KubectlPatchTest, ServerSideApplyOverClientSideApply) {
  ASSERT_EQ(Kubectl({"apply", "-f", "-"}, kDeployment).exit_code, 0);
  // Changed values belong to kubectl-client-side-apply: switching to
  // server-side apply with edits conflicts, as with kube-apiserver.
  Output r = Kubectl({"apply", "--server-side", "-f", "-"}, kDeploymentEdited);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output,
              HasSubstr("Apply failed with 2 conflicts: conflicts with "
                        "\"kubectl-client-side-apply\" using apps/v1:\n"
                        "- .spec.replicas\n"
                        "- .spec.template.spec.containers[name=\"b\"].image"));
  // Forced, kubectl then moves the client-side fields to its own manager.
  r = Kubectl({"apply", "--server-side", "--force-conflicts", "-f", "-"},
              kDeploymentEdited);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TestResponse d = client_->Get(kDeploymentPath);
  EXPECT_EQ(d.Int("/spec/replicas"), 2);
  EXPECT_EQ(d.Str("/spec/template/spec/containers/0/image"), "busybox:2");
  rapidjson::Document doc = d.Json();
  for (const auto& e : doc["metadata"]["managedFields"].GetArray()) {
    EXPECT_STRNE(e["manager"].GetString(), "kubectl-client-side-apply");
  }
}

TEST_F(KubectlPatchTest, StrategicPatchAndScale) {
  ASSERT_EQ(Kubectl({"apply", "-f", "-"}, kDeployment).exit_code, 0);
  Output r = Kubectl(
      {"patch", "deployment", "d", "--type", "strategic", "-p",
       R"({"spec":{"template":{"spec":{"containers":[{"name":"b","image":"busybox:9"}]}}}})"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("deployment.apps/d patched"));
  TestResponse d = client_->Get(kDeploymentPath);
  EXPECT_EQ(d.Str("/spec/template/spec/containers/0/image"), "busybox:1");
  EXPECT_EQ(d.Str("/spec/template/spec/containers/1/image"), "busybox:9");

  r = Kubectl({"scale", "deployment", "d", "--replicas=3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("deployment.apps/d scaled"));
  EXPECT_EQ(client_->Get(kDeploymentPath).Int("/spec/replicas"), 3);
}

TEST_F(KubectlPatchTest, StrategicPatchOfCustomResourceIsRefused) {
  const std::string crd = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
)";
  ASSERT_EQ(Kubectl({"apply", "-f", "-"}, crd).exit_code, 0);
  Output r = Kubectl({"apply", "-f", "-"},
                     "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n"
                     "  name: w\nspec:\n  size: 1\n");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Kubectl({"patch", "widget", "w", "--type", "strategic", "-p",
               R"({"spec":{"size":2}})"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("the body of the request was in an unknown "
                                  "format - accepted media types include: "
                                  "application/json-patch+json, "
                                  "application/merge-patch+json, "
                                  "application/apply-patch+yaml"));
  // Server-side apply works for custom resources.
  r = Kubectl({"apply", "--server-side", "--force-conflicts", "-f", "-"},
              "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n"
              "  name: w\nspec:\n  size: 4\n");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(client_->Get("/apis/example.com/v1/namespaces/default/widgets/w")
                .Int("/spec/size"),
            4);
}

}  // namespace
}  // namespace kcr::integration
