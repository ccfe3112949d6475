// kubectl get / describe / get -w against the local API server: the columns
// kubectl prints come from the server's Tables (apiserver/table.h).
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/object_builder.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_apiserver_fixture.h"
#include "test/integration/kubectl_harness.h"

namespace kcr::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kWidgetCrd[] = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
          status:
            type: object
            properties:
              phase: {type: string}
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color, priority: 1}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
)";

class KubectlGetTest : public KubectlApiServerFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    // Statuses written by the test stay as written.
    options.controllers.node_simulator = false;
    options.controllers.deployment_controller = false;
    options.controllers.replicaset_controller = false;
    ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
  }

  const apiserver::ResourceInfo& Resource(const char* group,
                                          const char* version,
                                          const char* resource) {
    apiserver::ResourceInfoPtr r =
        server_->resources()->Lookup(group, version, resource);
    held_.push_back(r);
    return *r;
  }

  // Creates an object, then writes `status` (JSON) through /status.
  void CreateWithStatus(const apiserver::ResourceInfo& r, const char* ns,
                        const std::string& json, const std::string& status) {
    auto b = api::ObjectBuilder::FromJson(json);
    ASSERT_TRUE(b.ok()) << b.status();
    auto created = server_->registry()->Create(r, ns, std::move(*b));
    ASSERT_TRUE(created.ok()) << created.status();
    if (status.empty()) return;
    api::ObjectBuilder u = created->object->ToBuilder();
    ASSERT_TRUE(u.SetJson("/status", status).ok());
    apiserver::WriteOptions w;
    w.subresource = "status";
    auto updated = server_->registry()->Update(r, ns, created->object->name(),
                                               std::move(u), w);
    ASSERT_TRUE(updated.ok()) << updated.status();
  }

  void CreatePods() {
    const auto& pods = Resource("", "v1", "pods");
    CreateWithStatus(pods, "default", R"({"metadata":{"name":"web",
        "labels":{"app":"web"}},"spec":{"nodeName":"node-a",
        "containers":[{"name":"c","image":"nginx"}]}})",
                     R"({"phase":"Running","podIP":"10.1.2.3",
        "conditions":[{"type":"Ready","status":"True"}],
        "containerStatuses":[{"name":"c","ready":true,"restartCount":0,
          "image":"nginx","imageID":"","state":{"running":{}}}]})");
    CreateWithStatus(pods, "default", R"({"metadata":{"name":"db",
        "labels":{"app":"db"}},"spec":{"containers":[
        {"name":"a","image":"postgres"},{"name":"b","image":"busybox"}]}})",
                     R"({"phase":"Running","containerStatuses":[
        {"name":"a","ready":true,"restartCount":1,"image":"postgres",
         "imageID":"","state":{"running":{}}},
        {"name":"b","ready":false,"restartCount":4,"image":"busybox",
         "imageID":"","state":{"waiting":{"reason":"CrashLoopBackOff"}}}]})");
    CreateWithStatus(pods, "kube-system", R"({"metadata":{"name":"dns",
        "labels":{"app":"web"}},"spec":{"containers":[
        {"name":"c","image":"coredns"}]}})",
                     R"({"phase":"Pending"})");
  }

  std::vector<apiserver::ResourceInfoPtr> held_;
};

TEST_F(KubectlGetTest, PodsWithPrinterColumns) {
  CreatePods();
  KubectlResult r = kubectl_->Run({"get", "pods"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(WithoutColumn(KubectlHarness::Columns(r.out), 4),
              ElementsAre(ElementsAre("NAME", "READY", "STATUS", "RESTARTS"),
                          ElementsAre("db", "1/2", "CrashLoopBackOff", "5"),
                          ElementsAre("web", "1/1", "Running", "0")));

  r = kubectl_->Run({"get", "pods", "-o", "wide"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(
      WithoutColumn(KubectlHarness::Columns(r.out), 4),
      ElementsAre(ElementsAre("NAME", "READY", "STATUS", "RESTARTS", "IP",
                              "NODE", "NOMINATED NODE", "READINESS GATES"),
                  ElementsAre("db", "1/2", "CrashLoopBackOff", "5", "<none>",
                              "<none>", "<none>", "<none>"),
                  ElementsAre("web", "1/1", "Running", "0", "10.1.2.3",
                              "node-a", "<none>", "<none>")));
}

TEST_F(KubectlGetTest, LabelSelectorsAndAllNamespaces) {
  CreatePods();
  KubectlResult r = kubectl_->Run({"get", "pods", "-l", "app=web"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(WithoutColumn(KubectlHarness::Columns(r.out), 4),
              ElementsAre(ElementsAre("NAME", "READY", "STATUS", "RESTARTS"),
                          ElementsAre("web", "1/1", "Running", "0")));

  r = kubectl_->Run({"get", "pods", "-A", "-l", "app=web"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(
      WithoutColumn(KubectlHarness::Columns(r.out), 5),
      ElementsAre(
          ElementsAre("NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS"),
          ElementsAre("default", "web", "1/1", "Running", "0"),
          ElementsAre("kube-system", "dns", "0/1", "Pending", "0")));

  r = kubectl_->Run({"get", "pods", "--show-labels", "-l", "app!=web"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = KubectlHarness::Columns(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  ASSERT_GE(rows[1].size(), 1u) << r.out;
  EXPECT_EQ(rows[1][0], "db");
  EXPECT_EQ(rows[1].back(), "app=db");
}

TEST_F(KubectlGetTest, CustomResourcePrinterColumns) {
  KubectlResult r = kubectl_->Run({"apply", "-f", "-"}, kWidgetCrd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl_->Run({"apply", "-f", "-"}, R"(
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1}
spec: {size: 3, color: blue}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w2}
spec: {size: 10}
)");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  r = kubectl_->Run({"get", "widgets"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = KubectlHarness::Columns(r.out);
  ASSERT_EQ(rows.size(), 3u) << r.out;
  EXPECT_THAT(rows[0], ElementsAre("NAME", "SIZE", "PHASE", "AGE"));
  ASSERT_GE(rows[1].size(), 2u) << r.out;
  ASSERT_GE(rows[2].size(), 3u) << r.out;
  EXPECT_EQ(rows[1][0], "w1");
  EXPECT_EQ(rows[1][1], "3");
  // A missing value (a null cell) prints as an empty cell, as on a cluster:
  // the row has no PHASE text before its age.
  EXPECT_EQ(rows[1].size(), 3u) << r.out;
  EXPECT_THAT(rows[2], ElementsAre("w2", "10", rows[2][2]));

  r = kubectl_->Run({"get", "wd", "w1", "-o", "wide"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rows = KubectlHarness::Columns(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_THAT(rows[0], ElementsAre("NAME", "SIZE", "COLOR", "PHASE", "AGE"));
  ASSERT_GE(rows[1].size(), 3u) << r.out;
  EXPECT_EQ(rows[1][2], "blue");

  r = kubectl_->Run({"get", "crd"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rows = KubectlHarness::Columns(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_THAT(rows[0], ElementsAre("NAME", "CREATED AT"));
  ASSERT_EQ(rows[1].size(), 2u) << r.out;
  EXPECT_EQ(rows[1][0], "widgets.example.com");
  EXPECT_THAT(rows[1][1],
              ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z"));
}

TEST_F(KubectlGetTest, DeploymentsAndOtherKinds) {
  CreateWithStatus(Resource("apps", "v1", "deployments"), "default",
                   R"({"metadata":{"name":"web"},"spec":{"replicas":3,
      "selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},
        "spec":{"containers":[{"name":"nginx","image":"nginx:1.25"}]}}}})",
                   R"({"replicas":3,"readyReplicas":2,"updatedReplicas":3,
      "availableReplicas":2})");
  CreateWithStatus(Resource("", "v1", "configmaps"), "default",
                   R"({"metadata":{"name":"cfg"},"data":{"a":"1","b":"2"}})",
                   "");
  CreateWithStatus(
      Resource("", "v1", "services"), "default",
      R"({"metadata":{"name":"svc"},"spec":{"clusterIP":"10.96.0.9",
      "ports":[{"port":80,"protocol":"TCP"}],"selector":{"app":"web"}}})",
      "");

  KubectlResult r = kubectl_->Run({"get", "deploy", "-o", "wide"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(
      WithoutColumn(KubectlHarness::Columns(r.out), 4),
      ElementsAre(ElementsAre("NAME", "READY", "UP-TO-DATE", "AVAILABLE",
                              "CONTAINERS", "IMAGES", "SELECTOR"),
                  ElementsAre("web", "2/3", "3", "2", "nginx", "nginx:1.25",
                              "app=web")));
  r = kubectl_->Run({"get", "configmaps", "cfg"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(
      WithoutColumn(KubectlHarness::Columns(r.out), 2),
      ElementsAre(ElementsAre("NAME", "DATA"), ElementsAre("cfg", "2")));
  r = kubectl_->Run({"get", "svc", "svc", "-o", "wide"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(WithoutColumn(KubectlHarness::Columns(r.out), 5),
              ElementsAre(ElementsAre("NAME", "TYPE", "CLUSTER-IP",
                                      "EXTERNAL-IP", "PORT(S)", "SELECTOR"),
                          ElementsAre("svc", "ClusterIP", "10.96.0.9", "<none>",
                                      "80/TCP", "app=web")));
  r = kubectl_->Run({"get", "namespaces"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("kube-system"));
  EXPECT_THAT(KubectlHarness::Columns(r.out)[0],
              ElementsAre("NAME", "STATUS", "AGE"));
}

TEST_F(KubectlGetTest, Events) {
  CreateWithStatus(Resource("", "v1", "events"), "default",
                   R"({"metadata":{"name":"web.1"},
      "involvedObject":{"kind":"Pod","name":"web","namespace":"default"},
      "reason":"BackOff","message":"Back-off restarting failed container",
      "type":"Warning","count":3,"source":{"component":"kubelet"}})",
                   "");
  KubectlResult r = kubectl_->Run({"get", "events"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = KubectlHarness::Columns(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_THAT(rows[0],
              ElementsAre("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"));
  EXPECT_THAT(rows[1], ElementsAre("<unknown>", "Warning", "BackOff", "pod/web",
                                   "Back-off restarting failed container"));
}

TEST_F(KubectlGetTest, Describe) {
  CreatePods();
  KubectlResult r = kubectl_->Run({"describe", "pod", "web"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::ContainsRegex("Name: +web"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("Namespace: +default"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("Node: +node-a"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("Status: +Running"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("IP: +10.1.2.3"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("Labels: +app=web"));
}

TEST_F(KubectlGetTest, WatchSeesChanges) {
  const auto& configmaps = Resource("", "v1", "configmaps");
  CreateWithStatus(configmaps, "default", R"({"metadata":{"name":"first"}})",
                   "");
  std::unique_ptr<KubectlProcess> watch =
      kubectl_->Start({"get", "configmaps", "-w"});
  ASSERT_TRUE(watch->WaitForLine("first", absl::Seconds(20))) << watch->out();
  CreateWithStatus(configmaps, "default",
                   R"({"metadata":{"name":"second"},"data":{"k":"v"}})", "");
  ASSERT_TRUE(watch->WaitForLine("second", absl::Seconds(20))) << watch->out();
  auto rows = KubectlHarness::Columns(watch->out());
  ASSERT_GE(rows.size(), 3u) << watch->out();
  EXPECT_THAT(rows[0], ElementsAre("NAME", "DATA", "AGE"));
  EXPECT_THAT(rows[1], ElementsAre("first", "0", rows[1].back()));
  std::vector<std::string> second;
  for (const auto& row : rows) {
    if (!row.empty() && row[0] == "second") second = row;
  }
  ASSERT_EQ(second.size(), 3u) << watch->out();
  EXPECT_EQ(second[1], "1");
}

// With the simulated node on, a Never pod runs and completes, and kubectl
// waits for it through a watch.
TEST(KubectlSimulatedNodeTest, PodRunsToCompletion) {
  apiserver::ApiServerOptions options;
  options.controllers.node.running_after = absl::Milliseconds(100);
  options.controllers.node.complete_after = absl::Milliseconds(300);
  auto server = apiserver::ApiServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  KubectlHarness kubectl(server->get());
  KubectlResult r = kubectl.Run({"apply", "-f", "-"}, R"(
apiVersion: v1
kind: Pod
metadata: {name: job}
spec:
  restartPolicy: Never
  containers: [{name: c, image: busybox}]
)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl.Run({"wait", "--for=jsonpath={.status.phase}=Succeeded",
                   "pod/job", "--timeout=20s"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  r = kubectl.Run({"get", "pod", "job", "-o", "wide"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = KubectlHarness::Columns(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  ASSERT_GE(rows[1].size(), 7u) << r.out;
  EXPECT_EQ(rows[1][0], "job");
  EXPECT_EQ(rows[1][1], "0/1");
  EXPECT_EQ(rows[1][2], "Completed");
  EXPECT_EQ(rows[1][6], "kcr-node");

  r = kubectl.Run({"get", "nodes", "-o", "wide"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rows = KubectlHarness::Columns(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_THAT(rows[0], ElementsAre("NAME", "STATUS", "ROLES", "AGE", "VERSION",
                                   "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
                                   "KERNEL-VERSION", "CONTAINER-RUNTIME"));
  ASSERT_EQ(rows[1].size(), 10u) << r.out;
  EXPECT_EQ(rows[1][0], "kcr-node");
  EXPECT_EQ(rows[1][1], "Ready");
  EXPECT_EQ(rows[1][5], "10.0.0.1");
}

// With the built-in controllers and the simulated node on, a deployment's
// pods run and kubectl's rollout status sees it finish, also after a scale.
TEST(KubectlSimulatedNodeTest, DeploymentRollsOut) {
  apiserver::ApiServerOptions options;
  options.controllers.node.running_after = absl::Milliseconds(100);
  auto server = apiserver::ApiServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  KubectlHarness kubectl(server->get());
  KubectlResult r = kubectl.Run({"apply", "-f", "-"}, R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl.Run({"rollout", "status", "deployment/web", "--timeout=20s"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("successfully rolled out"));
  r = kubectl.Run({"scale", "deployment/web", "--replicas=4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl.Run({"rollout", "status", "deployment/web", "--timeout=20s"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  r = kubectl.Run({"get", "deployment", "web"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = KubectlHarness::Columns(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  ASSERT_GE(rows[1].size(), 4u) << r.out;
  EXPECT_EQ(rows[1][1], "4/4");
  EXPECT_EQ(rows[1][2], "4");
  EXPECT_EQ(rows[1][3], "4");
}

}  // namespace
}  // namespace kcr::integration
