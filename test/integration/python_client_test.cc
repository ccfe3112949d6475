// The official Python client (Debian's python3-kubernetes 22.6, run with
// /usr/bin/python3) against an in-process local API server: CRUD on core
// and custom objects, label and field selectors, paging, watch streams from
// a resourceVersion, and a 410 that the client raises as ApiException. A
// missing interpreter or client fails the test.
#include <unistd.h>

#include <memory>
#include <string>

#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/process_util.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;

constexpr char kPython[] = "/usr/bin/python3";

constexpr char kPrelude[] = R"(
import sys
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
ext = client.ApiextensionsV1Api()
custom = client.CustomObjectsApi()
def cm(name, labels=None, data=None):
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels=labels or {}),
        data=data or {"k": "v"})
)";

class PythonClientTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(ApiServerOptions()); }

  void Start(ApiServerOptions options) {
    ASSERT_EQ(access(kPython, X_OK), 0) << kPython << " is missing";
    ProcessResult probe = RunProcess({kPython, "-c", "import kubernetes"}, {});
    ASSERT_EQ(probe.exit_code, 0)
        << "the Python Kubernetes client (python3-kubernetes) is missing: "
        << probe.err;
    server_.reset();
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    const char* tmp = getenv("TEST_TMPDIR");
    kubeconfig_ = std::string(tmp != nullptr ? tmp : "/tmp") + "/kubeconfig-" +
                  std::to_string(getpid());
    ASSERT_TRUE(server_->WriteKubeconfig(kubeconfig_).ok());
  }

  // Runs the prelude plus `body`; expects exit 0 and returns stdout.
  std::string Run(const std::string& body) {
    ProcessResult r = RunProcess(
        {kPython, "-c", std::string(kPrelude) + body, kubeconfig_}, {});
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    return r.out;
  }

  std::unique_ptr<ApiServer> server_;
  std::string kubeconfig_;
};

TEST_F(PythonClientTest, CoreObjectCrud) {
  std::string out = Run(R"(
created = v1.create_namespaced_config_map("default", cm("a"))
print("created", created.metadata.name, bool(created.metadata.uid))
got = v1.read_namespaced_config_map("a", "default")
got.data["k"] = "changed"
replaced = v1.replace_namespaced_config_map("a", "default", got)
print("replaced", replaced.data["k"],
      int(replaced.metadata.resource_version) > int(created.metadata.resource_version))
try:
    v1.create_namespaced_config_map("default", cm("a"))
except ApiException as e:
    print("conflict", e.status, e.reason)
try:
    v1.replace_namespaced_config_map("a", "default", got)
except ApiException as e:
    print("stale", e.status)
v1.delete_namespaced_config_map("a", "default")
try:
    v1.read_namespaced_config_map("a", "default")
except ApiException as e:
    print("gone", e.status)
)");
  EXPECT_THAT(out, HasSubstr("created a True"));
  EXPECT_THAT(out, HasSubstr("replaced changed True"));
  EXPECT_THAT(out, HasSubstr("conflict 409 Conflict"));
  EXPECT_THAT(out, HasSubstr("stale 409"));
  EXPECT_THAT(out, HasSubstr("gone 404"));
}

// Objects a cluster refuses: 400 from the decoder, 422 with causes; none
// is stored, so typed reads of the namespace still deserialize.
TEST_F(PythonClientTest, InvalidBuiltInObjectsAreRefused) {
  std::string out = Run(R"(
import json
try:
    v1.create_namespaced_config_map("default",
        {"metadata": {"name": "bad"}, "data": {"port": 8080}})
except ApiException as e:
    print("decode", e.status, json.loads(e.body)["message"])
apps = client.AppsV1Api()
try:
    apps.create_namespaced_deployment("default", {
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "other"}},
                              "spec": {"containers": []}}}})
except ApiException as e:
    status = json.loads(e.body)
    print("invalid", e.status, status["reason"])
    for c in status["details"]["causes"]:
        print("cause", c["field"], c["reason"])
print("items", len(v1.list_namespaced_config_map("default").items))
)");
  EXPECT_THAT(out, HasSubstr("decode 400 ConfigMap in version \"v1\" cannot "
                             "be handled as a ConfigMap: json: cannot "
                             "unmarshal number into Go struct field "
                             "ConfigMap.data of type string"));
  EXPECT_THAT(out, HasSubstr("invalid 422 Invalid"));
  EXPECT_THAT(out, HasSubstr("cause spec.template.metadata.labels "
                             "FieldValueInvalid"));
  EXPECT_THAT(out, HasSubstr("cause spec.template.spec.containers "
                             "FieldValueRequired"));
  // Only the namespace's kube-root-ca.crt, as on a cluster.
  EXPECT_THAT(out, HasSubstr("items 1"));
}

TEST_F(PythonClientTest, CustomObjectCrud) {
  std::string out = Run(R"(
crd = {
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.com"},
  "spec": {"group": "example.com", "scope": "Namespaced",
    "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
    "versions": [{"name": "v1", "served": True, "storage": True,
      "subresources": {"status": {}},
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}
made = ext.create_custom_resource_definition(crd)
conds = {c.type: c.status for c in made.status.conditions}
print("established", conds.get("Established"), conds.get("NamesAccepted"))
w = {"apiVersion": "example.com/v1", "kind": "Widget",
     "metadata": {"name": "w1"}, "spec": {"size": 1, "junk": 2}}
c = custom.create_namespaced_custom_object("example.com", "v1", "default", "widgets", w)
print("created", c["metadata"]["generation"], "junk" in c["spec"])
got = custom.get_namespaced_custom_object("example.com", "v1", "default", "widgets", "w1")
p = custom.patch_namespaced_custom_object("example.com", "v1", "default", "widgets", "w1",
                                          {"spec": {"size": 5}})
print("patched", p["spec"]["size"], p["metadata"]["generation"])
s = custom.patch_namespaced_custom_object_status("example.com", "v1", "default", "widgets", "w1",
                                                 {"status": {"ready": True}})
print("status", s["status"]["ready"], s["metadata"]["generation"])
lst = custom.list_namespaced_custom_object("example.com", "v1", "default", "widgets")
print("listed", [i["metadata"]["name"] for i in lst["items"]])
try:
    custom.create_namespaced_custom_object("example.com", "v1", "default", "widgets",
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "bad"},
         "spec": {"size": "big"}})
except ApiException as e:
    print("invalid", e.status)
custom.delete_namespaced_custom_object("example.com", "v1", "default", "widgets", "w1")
try:
    custom.get_namespaced_custom_object("example.com", "v1", "default", "widgets", "w1")
except ApiException as e:
    print("deleted", e.status)
)");
  EXPECT_THAT(out, HasSubstr("established True True"));
  EXPECT_THAT(out, HasSubstr("created 1 False"));
  EXPECT_THAT(out, HasSubstr("patched 5 2"));
  EXPECT_THAT(out, HasSubstr("status True 2"));
  EXPECT_THAT(out, HasSubstr("listed ['w1']"));
  EXPECT_THAT(out, HasSubstr("invalid 422"));
  EXPECT_THAT(out, HasSubstr("deleted 404"));
}

TEST_F(PythonClientTest, ListWithSelectors) {
  std::string out = Run(R"(
v1.create_namespaced_config_map("default", cm("a", {"tier": "web"}))
v1.create_namespaced_config_map("default", cm("b", {"tier": "db"}))
v1.create_namespaced_config_map("default", cm("c", {"tier": "web", "canary": "1"}))
names = lambda l: sorted(i.metadata.name for i in l.items)
print("web", names(v1.list_namespaced_config_map("default", label_selector="tier=web")))
print("notcanary", names(v1.list_namespaced_config_map("default",
      label_selector="tier in (web,db),!canary")))
print("byname", names(v1.list_config_map_for_all_namespaces(field_selector="metadata.name=b")))
try:
    v1.list_namespaced_config_map("default", field_selector="data.k=v")
except ApiException as e:
    print("badfield", e.status, "field label not supported" in e.body)
)");
  EXPECT_THAT(out, HasSubstr("web ['a', 'c']"));
  EXPECT_THAT(out, HasSubstr("notcanary ['a', 'b']"));
  EXPECT_THAT(out, HasSubstr("byname ['b']"));
  EXPECT_THAT(out, HasSubstr("badfield 400 True"));
}

TEST_F(PythonClientTest, Paging) {
  std::string out = Run(R"(
for i in range(5):
    v1.create_namespaced_config_map("default", cm("cm%d" % i))
page = v1.list_namespaced_config_map("default", limit=2)
seen = [i.metadata.name for i in page.items]
print("first", seen, page.metadata.remaining_item_count, bool(page.metadata._continue))
rv = page.metadata.resource_version
while page.metadata._continue:
    page = v1.list_namespaced_config_map("default", limit=2, _continue=page.metadata._continue)
    seen += [i.metadata.name for i in page.items]
    assert page.metadata.resource_version == rv
print("all", seen)
)");
  // default holds kube-root-ca.crt too, as on a cluster.
  EXPECT_THAT(out, HasSubstr("first ['cm0', 'cm1'] 4 True"));
  EXPECT_THAT(out, HasSubstr("all ['cm0', 'cm1', 'cm2', 'cm3', 'cm4', "
                             "'kube-root-ca.crt']"));
}

TEST_F(PythonClientTest, WatchStreamFromResourceVersion) {
  std::string out = Run(R"(
first = v1.create_namespaced_config_map("default", cm("a"))
rv = first.metadata.resource_version
v1.create_namespaced_config_map("default", cm("b"))
v1.patch_namespaced_config_map("a", "default", {"data": {"k": "2"}})
v1.delete_namespaced_config_map("b", "default")
w = watch.Watch()
seen = []
for ev in w.stream(v1.list_namespaced_config_map, "default",
                   resource_version=rv, timeout_seconds=10):
    seen.append((ev["type"], ev["object"].metadata.name))
    if len(seen) == 3:
        w.stop()
print("events", seen)
)");
  EXPECT_THAT(
      out, HasSubstr(
               "events [('ADDED', 'b'), ('MODIFIED', 'a'), ('DELETED', 'b')]"));
}

TEST_F(PythonClientTest, TooOldResourceVersionIsApiException410) {
  ApiServerOptions options;
  options.history_size = 3;
  Start(options);
  std::string out = Run(R"(
old = v1.create_namespaced_config_map("default", cm("a")).metadata.resource_version
for i in range(6):
    v1.create_namespaced_config_map("default", cm("x%d" % i))
try:
    for ev in watch.Watch().stream(v1.list_namespaced_config_map, "default",
                                   resource_version=old, timeout_seconds=10):
        print("unexpected", ev["type"])
except ApiException as e:
    print("expired", e.status, "too old resource version" in str(e.reason))
)");
  EXPECT_THAT(out, HasSubstr("expired 410 True"));
}

TEST_F(PythonClientTest, ExecAndPortForwardReportThatNoContainersRun) {
  std::string out = Run(R"(
import json, time
from kubernetes.stream import stream, portforward
v1.create_namespaced_pod("default", client.V1Pod(
    metadata=client.V1ObjectMeta(name="web"),
    spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")])))
for _ in range(100):
    if v1.read_namespaced_pod("web", "default").status.phase == "Running":
        break
    time.sleep(0.1)
ws = stream(v1.connect_get_namespaced_pod_exec, "web", "default",
            command=["ls"], stdout=True, stderr=True, stdin=False, tty=False,
            _preload_content=False)
ws.run_forever(timeout=10)
status = json.loads(ws.read_channel(3))
print("exec", status["status"], status["reason"], status["code"])
print("exec message", status["details"]["causes"][0]["message"])
pf = portforward(v1.connect_get_namespaced_pod_portforward, "web", "default",
                 ports="80,443")
for _ in range(100):
    if pf.error(80) and pf.error(443):
        break
    time.sleep(0.1)
print("pf 80", pf.error(80))
print("pf 443", pf.error(443))
try:
    stream(v1.connect_get_namespaced_pod_exec, "gone", "default",
           command=["ls"], stdout=True)
except ApiException as e:
    print("missing pod", "Not Found" in str(e))
)");
  EXPECT_THAT(out, HasSubstr("exec Failure InternalError 500"));
  EXPECT_THAT(out, HasSubstr("exec message cannot exec in container \"c\" of "
                             "pod \"web\": the simulated node \"kcr-node\" "
                             "runs no containers"));
  EXPECT_THAT(out,
              HasSubstr("pf 80 error forwarding port 80 to pod web, uid "));
  EXPECT_THAT(out, HasSubstr("pf 443 error forwarding port 443 to pod web"));
  EXPECT_THAT(out, HasSubstr("missing pod True"));
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
