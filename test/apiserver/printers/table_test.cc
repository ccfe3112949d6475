#include "apiserver/printers/table.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/fakes/fake_clock.h"

namespace kcr::apiserver {
namespace {

using ::testing::ElementsAre;

// The fake clock's start, 2023-11-14T22:13:20Z, is "now" in every test.
constexpr char kNow[] = "2023-11-14T22:13:20Z";
constexpr char kFiveMinutesAgo[] = "2023-11-14T22:08:20Z";
constexpr char kThreeDaysAgo[] = "2023-11-11T20:13:20Z";  // 3d2h

rapidjson::Document Json(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

class TableTest : public ::testing::Test {
 protected:
  std::string Cells(std::string_view group, std::string_view resource,
                    const std::string& object) {
    rapidjson::Document d = Json(object);
    return TablePrinter::ForResource(group, resource, &clock_).RenderCells(d);
  }

  testing::FakeClock clock_;
};

TEST_F(TableTest, RunningPod) {
  const std::string pod = std::string(R"({
    "metadata": {"name": "web-0", "creationTimestamp": ")") +
                          kFiveMinutesAgo + R"("},
    "spec": {"nodeName": "node-1", "containers": [{"name": "c"}]},
    "status": {"phase": "Running", "podIP": "10.0.0.5",
               "podIPs": [{"ip": "10.0.0.5"}],
               "conditions": [{"type": "Ready", "status": "True"}],
               "containerStatuses": [{"name": "c", "ready": true,
                                      "restartCount": 0,
                                      "state": {"running": {}}}]}})";
  EXPECT_EQ(Cells("", "pods", pod),
            R"(["web-0","1/1","Running","0","5m","10.0.0.5","node-1",)"
            R"("<none>","<none>"])");
}

TEST_F(TableTest, PodRestartsWithLastTermination) {
  const std::string pod = std::string(R"({
    "metadata": {"name": "crash", "creationTimestamp": ")") +
                          kThreeDaysAgo + R"("},
    "spec": {"containers": [{"name": "a"}, {"name": "b"}],
             "readinessGates": [{"conditionType": "example.com/gate"}]},
    "status": {"phase": "Running", "podIPs": [{"ip": "fd00::5"}],
               "conditions": [{"type": "example.com/gate", "status": "True"}],
               "containerStatuses": [
                 {"name": "a", "ready": true, "restartCount": 2,
                  "state": {"running": {}}},
                 {"name": "b", "ready": false, "restartCount": 3,
                  "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                  "lastState": {"terminated": {"exitCode": 1,
                     "finishedAt": ")" +
                          kFiveMinutesAgo + R"("}}}]}})";
  EXPECT_EQ(Cells("", "pods", pod),
            R"j(["crash","1/2","CrashLoopBackOff","5 (5m ago)","3d2h",)j"
            R"("fd00::5","<none>","<none>","1/1"])");
}

TEST_F(TableTest, PodStatusReasons) {
  // Terminating: deletionTimestamp on a pod that has not finished.
  EXPECT_EQ(Cells("", "pods", R"({"metadata": {"name": "p",
      "deletionTimestamp": "2023-11-14T22:13:00Z"},
      "spec": {"containers": [{"name": "c"}]},
      "status": {"phase": "Running"}})"),
            R"(["p","0/1","Terminating","0","<unknown>","<none>","<none>",)"
            R"("<none>","<none>"])");
  // A finished pod keeps its reason when deleted.
  EXPECT_EQ(Cells("", "pods", R"({"metadata": {"name": "p",
      "deletionTimestamp": "2023-11-14T22:13:00Z"},
      "spec": {"containers": [{"name": "c"}]},
      "status": {"phase": "Succeeded", "containerStatuses": [
        {"name": "c", "state": {"terminated": {"exitCode": 0,
                                               "reason": "Completed"}}}]}})"),
            R"(["p","0/1","Completed","0","<unknown>","<none>","<none>",)"
            R"("<none>","<none>"])");
  // A terminated container without a reason shows its exit code.
  EXPECT_EQ(Cells("", "pods", R"({"metadata": {"name": "p"},
      "spec": {"containers": [{"name": "c"}]},
      "status": {"phase": "Failed", "containerStatuses": [
        {"name": "c", "state": {"terminated": {"exitCode": 3}}}]}})"),
            R"(["p","0/1","ExitCode:3","0","<unknown>","<none>","<none>",)"
            R"("<none>","<none>"])");
  // Initialising.
  EXPECT_EQ(Cells("", "pods", R"({"metadata": {"name": "p"},
      "spec": {"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]},
      "status": {"phase": "Pending", "initContainerStatuses": [
        {"name": "i", "state": {"running": {}}}]}})"),
            R"(["p","0/1","Init:0/1","0","<unknown>","<none>","<none>",)"
            R"("<none>","<none>"])");
  EXPECT_EQ(Cells("", "pods", R"({"metadata": {"name": "p"},
      "spec": {"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]},
      "status": {"phase": "Pending", "initContainerStatuses": [
        {"name": "i", "state": {"terminated": {"exitCode": 2,
                                               "reason": "Error"}}}]}})"),
            R"(["p","0/1","Init:Error","0","<unknown>","<none>","<none>",)"
            R"("<none>","<none>"])");
  // A sidecar (restartable init container) counts as a container.
  EXPECT_EQ(Cells("", "pods", R"({"metadata": {"name": "p"},
      "spec": {"initContainers": [{"name": "s", "restartPolicy": "Always"}],
               "containers": [{"name": "c"}]},
      "status": {"phase": "Running",
        "initContainerStatuses": [{"name": "s", "started": true, "ready": true,
                                   "state": {"running": {}}}],
        "containerStatuses": [{"name": "c", "ready": true,
                               "state": {"running": {}}}]}})"),
            R"(["p","2/2","Running","0","<unknown>","<none>","<none>",)"
            R"("<none>","<none>"])");
  // Scheduling gates.
  EXPECT_EQ(Cells("", "pods", R"({"metadata": {"name": "p"},
      "spec": {"containers": [{"name": "c"}]},
      "status": {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False",
         "reason": "SchedulingGated"}]}})"),
            R"(["p","0/1","SchedulingGated","0","<unknown>","<none>","<none>",)"
            R"("<none>","<none>"])");
}

TEST_F(TableTest, PodRowConditions) {
  clock_.SetTime(absl::FromUnixSeconds(1700000000));
  rapidjson::Document pod = Json(R"({"metadata": {"name": "done"},
      "spec": {"containers": [{"name": "c"}]},
      "status": {"phase": "Succeeded"}})");
  TablePrinter printer = TablePrinter::ForResource("", "pods", &clock_);
  rapidjson::Document table = Json(printer.RenderObject(pod));
  const auto& row = table["rows"][0];
  ASSERT_TRUE(row.HasMember("conditions"));
  EXPECT_STREQ(row["conditions"][0]["type"].GetString(), "Completed");
  EXPECT_STREQ(row["conditions"][0]["status"].GetString(), "True");
  EXPECT_STREQ(row["conditions"][0]["reason"].GetString(), "Succeeded");
  EXPECT_STREQ(row["conditions"][0]["message"].GetString(),
               "The pod has completed successfully.");
}

TEST_F(TableTest, PodColumns) {
  TablePrinter printer = TablePrinter::ForResource("", "pods", &clock_);
  std::vector<std::string> names;
  std::vector<int> priorities;
  for (const ColumnDefinition& c : printer.columns()) {
    names.push_back(c.name);
    priorities.push_back(c.priority);
  }
  EXPECT_THAT(names,
              ElementsAre("Name", "Ready", "Status", "Restarts", "Age", "IP",
                          "Node", "Nominated Node", "Readiness Gates"));
  EXPECT_THAT(priorities, ElementsAre(0, 0, 0, 0, 0, 1, 1, 1, 1));
  EXPECT_EQ(printer.columns()[0].format, "name");
  EXPECT_EQ(printer.columns()[3].type, "string");
  // Descriptions as a kube-apiserver Table carries them.
  EXPECT_EQ(printer.columns()[1].description,
            "The aggregate readiness state of this pod for accepting traffic.");
  EXPECT_EQ(printer.columns()[5].description,
            "podIP address allocated to the pod. Routable at least within "
            "the cluster. Empty if not yet allocated.");
  EXPECT_EQ(printer.columns()[6].description,
            "NodeName is a request to schedule this pod onto a specific "
            "node. If it is non-empty, the scheduler simply schedules this "
            "pod onto that node, assuming that it fits resource "
            "requirements.");
  EXPECT_EQ(printer.columns()[4].description.substr(0, 60),
            "CreationTimestamp is a timestamp representing the server tim");
}

TEST_F(TableTest, Deployment) {
  const std::string d = std::string(R"({
    "metadata": {"name": "web", "creationTimestamp": ")") +
                        kFiveMinutesAgo + R"("},
    "spec": {"replicas": 3,
             "selector": {"matchLabels": {"app": "web"},
                          "matchExpressions": [{"key": "tier",
                            "operator": "In", "values": ["b", "a"]}]},
             "template": {"spec": {"containers": [
               {"name": "nginx", "image": "nginx:1.25"},
               {"name": "log", "image": "busybox"}]}}},
    "status": {"readyReplicas": 2, "updatedReplicas": 3,
               "availableReplicas": 2}})";
  EXPECT_EQ(Cells("apps", "deployments", d),
            R"(["web","2/3",3,2,"5m","nginx,log","nginx:1.25,busybox",)"
            R"j("app=web,tier in (a,b)"])j");
  // spec.replicas defaults to 1; no status yet; no selector.
  EXPECT_EQ(Cells("apps", "deployments", R"({"metadata": {"name": "x"}})"),
            R"(["x","0/1",0,0,"<unknown>","","","<none>"])");
}

TEST_F(TableTest, CoreKinds) {
  const std::string meta = std::string(R"("metadata": {"name": "n",
      "creationTimestamp": ")") +
                           kFiveMinutesAgo + R"("})";
  EXPECT_EQ(Cells("", "namespaces",
                  "{" + meta + R"(, "status": {"phase": "Terminating"}})"),
            R"(["n","Terminating","5m"])");
  EXPECT_EQ(
      Cells("", "configmaps", "{" + meta + R"(, "data": {"a": "1", "b": "2"},
                  "binaryData": {"c": "AA=="}})"),
      R"(["n",3,"5m"])");
  EXPECT_EQ(Cells("", "secrets",
                  "{" + meta + R"(, "type": "Opaque", "data": {"a": "MQ=="}})"),
            R"(["n","Opaque",1,"5m"])");
  EXPECT_EQ(Cells("", "serviceaccounts",
                  "{" + meta + R"(, "secrets": [{"name": "t"}]})"),
            R"(["n",1,"5m"])");
  EXPECT_EQ(Cells("coordination.k8s.io", "leases",
                  "{" + meta + R"(, "spec": {"holderIdentity": "me"}})"),
            R"(["n","me","5m"])");
  EXPECT_EQ(Cells("apiextensions.k8s.io", "customresourcedefinitions",
                  "{" + meta + "}"),
            R"(["n","2023-11-14T22:08:20Z"])");
  EXPECT_EQ(Cells("example.com", "gadgets", "{" + meta + "}"), R"(["n","5m"])");
}

TEST_F(TableTest, Nodes) {
  EXPECT_EQ(Cells("", "nodes",
                  std::string(R"({"metadata": {"name": "n1",
      "creationTimestamp": ")") +
                      kThreeDaysAgo + R"(",
      "labels": {"node-role.kubernetes.io/control-plane": "",
                 "kubernetes.io/role": "worker"}},
      "spec": {"unschedulable": true},
      "status": {"conditions": [{"type": "MemoryPressure", "status": "False"},
                                {"type": "Ready", "status": "True"}],
                 "addresses": [{"type": "Hostname", "address": "n1"},
                               {"type": "InternalIP", "address": "10.0.0.1"}],
                 "nodeInfo": {"kubeletVersion": "v1.32.4",
                              "osImage": "Debian", "kernelVersion": "6.1",
                              "containerRuntimeVersion": "containerd://1.7"}}})"),
            R"(["n1","Ready,SchedulingDisabled","control-plane,worker",)"
            R"("3d2h","v1.32.4","10.0.0.1","<none>","Debian","6.1",)"
            R"("containerd://1.7"])");
  EXPECT_EQ(Cells("", "nodes", R"({"metadata": {"name": "n2"}})"),
            R"(["n2","Unknown","<none>","<unknown>","","<none>","<none>",)"
            R"("<unknown>","<unknown>","<unknown>"])");
}

TEST_F(TableTest, Services) {
  EXPECT_EQ(Cells("", "services", R"({"metadata": {"name": "s"},
      "spec": {"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
               "ports": [{"port": 53, "protocol": "UDP"}, {"port": 80}],
               "selector": {"k8s-app": "dns", "a": "b"}}})"),
            R"(["s","ClusterIP","10.96.0.10","<none>","53/UDP,80/TCP",)"
            R"("<unknown>","a=b,k8s-app=dns"])");
  EXPECT_EQ(Cells("", "services", R"({"metadata": {"name": "s"},
      "spec": {"type": "NodePort", "clusterIP": "10.0.0.1",
               "externalIPs": ["1.2.3.4"],
               "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}]}})"),
            R"(["s","NodePort","10.0.0.1","1.2.3.4","80:30080/TCP",)"
            R"("<unknown>","<none>"])");
  EXPECT_EQ(Cells("", "services", R"({"metadata": {"name": "s"},
      "spec": {"type": "LoadBalancer", "clusterIP": "None"}})"),
            R"(["s","LoadBalancer","None","<pending>","<none>","<unknown>",)"
            R"("<none>"])");
  EXPECT_EQ(Cells("", "services", R"({"metadata": {"name": "s"},
      "spec": {"type": "LoadBalancer", "externalIPs": ["9.9.9.9"]},
      "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example"},
                                              {"ip": "5.5.5.5"}]}}})"),
            R"(["s","LoadBalancer","<none>","5.5.5.5,lb.example,9.9.9.9",)"
            R"("<none>","<unknown>","<none>"])");
  EXPECT_EQ(Cells("", "services", R"({"metadata": {"name": "s"},
      "spec": {"type": "ExternalName", "externalName": "db.example"}})"),
            R"(["s","ExternalName","<none>","db.example","<none>",)"
            R"("<unknown>","<none>"])");
}

TEST_F(TableTest, Events) {
  EXPECT_EQ(Cells("", "events",
                  std::string(R"({"metadata": {"name": "e1"},
      "type": "Warning", "reason": "BackOff", "message": "  Back-off  \n",
      "involvedObject": {"kind": "Pod", "name": "web-0",
                         "fieldPath": "spec.containers{c}"},
      "source": {"component": "kubelet", "host": "node-1"},
      "firstTimestamp": ")") +
                      kThreeDaysAgo + R"(",
      "lastTimestamp": ")" +
                      kFiveMinutesAgo + R"(", "count": 7})"),
            R"(["5m","Warning","BackOff","pod/web-0","spec.containers{c}",)"
            R"("kubelet, node-1","Back-off","3d2h",7,"e1"])");
  // events.k8s.io style: eventTime and series, reporting controller.
  EXPECT_EQ(Cells("", "events",
                  std::string(R"({"metadata": {"name": "e2"},
      "type": "Normal", "reason": "Scaled", "message": "m",
      "involvedObject": {"kind": "Deployment"},
      "reportingComponent": "deployment-controller",
      "eventTime": "2023-11-14T22:13:10.000000Z",
      "series": {"count": 4, "lastObservedTime": ")") +
                      kFiveMinutesAgo + R"("}})"),
            R"(["5m","Normal","Scaled","deployment","",)"
            R"("deployment-controller","m","10s",4,"e2"])");
}

constexpr char kWidgetCrd[] = R"({
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.com"},
  "spec": {
    "group": "example.com",
    "names": {"plural": "widgets", "kind": "Widget"},
    "versions": [
      {"name": "v1", "served": true, "storage": true,
       "additionalPrinterColumns": [
         {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
         {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio",
          "priority": 1},
         {"name": "On", "type": "boolean", "jsonPath": ".spec.on"},
         {"name": "Phase", "type": "string", "jsonPath": ".status.phase",
          "description": "The phase."},
         {"name": "Ready", "type": "string",
          "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
         {"name": "Labels", "type": "string", "jsonPath": ".metadata.labels"},
         {"name": "Started", "type": "date", "jsonPath": ".status.started",
          "format": "date-time"}]},
      {"name": "v2", "served": true}
    ]}})";

TEST_F(TableTest, CustomResourceColumns) {
  rapidjson::Document crd = Json(kWidgetCrd);
  absl::StatusOr<TablePrinter> printer =
      TablePrinter::ForCustomResource(crd, "v1", &clock_);
  ASSERT_TRUE(printer.ok()) << printer.status();
  const std::vector<ColumnDefinition>& columns = printer->columns();
  ASSERT_EQ(columns.size(), 8u);
  EXPECT_EQ(columns[0].name, "Name");
  EXPECT_EQ(columns[0].format, "name");
  EXPECT_EQ(columns[1].name, "Size");
  EXPECT_EQ(columns[1].type, "integer");
  EXPECT_EQ(columns[1].description,
            "Custom resource definition column (in JSONPath format): "
            ".spec.size");
  EXPECT_EQ(columns[2].priority, 1);
  EXPECT_EQ(columns[4].description, "The phase.");
  EXPECT_EQ(columns[7].format, "date-time");

  rapidjson::Document w = Json(std::string(R"({
      "apiVersion": "example.com/v1", "kind": "Widget",
      "metadata": {"name": "w1", "labels": {"b": "2", "a": "1"}},
      "spec": {"size": 2.9, "ratio": 2.0, "on": true},
      "status": {"phase": "Up", "started": ")") +
                               kFiveMinutesAgo + R"(",
                 "conditions": [{"type": "Synced", "status": "False"},
                                {"type": "Ready", "status": "True"}]}})");
  EXPECT_EQ(printer->RenderCells(w),
            R"(["w1",2,2,true,"Up","True","{\"a\":\"1\",\"b\":\"2\"}","5m"])");

  // Missing values are null; a string column shows JSON null as
  // "<no value>"; a date that does not parse is "<invalid>".
  rapidjson::Document sparse = Json(R"({"metadata": {"name": "w2"},
      "spec": {"size": "big", "ratio": 0.25},
      "status": {"phase": null, "started": "yesterday"}})");
  EXPECT_EQ(printer->RenderCells(sparse),
            R"(["w2",null,0.25,null,"<no value>",null,null,"<invalid>"])");
}

TEST_F(TableTest, CustomResourceDefaultAndAgeColumns) {
  rapidjson::Document crd = Json(kWidgetCrd);
  // v2 declares no columns: Name and Age (a date), as kube-apiserver.
  absl::StatusOr<TablePrinter> v2 =
      TablePrinter::ForCustomResource(crd, "v2", &clock_);
  ASSERT_TRUE(v2.ok());
  ASSERT_EQ(v2->columns().size(), 2u);
  EXPECT_EQ(v2->columns()[1].name, "Age");
  EXPECT_EQ(v2->columns()[1].type, "date");
  rapidjson::Document w = Json(std::string(R"({"metadata": {"name": "w",
      "creationTimestamp": ")") +
                               kThreeDaysAgo + R"("}})");
  EXPECT_EQ(v2->RenderCells(w), R"(["w","3d2h"])");

  absl::StatusOr<TablePrinter> with_age =
      TablePrinter::ForCustomResource(crd, "v1", &clock_, true);
  ASSERT_TRUE(with_age.ok());
  EXPECT_EQ(with_age->columns().back().name, "Age");
  EXPECT_EQ(with_age->columns().size(), 9u);

  EXPECT_EQ(
      TablePrinter::ForCustomResource(crd, "v3", &clock_).status().message(),
      "version v3 not found in CustomResourceDefinition: "
      "widgets.example.com");
  rapidjson::Document bad = Json(R"({"metadata": {"name": "x"}, "spec": {
      "versions": [{"name": "v1", "additionalPrinterColumns": [
        {"name": "X", "type": "string", "jsonPath": ".spec[x"}]}]}})");
  EXPECT_EQ(
      TablePrinter::ForCustomResource(bad, "v1", &clock_).status().message(),
      "unrecognized column definition \".spec[x\"");
}

TEST_F(TableTest, TableDocument) {
  TablePrinter printer = TablePrinter::ForResource("", "configmaps", &clock_);
  rapidjson::Document a = Json(std::string(R"({"metadata": {"name": "a",
      "namespace": "default", "resourceVersion": "7", "uid": "u1",
      "labels": {"app": "x"}, "creationTimestamp": ")") +
                               kNow + R"("}, "data": {"k": "v"}})");
  rapidjson::Document b = Json(R"({"metadata": {"name": "b"}})");
  const rapidjson::Value* items[] = {&a, &b};
  ListMeta meta;
  meta.resource_version = "42";
  meta.continue_token = "tok";
  meta.remaining_item_count = 3;

  rapidjson::Document t = Json(printer.RenderList(items, meta));
  EXPECT_STREQ(t["kind"].GetString(), "Table");
  EXPECT_STREQ(t["apiVersion"].GetString(), "meta.k8s.io/v1");
  EXPECT_STREQ(t["metadata"]["resourceVersion"].GetString(), "42");
  EXPECT_STREQ(t["metadata"]["continue"].GetString(), "tok");
  EXPECT_EQ(t["metadata"]["remainingItemCount"].GetInt64(), 3);
  const auto& cols = t["columnDefinitions"];
  ASSERT_EQ(cols.Size(), 3u);
  EXPECT_STREQ(cols[0]["name"].GetString(), "Name");
  EXPECT_STREQ(cols[0]["type"].GetString(), "string");
  EXPECT_STREQ(cols[0]["format"].GetString(), "name");
  EXPECT_TRUE(cols[0]["description"].IsString());
  EXPECT_EQ(cols[0]["priority"].GetInt(), 0);
  EXPECT_STREQ(cols[1]["name"].GetString(), "Data");
  EXPECT_STREQ(cols[1]["format"].GetString(), "");
  const auto& rows = t["rows"];
  ASSERT_EQ(rows.Size(), 2u);
  EXPECT_STREQ(rows[0]["cells"][0].GetString(), "a");
  EXPECT_EQ(rows[0]["cells"][1].GetInt64(), 1);
  EXPECT_STREQ(rows[0]["cells"][2].GetString(), "0s");
  EXPECT_FALSE(rows[0].HasMember("conditions"));
  const auto& object = rows[0]["object"];
  EXPECT_STREQ(object["kind"].GetString(), "PartialObjectMetadata");
  EXPECT_STREQ(object["apiVersion"].GetString(), "meta.k8s.io/v1");
  EXPECT_STREQ(object["metadata"]["namespace"].GetString(), "default");
  EXPECT_STREQ(object["metadata"]["labels"]["app"].GetString(), "x");
  EXPECT_STREQ(object["metadata"]["uid"].GetString(), "u1");
  EXPECT_FALSE(object.HasMember("data"));
  EXPECT_STREQ(rows[1]["cells"][2].GetString(), "<unknown>");

  // includeObject=Object: the full object, with apiVersion and kind.
  TableOptions full;
  full.include_object = IncludeObject::kObject;
  t = Json(printer.RenderList(items, {}, full));
  EXPECT_TRUE(t["metadata"].IsObject());
  EXPECT_EQ(t["metadata"].MemberCount(), 0u);
  EXPECT_STREQ(t["rows"][0]["object"]["apiVersion"].GetString(), "v1");
  EXPECT_STREQ(t["rows"][0]["object"]["kind"].GetString(), "ConfigMap");
  EXPECT_STREQ(t["rows"][0]["object"]["data"]["k"].GetString(), "v");

  // includeObject=None, no headers, v1beta1.
  TableOptions none;
  none.include_object = IncludeObject::kNone;
  none.no_headers = true;
  none.group_version = "meta.k8s.io/v1beta1";
  t = Json(printer.RenderList(items, {}, none));
  EXPECT_STREQ(t["apiVersion"].GetString(), "meta.k8s.io/v1beta1");
  EXPECT_TRUE(t["columnDefinitions"].IsNull());
  EXPECT_TRUE(t["rows"][0]["object"].IsNull());

  // An empty list has an empty rows array.
  t = Json(printer.RenderList({}, meta));
  EXPECT_TRUE(t["rows"].IsArray());
  EXPECT_EQ(t["rows"].Size(), 0u);
}

TEST_F(TableTest, SingleObjectAndWatchEvents) {
  TablePrinter printer = TablePrinter::ForResource("", "configmaps", &clock_);
  rapidjson::Document cm = Json(R"({"metadata": {"name": "a",
      "resourceVersion": "9"}})");
  rapidjson::Document t = Json(printer.RenderObject(cm));
  EXPECT_STREQ(t["metadata"]["resourceVersion"].GetString(), "9");
  EXPECT_EQ(t["rows"].Size(), 1u);

  rapidjson::Document e = Json(printer.RenderWatchEvent("MODIFIED", cm));
  EXPECT_STREQ(e["type"].GetString(), "MODIFIED");
  EXPECT_STREQ(e["object"]["kind"].GetString(), "Table");
  EXPECT_EQ(e["object"]["columnDefinitions"].Size(), 3u);
  EXPECT_STREQ(e["object"]["rows"][0]["cells"][0].GetString(), "a");
  EXPECT_STREQ(e["object"]["metadata"]["resourceVersion"].GetString(), "9");

  rapidjson::Document status = Json(R"({"kind": "Status", "apiVersion": "v1",
      "status": "Failure", "reason": "Expired", "code": 410})");
  e = Json(printer.RenderWatchEvent("ERROR", status));
  EXPECT_STREQ(e["type"].GetString(), "ERROR");
  EXPECT_STREQ(e["object"]["kind"].GetString(), "Status");
  EXPECT_EQ(e["object"]["code"].GetInt(), 410);
}

TEST(TableRequestTest, Accept) {
  EXPECT_EQ(TableGroupVersionFromAccept(
                "application/json;as=Table;v=v1;g=meta.k8s.io,"
                "application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
                "application/json"),
            "meta.k8s.io/v1");
  EXPECT_EQ(TableGroupVersionFromAccept(
                "application/json;as=Table;v=v1beta1;g=meta.k8s.io, */*"),
            "meta.k8s.io/v1beta1");
  EXPECT_EQ(TableGroupVersionFromAccept(
                "application/json; g=meta.k8s.io; v=v1; as=Table"),
            "meta.k8s.io/v1");
  EXPECT_EQ(TableGroupVersionFromAccept("application/json"), std::nullopt);
  EXPECT_EQ(TableGroupVersionFromAccept(""), std::nullopt);
  EXPECT_EQ(
      TableGroupVersionFromAccept(
          "application/json,application/json;as=Table;v=v1;g=meta.k8s.io"),
      std::nullopt);
  EXPECT_EQ(TableGroupVersionFromAccept(
                "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,"
                "application/json;as=Table;v=v1;g=meta.k8s.io"),
            "meta.k8s.io/v1");
  EXPECT_EQ(TableGroupVersionFromAccept(
                "application/json;as=Table;v=v2;g=meta.k8s.io"),
            std::nullopt);
}

TEST(TableRequestTest, IncludeObject) {
  EXPECT_EQ(*ParseIncludeObject(""), IncludeObject::kMetadata);
  EXPECT_EQ(*ParseIncludeObject("Metadata"), IncludeObject::kMetadata);
  EXPECT_EQ(*ParseIncludeObject("Object"), IncludeObject::kObject);
  EXPECT_EQ(*ParseIncludeObject("None"), IncludeObject::kNone);
  EXPECT_EQ(ParseIncludeObject("all").status().message(),
            "unrecognized includeObject value: \"all\"");
}

}  // namespace
}  // namespace kcr::apiserver
