// What a cluster has without anyone creating it, and the defaults and
// allocations kube-apiserver applies, checked over HTTP against a server
// with its built-in controllers: the default ServiceAccount and
// kube-root-ca.crt of every namespace, default/kubernetes, cluster IPs and
// node ports, Endpoints and EndpointSlices, pod and service defaults, and a
// node that honours cordon and taints.
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/apiserver/test_client.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Generous: the controllers run on their own threads on a loaded machine.
constexpr absl::Duration kWait = absl::Seconds(30);

bool Eventually(const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + kWait;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return done();
}

class ClusterFurnitureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = ApiServer::Start(ApiServerOptions());
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
  }

  TestResponse CreateService(const std::string& body) {
    return client_->Post("/api/v1/namespaces/default/services", body);
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(ClusterFurnitureTest, EveryNamespaceGetsAServiceAccountAndTheRootCa) {
  ASSERT_EQ(
      client_->Post("/api/v1/namespaces", R"({"metadata":{"name":"team"}})")
          .status,
      201);
  const std::string sa = "/api/v1/namespaces/team/serviceaccounts/default";
  const std::string cm = "/api/v1/namespaces/team/configmaps/kube-root-ca.crt";
  EXPECT_TRUE(Eventually([&] { return client_->Get(sa).status == 200; }));
  ASSERT_TRUE(Eventually([&] { return client_->Get(cm).status == 200; }));
  EXPECT_THAT(client_->Get(cm).Str("/data/ca.crt"),
              StartsWith("-----BEGIN CERTIFICATE-----"));
  for (const char* ns : {"default", "kube-system", "kube-public"}) {
    EXPECT_TRUE(Eventually([&] {
      return client_
                 ->Get(std::string("/api/v1/namespaces/") + ns +
                       "/serviceaccounts/default")
                 .status == 200;
    })) << ns;
  }

  // Deleted, they come back; a changed CA bundle is put back.
  ASSERT_EQ(client_->Delete(sa).status, 200);
  EXPECT_TRUE(Eventually([&] { return client_->Get(sa).status == 200; }));
  ASSERT_EQ(client_
                ->Patch(cm, R"({"data":{"ca.crt":"tampered"}})",
                        "application/merge-patch+json")
                .status,
            200);
  EXPECT_TRUE(Eventually([&] {
    return absl::StartsWith(client_->Get(cm).Str("/data/ca.crt"), "-----BEGIN");
  }));
}

TEST_F(ClusterFurnitureTest, KubernetesServiceAndItsEndpoints) {
  const std::string svc = "/api/v1/namespaces/default/services/kubernetes";
  ASSERT_TRUE(Eventually([&] { return client_->Get(svc).status == 200; }));
  TestResponse r = client_->Get(svc);
  EXPECT_EQ(r.Str("/spec/clusterIP"), "10.96.0.1");
  EXPECT_EQ(r.Str("/spec/type"), "ClusterIP");
  EXPECT_EQ(r.Str("/spec/ports/0/name"), "https");
  EXPECT_EQ(r.Int("/spec/ports/0/port"), 443);
  EXPECT_EQ(r.Str("/spec/ports/0/protocol"), "TCP");
  EXPECT_EQ(r.Int("/spec/ports/0/targetPort"), server_->port());
  EXPECT_EQ(r.Str("/metadata/labels/component"), "apiserver");

  const std::string ep = "/api/v1/namespaces/default/endpoints/kubernetes";
  ASSERT_TRUE(Eventually([&] { return client_->Get(ep).status == 200; }));
  r = client_->Get(ep);
  EXPECT_EQ(r.Str("/subsets/0/addresses/0/ip"), "127.0.0.1");
  EXPECT_EQ(r.Int("/subsets/0/ports/0/port"), server_->port());
  EXPECT_TRUE(Eventually([&] {
    return client_
               ->Get(
                   "/apis/discovery.k8s.io/v1/namespaces/default/"
                   "endpointslices/kubernetes")
               .status == 200;
  }));
}

TEST_F(ClusterFurnitureTest, ClusterIpsAndNodePortsAreAllocated) {
  TestResponse a = CreateService(
      R"({"metadata":{"name":"a"},"spec":{"ports":[{"port":80}]}})");
  ASSERT_EQ(a.status, 201) << a.body;
  const std::string ip = a.Str("/spec/clusterIP");
  EXPECT_THAT(ip, StartsWith("10."));
  EXPECT_NE(ip, "10.96.0.1");
  EXPECT_EQ(a.Str("/spec/clusterIPs/0"), ip);
  EXPECT_EQ(a.Str("/spec/ipFamilies/0"), "IPv4");
  EXPECT_EQ(a.Str("/spec/ipFamilyPolicy"), "SingleStack");
  // Service port defaults.
  EXPECT_EQ(a.Str("/spec/ports/0/protocol"), "TCP");
  EXPECT_EQ(a.Int("/spec/ports/0/targetPort"), 80);

  TestResponse headless = CreateService(
      R"({"metadata":{"name":"h"},"spec":{"clusterIP":"None","ports":[{"port":80}]}})");
  ASSERT_EQ(headless.status, 201) << headless.body;
  EXPECT_EQ(headless.Str("/spec/clusterIP"), "None");

  TestResponse requested = CreateService(
      R"({"metadata":{"name":"r"},"spec":{"clusterIP":"10.96.7.7","ports":[{"port":80}]}})");
  ASSERT_EQ(requested.status, 201) << requested.body;
  EXPECT_EQ(requested.Str("/spec/clusterIP"), "10.96.7.7");
  TestResponse taken = CreateService(
      R"({"metadata":{"name":"t"},"spec":{"clusterIP":"10.96.7.7","ports":[{"port":80}]}})");
  EXPECT_EQ(taken.status, 422) << taken.body;
  EXPECT_THAT(taken.Str("/message"),
              HasSubstr("failed to allocate IP 10.96.7.7: provided IP is "
                        "already allocated"));
  TestResponse outside = CreateService(
      R"({"metadata":{"name":"o"},"spec":{"clusterIP":"192.168.0.9","ports":[{"port":80}]}})");
  EXPECT_EQ(outside.status, 422) << outside.body;
  // Deleting the holder frees the address.
  ASSERT_EQ(client_->Delete("/api/v1/namespaces/default/services/r").status,
            200);
  EXPECT_EQ(taken.status, 422);
  EXPECT_EQ(
      CreateService(
          R"({"metadata":{"name":"t"},"spec":{"clusterIP":"10.96.7.7","ports":[{"port":80}]}})")
          .status,
      201);

  TestResponse np = CreateService(
      R"({"metadata":{"name":"np"},"spec":{"type":"NodePort","ports":[{"name":"a","port":80},{"name":"b","port":81,"nodePort":30081}]}})");
  ASSERT_EQ(np.status, 201) << np.body;
  const int64_t node_port = np.Int("/spec/ports/0/nodePort");
  EXPECT_GE(node_port, 30000);
  EXPECT_LE(node_port, 32767);
  EXPECT_EQ(np.Int("/spec/ports/1/nodePort"), 30081);
  TestResponse clash = CreateService(
      R"({"metadata":{"name":"np2"},"spec":{"type":"LoadBalancer","ports":[{"port":80,"nodePort":30081}]}})");
  EXPECT_EQ(clash.status, 422) << clash.body;
  EXPECT_THAT(clash.Str("/message"),
              HasSubstr("spec.ports[0].nodePort: Invalid value: 30081: "
                        "provided port is already allocated"));

  // A replace that leaves the allocated values out keeps them.
  TestResponse replaced = client_->Put(
      "/api/v1/namespaces/default/services/np",
      R"({"metadata":{"name":"np"},"spec":{"type":"NodePort","ports":[{"name":"a","port":80},{"name":"b","port":81}]}})");
  ASSERT_EQ(replaced.status, 200) << replaced.body;
  EXPECT_EQ(replaced.Str("/spec/clusterIP"), np.Str("/spec/clusterIP"));
  EXPECT_EQ(replaced.Int("/spec/ports/0/nodePort"), node_port);
  EXPECT_EQ(replaced.Int("/spec/ports/1/nodePort"), 30081);
}

TEST_F(ClusterFurnitureTest, PodDefaults) {
  TestResponse p = client_->Post(
      "/api/v1/namespaces/default/pods",
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}]}]}})");
  ASSERT_EQ(p.status, 201) << p.body;
  EXPECT_EQ(p.Str("/spec/containers/0/ports/0/protocol"), "TCP");
  EXPECT_EQ(p.Str("/spec/serviceAccountName"), "default");
  EXPECT_EQ(p.Str("/spec/serviceAccount"), "default");
  rapidjson::Document d = p.Json();
  ASSERT_TRUE(d["spec"].HasMember("enableServiceLinks"));
  EXPECT_TRUE(d["spec"]["enableServiceLinks"].GetBool());
  ASSERT_TRUE(d["spec"].HasMember("tolerations"));
  const rapidjson::Value& t = d["spec"]["tolerations"];
  ASSERT_EQ(t.Size(), 2u) << p.body;
  EXPECT_EQ(std::string(t[0]["key"].GetString()),
            "node.kubernetes.io/not-ready");
  EXPECT_EQ(std::string(t[1]["key"].GetString()),
            "node.kubernetes.io/unreachable");
  EXPECT_EQ(std::string(t[1]["effect"].GetString()), "NoExecute");
  EXPECT_EQ(t[1]["tolerationSeconds"].GetInt(), 300);
}

// The Priority and ServiceAccount admission plugins: priority 0 and
// PreemptLowerPriority without a default PriorityClass, the system classes
// by name, and the projected token volume mounted in every container.
TEST_F(ClusterFurnitureTest, PodPriorityAndTokenVolume) {
  TestResponse p = client_->Post(
      "/api/v1/namespaces/default/pods",
      R"({"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i","image":"busybox"}],"containers":[{"name":"c","image":"nginx","volumeMounts":[{"name":"data","mountPath":"/data"}]}],"volumes":[{"name":"data","emptyDir":{}}]}})");
  ASSERT_EQ(p.status, 201) << p.body;
  EXPECT_EQ(p.Int("/spec/priority"), 0);
  EXPECT_EQ(p.Str("/spec/preemptionPolicy"), "PreemptLowerPriority");
  const std::string volume = p.Str("/spec/volumes/1/name");
  EXPECT_EQ(volume.substr(0, 16), "kube-api-access-");
  EXPECT_EQ(volume.size(), 21u);
  EXPECT_EQ(p.Int("/spec/volumes/1/projected/defaultMode"), 420);
  EXPECT_EQ(p.Int("/spec/volumes/1/projected/sources/0/serviceAccountToken/"
                  "expirationSeconds"),
            3607);
  EXPECT_EQ(p.Str("/spec/volumes/1/projected/sources/1/configMap/name"),
            "kube-root-ca.crt");
  EXPECT_EQ(p.Str("/spec/volumes/1/projected/sources/2/downwardAPI/items/0/"
                  "fieldRef/fieldPath"),
            "metadata.namespace");
  const std::string path = "/var/run/secrets/kubernetes.io/serviceaccount";
  EXPECT_EQ(p.Str("/spec/initContainers/0/volumeMounts/0/name"), volume);
  EXPECT_EQ(p.Str("/spec/initContainers/0/volumeMounts/0/mountPath"), path);
  EXPECT_EQ(p.Str("/spec/containers/0/volumeMounts/0/name"), "data");
  EXPECT_EQ(p.Str("/spec/containers/0/volumeMounts/1/name"), volume);
  EXPECT_EQ(p.Str("/spec/containers/0/volumeMounts/1/mountPath"), path);
  EXPECT_TRUE(p.Json()["spec"]["containers"][0]["volumeMounts"][1]["readOnly"]
                  .GetBool());

  // Opting out, and a system class (kube allows those in kube-system).
  p = client_->Post(
      "/api/v1/namespaces/kube-system/pods",
      R"({"metadata":{"name":"q"},"spec":{"automountServiceAccountToken":false,"priorityClassName":"system-node-critical","containers":[{"name":"c","image":"nginx"}]}})");
  ASSERT_EQ(p.status, 201) << p.body;
  EXPECT_EQ(p.Int("/spec/priority"), 2000001000);
  EXPECT_FALSE(p.Json()["spec"].HasMember("volumes")) << p.body;
  EXPECT_FALSE(p.Json()["spec"]["containers"][0].HasMember("volumeMounts"));
}

TEST_F(ClusterFurnitureTest, EndpointsFollowReadyPods) {
  ASSERT_EQ(CreateService(R"({"metadata":{"name":"web","labels":{"tier":"f"}},
      "spec":{"selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":"http"}]}})")
                .status,
            201);
  for (const char* name : {"w1", "w2"}) {
    ASSERT_EQ(
        client_
            ->Post(
                "/api/v1/namespaces/default/pods",
                std::string(R"({"metadata":{"name":")") + name +
                    R"(","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"name":"http","containerPort":8080}]}]}})")
            .status,
        201);
  }
  const std::string ep = "/api/v1/namespaces/default/endpoints/web";
  ASSERT_TRUE(Eventually([&] {
    TestResponse r = client_->Get(ep);
    return r.status == 200 && r.Json().IsObject() &&
           r.Json().HasMember("subsets") &&
           r.Json()["subsets"][0].HasMember("addresses") &&
           r.Json()["subsets"][0]["addresses"].Size() == 2;
  })) << client_->Get(ep).body;
  TestResponse r = client_->Get(ep);
  EXPECT_EQ(r.Int("/subsets/0/ports/0/port"), 8080);
  EXPECT_EQ(r.Str("/subsets/0/ports/0/name"), "http");
  EXPECT_EQ(r.Str("/subsets/0/addresses/0/targetRef/kind"), "Pod");
  EXPECT_EQ(r.Str("/metadata/labels/tier"), "f");

  TestResponse slices = client_->Get(
      "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?"
      "labelSelector=kubernetes.io/service-name=web");
  ASSERT_EQ(slices.status, 200);
  EXPECT_EQ(slices.Str("/items/0/addressType"), "IPv4");
  EXPECT_EQ(slices.Str("/items/0/metadata/ownerReferences/0/name"), "web");
  EXPECT_EQ(slices.Int("/items/0/ports/0/port"), 8080);
  EXPECT_TRUE(Eventually([&] {
    TestResponse s = client_->Get(
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?"
        "labelSelector=kubernetes.io/service-name=web");
    rapidjson::Document d = s.Json();
    return d.IsObject() && d["items"].Size() == 1 &&
           d["items"][0]["endpoints"].Size() == 2;
  }));

  // A pod gone is an address gone.
  ASSERT_EQ(client_->Delete("/api/v1/namespaces/default/pods/w1").status, 200);
  EXPECT_TRUE(Eventually([&] {
    TestResponse e = client_->Get(ep);
    rapidjson::Document d = e.Json();
    return d.IsObject() && d.HasMember("subsets") &&
           d["subsets"][0]["addresses"].Size() == 1;
  }));
  // The Service gone, its Endpoints go too.
  ASSERT_EQ(client_->Delete("/api/v1/namespaces/default/services/web").status,
            200);
  EXPECT_TRUE(Eventually([&] { return client_->Get(ep).status == 404; }));
}

TEST_F(ClusterFurnitureTest, CordonedOrTaintedNodeLeavesNewPodsPending) {
  const std::string node = "/api/v1/nodes/kcr-node";
  ASSERT_TRUE(Eventually([&] { return client_->Get(node).status == 200; }));
  ASSERT_EQ(client_
                ->Patch(node, R"({"spec":{"unschedulable":true}})",
                        "application/merge-patch+json")
                .status,
            200);
  const std::string pod = "/api/v1/namespaces/default/pods/waiting";
  ASSERT_EQ(
      client_
          ->Post(
              "/api/v1/namespaces/default/pods",
              R"({"metadata":{"name":"waiting"},"spec":{"containers":[{"name":"c","image":"nginx"}]}})")
          .status,
      201);
  ASSERT_TRUE(Eventually([&] {
    return client_->Get(pod).Str("/status/conditions/0/reason") ==
           "Unschedulable";
  })) << client_->Get(pod).body;
  TestResponse r = client_->Get(pod);
  EXPECT_EQ(r.Str("/spec/nodeName"), "");
  EXPECT_EQ(r.Str("/status/phase"), "Pending");
  EXPECT_THAT(r.Str("/status/conditions/0/message"),
              HasSubstr("1 node(s) were unschedulable"));

  // Uncordoned but tainted NoSchedule: still pending; a pod that tolerates
  // the taint runs.
  ASSERT_EQ(
      client_
          ->Patch(
              node,
              R"({"spec":{"unschedulable":null,"taints":[{"key":"dedicated","value":"db","effect":"NoSchedule"}]}})",
              "application/merge-patch+json")
          .status,
      200);
  ASSERT_TRUE(Eventually([&] {
    return absl::StrContains(
        client_->Get(pod).Str("/status/conditions/0/message"),
        "untolerated taint {dedicated: db}");
  })) << client_->Get(pod).body;
  ASSERT_EQ(
      client_
          ->Post(
              "/api/v1/namespaces/default/pods",
              R"({"metadata":{"name":"tolerant"},"spec":{"containers":[{"name":"c","image":"nginx"}],
                 "tolerations":[{"key":"dedicated","operator":"Equal","value":"db","effect":"NoSchedule"}]}})")
          .status,
      201);
  EXPECT_TRUE(Eventually([&] {
    return client_->Get("/api/v1/namespaces/default/pods/tolerant")
               .Str("/status/phase") == "Running";
  })) << client_->Get("/api/v1/namespaces/default/pods/tolerant").body
      << client_->Get(node).body;
  EXPECT_EQ(client_->Get(pod).Str("/spec/nodeName"), "");

  // Taint gone: the waiting pod is scheduled and runs.
  ASSERT_EQ(client_
                ->Patch(node, R"({"spec":{"taints":null}})",
                        "application/merge-patch+json")
                .status,
            200);
  EXPECT_TRUE(Eventually([&] {
    return client_->Get(pod).Str("/status/phase") == "Running";
  })) << client_->Get(pod).body;
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
