// kubectl against the local API server for the patch paths: client-side
// `kubectl apply` (create, then strategic merge patches for edits),
// `kubectl apply --server-side` (create, update, conflicts, forcing),
// `kubectl patch --type strategic` (built-ins, and 415 for custom
// resources) and `kubectl scale`. Runs the kubectl on the PATH (a
// dispatcher that picks the version matching /version, here 1.32).
#include <memory>
#include <string>
#include <vector>

#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/apiserver/test_client.h"
#include "test/integration/kubectl_apiserver_fixture.h"
#include "test/integration/kubectl_harness.h"

namespace kcr::integration {
namespace {

using apiserver::TestClient;
using apiserver::TestResponse;
using ::testing::HasSubstr;

class KubectlPatchTest : public KubectlApiServerFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    // Deployments keep the resourceVersion the test last wrote: no
    // controller writes their status.
    options.controllers.node_simulator = false;
    options.controllers.deployment_controller = false;
    options.controllers.replicaset_controller = false;
    ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
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

constexpr char kDeploymentPath[] =
    "/apis/apps/v1/namespaces/default/deployments/d";

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
  EXPECT_EQ(d.Str("/metadata/managedFields/0/manager"),
            "kubectl-client-side-apply");

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
  EXPECT_EQ(client_->Get(cm).Str("/metadata/managedFields/0/manager"),
            "kubectl");

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
  EXPECT_THAT(r.output, HasSubstr("Apply failed with 1 conflict: conflict with "
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

TEST_F(KubectlPatchTest, ServerSideApplyCreateAndUpdateDeployment) {
  Output r = Kubectl({"apply", "--server-side", "-f", "-"}, kDeployment);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("deployment.apps/d serverside-applied"));
  TestResponse d = client_->Get(kDeploymentPath);
  EXPECT_EQ(d.Int("/metadata/generation"), 1);
  EXPECT_EQ(d.Str("/metadata/managedFields/0/manager"), "kubectl");
  EXPECT_EQ(d.Str("/metadata/managedFields/0/operation"), "Apply");

  // The edited manifest (containers reordered, b's image, replicas, env X
  // dropped) changes only fields kubectl itself applied: no conflict.
  r = Kubectl({"apply", "--server-side", "-f", "-"}, kDeploymentEdited);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  d = client_->Get(kDeploymentPath);
  EXPECT_EQ(d.Int("/spec/replicas"), 2);
  EXPECT_EQ(d.Int("/metadata/generation"), 2);
  EXPECT_EQ(d.Str("/spec/template/spec/containers/0/name"), "b");
  EXPECT_EQ(d.Str("/spec/template/spec/containers/0/image"), "busybox:2");
  EXPECT_EQ(d.Str("/spec/template/spec/containers/1/name"), "a");
  // X left the manifest, so it leaves the object.
  EXPECT_EQ(d.Str("/spec/template/spec/containers/1/env/0/name"), "Y");
  EXPECT_EQ(d.Str("/spec/template/spec/containers/1/env/1/name"), "");

  // A container dropped from the manifest goes too.
  r = Kubectl({"apply", "--server-side", "-f", "-"}, kDeploymentOneContainer);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  d = client_->Get(kDeploymentPath);
  EXPECT_EQ(d.Str("/spec/template/spec/containers/0/name"), "a");
  EXPECT_EQ(d.Str("/spec/template/spec/containers/1/name"), "");
  const std::string rv = d.Str("/metadata/resourceVersion");
  r = Kubectl({"apply", "--server-side", "-f", "-"}, kDeploymentOneContainer);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(client_->Get(kDeploymentPath).Str("/metadata/resourceVersion"), rv)
      << "applying the same manifest again is a no-op";
}

constexpr char kCrdV1[] = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {jsonPath: .spec.size, name: Size, type: integer}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
              color: {type: string}
)";

// The same CRD with a second printer column and a field it allows.
constexpr char kCrdV1Edited[] = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList, shortNames: [gd]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {jsonPath: .spec.size, name: Size, type: integer}
    - {jsonPath: .spec.shape, name: Shape, type: string}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
              color: {type: string}
              shape: {type: string}
)";

constexpr char kGadget[] =
    "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n"
    "spec:\n  size: 1\n  color: red\n";
// size changed, color dropped, shape (allowed by the edited CRD) added.
constexpr char kGadgetEdited[] =
    "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n"
    "spec:\n  size: 2\n  shape: round\n";

constexpr char kCrdPath[] =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
    "gadgets.example.com";
constexpr char kGadgetPath[] =
    "/apis/example.com/v1/namespaces/default/gadgets/g";

// Client-side apply of a CRD and then of a custom resource, each created
// and then updated (kubectl sends JSON merge patches for both: neither has
// strategic merge metadata).
TEST_F(KubectlPatchTest, ClientSideApplyCreateAndUpdateCrdAndCustomResource) {
  Output r = Kubectl({"apply", "-f", "-"}, kCrdV1);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("customresourcedefinition.apiextensions.k8s.io/"
                        "gadgets.example.com created"));
  r = Kubectl({"apply", "-f", "-"}, kGadget);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("gadget.example.com/g created"));

  r = Kubectl({"apply", "-f", "-"}, kCrdV1Edited);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("customresourcedefinition.apiextensions.k8s.io/"
                        "gadgets.example.com configured"));
  TestResponse crd = client_->Get(kCrdPath);
  EXPECT_EQ(crd.Int("/metadata/generation"), 2);
  EXPECT_EQ(crd.Str("/spec/names/shortNames/0"), "gd");
  EXPECT_EQ(crd.Str("/status/acceptedNames/shortNames/0"), "gd");

  r = Kubectl({"apply", "-f", "-"}, kGadgetEdited);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("gadget.example.com/g configured"));
  TestResponse g = client_->Get(kGadgetPath);
  EXPECT_EQ(g.Int("/spec/size"), 2);
  EXPECT_EQ(g.Str("/spec/shape"), "round");
  EXPECT_EQ(g.Str("/spec/color"), "") << "dropped from the manifest";
  EXPECT_EQ(g.Int("/metadata/generation"), 2);
  r = Kubectl({"apply", "-f", "-"}, kGadgetEdited);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("gadget.example.com/g unchanged"));

  // The new printer column and short name are served at once.
  r = Kubectl({"get", "gd"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("SHAPE"));
  EXPECT_THAT(r.output, HasSubstr("round"));
}

// The same through server-side apply: create and update of the CRD, then
// of the custom resource.
TEST_F(KubectlPatchTest, ServerSideApplyCreateAndUpdateCrdAndCustomResource) {
  Output r = Kubectl({"apply", "--server-side", "-f", "-"}, kCrdV1);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("customresourcedefinition.apiextensions.k8s.io/"
                        "gadgets.example.com serverside-applied"));
  r = Kubectl({"apply", "--server-side", "-f", "-"}, kGadget);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("gadget.example.com/g serverside-applied"));
  EXPECT_EQ(client_->Get(kGadgetPath).Str("/metadata/managedFields/0/manager"),
            "kubectl");

  r = Kubectl({"apply", "--server-side", "-f", "-"}, kCrdV1Edited);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TestResponse crd = client_->Get(kCrdPath);
  EXPECT_EQ(crd.Str("/spec/versions/0/additionalPrinterColumns/1/name"),
            "Shape");
  EXPECT_EQ(crd.Str("/status/acceptedNames/shortNames/0"), "gd");

  r = Kubectl({"apply", "--server-side", "-f", "-"}, kGadgetEdited);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  TestResponse g = client_->Get(kGadgetPath);
  EXPECT_EQ(g.Int("/spec/size"), 2);
  EXPECT_EQ(g.Str("/spec/shape"), "round");
  EXPECT_EQ(g.Str("/spec/color"), "") << "the applier dropped it";

  // Another manager's change to size conflicts until forced.
  r = Kubectl({"patch", "gadget", "g", "--type", "merge", "-p",
               R"({"spec":{"size":5}})"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = Kubectl({"apply", "--server-side", "-f", "-"}, kGadgetEdited);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.output, HasSubstr("conflict with \"kubectl-patch\""));
  EXPECT_THAT(r.output, HasSubstr(".spec.size"));
  r = Kubectl({"apply", "--server-side", "--force-conflicts", "-f", "-"},
              kGadgetEdited);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(client_->Get(kGadgetPath).Int("/spec/size"), 2);
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
