// kubectl against the local API server for the patch paths: client-side
// `kubectl apply` (create, then strategic merge patches for edits),
// `kubectl apply --server-side` (create, update, conflicts, forcing),
// `kubectl patch --type strategic` (built-ins, and 415 for custom
// resources) and `kubectl scale`. Runs the kubectl on the PATH (a
// dispatcher that picks the version matching /version, here 1.32).
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/api_server.h"
#include "rapidjson/document.h"
#include "test/apiserver/test_client.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;

struct KubectlRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

class KubectlPatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = tmp != nullptr ? tmp : "/tmp";
    auto s = ApiServer::Start(ApiServerOptions());
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
    kubeconfig_ = dir_ + "/kubeconfig";
    ASSERT_TRUE(server_->WriteKubeconfig(kubeconfig_).ok());
  }

  void WriteFile(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }

  // Runs `kubectl <args>`; the arguments are trusted test text.
  KubectlRun Kubectl(const std::string& args) {
    const std::string cmd = "cd '" + dir_ + "' && HOME='" + dir_ +
                            "' KUBECONFIG='" + kubeconfig_ +
                            "' kubectl --request-timeout=20s " + args + " 2>&1";
    KubectlRun run;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) return run;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.output.append(buf, n);
    const int status = pclose(pipe);
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return run;
  }

  std::string dir_;
  std::string kubeconfig_;
  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
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
  WriteFile("d.yaml", kDeployment);
  WriteFile("d2.yaml", kDeploymentEdited);
  WriteFile("d3.yaml", kDeploymentOneContainer);
  KubectlRun r = Kubectl("apply -f d.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("deployment.apps/d created"));

  r = Kubectl("apply -f d2.yaml");
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

  r = Kubectl("apply -f d3.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  d = client_->Get(kDeploymentPath);
  EXPECT_EQ(d.Str("/spec/template/spec/containers/0/name"), "a");
  EXPECT_EQ(d.Str("/spec/template/spec/containers/1/name"), "");

  // Applying the same manifest again sends nothing and changes nothing.
  const std::string rv = d.Str("/metadata/resourceVersion");
  r = Kubectl("apply -f d3.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("deployment.apps/d unchanged"));
  EXPECT_EQ(client_->Get(kDeploymentPath).Str("/metadata/resourceVersion"), rv);
}

TEST_F(KubectlPatchTest, ServerSideApplyCreateUpdateConflictAndForce) {
  WriteFile("cm.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: cm1
data:
  a: "1"
  b: "2"
)");
  KubectlRun r = Kubectl("apply --server-side -f cm.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("configmap/cm1 serverside-applied"));
  const std::string cm = "/api/v1/namespaces/default/configmaps/cm1";
  EXPECT_EQ(client_->Get(cm).Str("/metadata/managedFields/0/manager"), "kubectl");

  // Update: b leaves the manifest and the object.
  WriteFile("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm1\n"
                       "data:\n  a: \"1\"\n");
  r = Kubectl("apply --server-side -f cm.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(client_->Get(cm).Str("/data/b"), "");

  // Someone else changes a; applying the old value now conflicts.
  r = Kubectl(R"(patch configmap cm1 --type merge -p '{"data":{"a":"7"}}')");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Kubectl("apply --server-side -f cm.yaml");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output,
              HasSubstr("Apply failed with 1 conflict: conflict with "
                        "\"kubectl-patch\" using v1: .data.a"));
  r = Kubectl("apply --server-side --force-conflicts -f cm.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(client_->Get(cm).Str("/data/a"), "1");
}

TEST_F(KubectlPatchTest, ServerSideApplyOverClientSideApply) {
  WriteFile("d.yaml", kDeployment);
  ASSERT_EQ(Kubectl("apply -f d.yaml").exit_code, 0);
  WriteFile("d2.yaml", kDeploymentEdited);
  // Changed values belong to kubectl-client-side-apply: switching to
  // server-side apply with edits conflicts, as with kube-apiserver.
  KubectlRun r = Kubectl("apply --server-side -f d2.yaml");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output,
              HasSubstr("Apply failed with 2 conflicts: conflicts with "
                        "\"kubectl-client-side-apply\" using apps/v1:\n"
                        "- .spec.replicas\n"
                        "- .spec.template.spec.containers[name=\"b\"].image"));
  // Forced, kubectl then moves the client-side fields to its own manager.
  r = Kubectl("apply --server-side --force-conflicts -f d2.yaml");
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
  WriteFile("d.yaml", kDeployment);
  ASSERT_EQ(Kubectl("apply -f d.yaml").exit_code, 0);
  KubectlRun r = Kubectl(
      R"(patch deployment d --type strategic -p '{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"busybox:9"}]}}}}')");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("deployment.apps/d patched"));
  TestResponse d = client_->Get(kDeploymentPath);
  EXPECT_EQ(d.Str("/spec/template/spec/containers/0/image"), "busybox:1");
  EXPECT_EQ(d.Str("/spec/template/spec/containers/1/image"), "busybox:9");

  r = Kubectl("scale deployment d --replicas=3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("deployment.apps/d scaled"));
  EXPECT_EQ(client_->Get(kDeploymentPath).Int("/spec/replicas"), 3);
}

TEST_F(KubectlPatchTest, StrategicPatchOfCustomResourceIsRefused) {
  WriteFile("crd.yaml", R"(apiVersion: apiextensions.k8s.io/v1
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
)");
  ASSERT_EQ(Kubectl("apply -f crd.yaml").exit_code, 0);
  WriteFile("w.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n"
                      "  name: w\nspec:\n  size: 1\n");
  KubectlRun r = Kubectl("apply -f w.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Kubectl(R"(patch widget w --type strategic -p '{"spec":{"size":2}}')");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("the body of the request was in an unknown "
                                  "format - accepted media types include: "
                                  "application/json-patch+json, "
                                  "application/merge-patch+json, "
                                  "application/apply-patch+yaml"));
  // Server-side apply works for custom resources.
  WriteFile("w.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n"
                      "  name: w\nspec:\n  size: 4\n");
  r = Kubectl("apply --server-side --force-conflicts -f w.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(client_->Get("/apis/example.com/v1/namespaces/default/widgets/w")
                .Int("/spec/size"),
            4);
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
