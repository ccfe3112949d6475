// kubectl against cmd/local-apiserver: each test starts the binary with
// --kubeconfig-out and runs the real /usr/bin/kubectl (the v1.32 dispatcher,
// which runs the kubectl matching the server's /version minor). kubectl's
// cache (HOME) lives in the test's temporary directory; KubectlHarness runs
// kubectl. A missing kubectl fails the test.
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"
#include "test/integration/kubectl_harness.h"
#include "test/integration/kubectl_server_fixture.h"
#include "test/integration/process_util.h"

namespace kcr {
namespace apiserver {
namespace {

using ::kcr::integration::KubectlHarness;
using ::kcr::integration::KubectlResult;
using ::testing::HasSubstr;
using ::testing::Not;

std::string JsonString(const std::string& json, const char* pointer) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError()) return "<not json>";
  const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(d);
  if (v == nullptr) return "<absent>";
  if (v->IsString()) return v->GetString();
  if (v->IsInt64()) return std::to_string(v->GetInt64());
  return "<not a string>";
}

class KubectlTest : public integration::KubectlServerFixture {
 protected:
  void SetUp() override { StartServer("kubectl"); }

  KubectlResult Kubectl(const std::vector<std::string>& args,
                        const std::string& stdin_data = "") {
    return kubectl_->Run(args, stdin_data);
  }
  // Runs kubectl and expects success.
  std::string Ok(const std::vector<std::string>& args,
                 const std::string& stdin_data = "") {
    KubectlResult r = Kubectl(args, stdin_data);
    EXPECT_EQ(r.exit_code, 0)
        << "kubectl " << args[0] << " failed: " << r.err << r.out;
    return r.out;
  }
};

constexpr char kConfigMap[] = R"(apiVersion: v1
kind: ConfigMap
metadata:
  name: cm1
  labels: {app: demo}
data:
  a: "1"
)";

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
      - name: a
        image: nginx:1.7.9
        env:
        - {name: XA, value: "1"}
        - {name: XB, value: "2"}
)";

constexpr char kCrd[] = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {jsonPath: .spec.size, name: Size, type: integer}
    - {jsonPath: .spec.color, name: Color, type: string, priority: 1}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
              color: {type: string}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
    subresources: {status: {}}
)";

TEST_F(KubectlTest, Version) {
  std::string out = Ok({"version", "-o", "json"});
  EXPECT_EQ(JsonString(out, "/serverVersion/minor"), "32") << out;
}

TEST_F(KubectlTest, ApiResources) {
  std::string out = Ok({"api-resources"});
  EXPECT_THAT(out, HasSubstr("configmaps"));
  EXPECT_THAT(out, HasSubstr("deployments"));
  EXPECT_THAT(out, HasSubstr("customresourcedefinitions"));
  EXPECT_THAT(out, HasSubstr("leases"));
}

TEST_F(KubectlTest, ApplyConfigMapClientSide) {
  EXPECT_THAT(Ok({"apply", "-f", "-"}, kConfigMap), HasSubstr("created"));
  std::string changed = kConfigMap;
  changed.replace(changed.find("\"1\""), 3, "\"2\"");
  EXPECT_THAT(Ok({"apply", "-f", "-"}, changed), HasSubstr("configured"));
  EXPECT_EQ(Ok({"get", "cm", "cm1", "-o", "jsonpath={.data.a}"}), "2");
  EXPECT_THAT(Ok({"apply", "-f", "-"}, changed), HasSubstr("unchanged"));
}

// A Secret written with stringData, as tutorials write them: the server
// keeps only data, base64-encoded.
TEST_F(KubectlTest, SecretStringDataIsStoredAsData) {
  constexpr char kSecret[] = R"(apiVersion: v1
kind: Secret
metadata:
  name: creds
stringData:
  user: admin
  password: s3cr3t
)";
  EXPECT_THAT(Ok({"apply", "-f", "-"}, kSecret), HasSubstr("created"));
  EXPECT_EQ(Ok({"get", "secret", "creds", "-o", "jsonpath={.data.user}"}),
            "YWRtaW4=");
  EXPECT_EQ(Ok({"get", "secret", "creds", "-o", "jsonpath={.stringData}"}), "");
  std::string changed = kSecret;
  changed.replace(changed.find("s3cr3t"), 6, "other");
  EXPECT_THAT(Ok({"apply", "-f", "-"}, changed), HasSubstr("configured"));
  EXPECT_EQ(Ok({"get", "secret", "creds", "-o", "jsonpath={.data.password}"}),
            "b3RoZXI=");
}

TEST_F(KubectlTest, ApplyConfigMapServerSide) {
  EXPECT_THAT(Ok({"apply", "--server-side", "-f", "-"}, kConfigMap),
              HasSubstr("serverside-applied"));
  std::string changed = kConfigMap;
  changed.replace(changed.find("\"1\""), 3, "\"3\"");
  EXPECT_THAT(Ok({"apply", "--server-side", "-f", "-"}, changed),
              HasSubstr("serverside-applied"));
  EXPECT_EQ(Ok({"get", "cm", "cm1", "-o", "jsonpath={.data.a}"}), "3");
  EXPECT_THAT(Ok({"get", "cm", "cm1", "-o", "yaml", "--show-managed-fields"}),
              HasSubstr("manager: kubectl"));
  // Another manager changing an owned field conflicts unless forced.
  KubectlResult conflict =
      Kubectl({"apply", "--server-side", "--field-manager=other", "-f", "-"},
              kConfigMap);
  EXPECT_NE(conflict.exit_code, 0);
  EXPECT_THAT(conflict.err, HasSubstr("conflict"));
  Ok({"apply", "--server-side", "--field-manager=other", "--force-conflicts",
      "-f", "-"},
     kConfigMap);
  EXPECT_EQ(Ok({"get", "cm", "cm1", "-o", "jsonpath={.data.a}"}), "1");
}

TEST_F(KubectlTest, ApplyDeploymentUsesStrategicMerge) {
  Ok({"apply", "-f", "-"}, kDeployment);
  std::string changed = kDeployment;
  changed.replace(changed.find("nginx:1.7.9"), 11, "nginx:1.9.1");
  // Drop env XB: the three-way strategic patch deletes it by name.
  changed.erase(changed.find("        - {name: XB"));
  EXPECT_THAT(Ok({"apply", "-f", "-"}, changed), HasSubstr("configured"));
  std::string json = Ok({"get", "deploy", "web", "-o", "json"});
  EXPECT_EQ(JsonString(json, "/spec/template/spec/containers/0/image"),
            "nginx:1.9.1");
  EXPECT_EQ(JsonString(json, "/spec/template/spec/containers/0/env/0/name"),
            "XA");
  EXPECT_EQ(JsonString(json, "/spec/template/spec/containers/0/env/1/name"),
            "<absent>");
  EXPECT_EQ(JsonString(json, "/metadata/generation"), "2");
}

TEST_F(KubectlTest, ApplyCrdThenCustomResourceWithPrinterColumns) {
  Ok({"apply", "-f", "-"}, kCrd);
  Ok({"apply", "-f", "-"},
     "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\n"
     "spec: {size: 3, color: red}\n");
  std::string table = Ok({"get", "widgets"});
  EXPECT_THAT(table, HasSubstr("SIZE"));
  EXPECT_THAT(table, Not(HasSubstr("COLOR")));
  EXPECT_THAT(table, HasSubstr("w1"));
  std::string wide = Ok({"get", "wd", "-o", "wide"});
  EXPECT_THAT(wide, HasSubstr("COLOR"));
  EXPECT_THAT(wide, HasSubstr("red"));
  KubectlResult bad =
      Kubectl({"apply", "-f", "-"},
              "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w2}\n"
              "spec: {size: 0}\n");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("should be greater than or equal to 1"));
  // kubectl asks for fieldValidation=Strict: an unknown field is an error.
  KubectlResult unknown =
      Kubectl({"apply", "-f", "-"},
              "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w3}\n"
              "spec: {size: 2, junk: 1}\n");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_THAT(unknown.err,
              HasSubstr("strict decoding error: unknown field \"spec.junk\""));
}

TEST_F(KubectlTest, GetOutputsAndSelectors) {
  Ok({"apply", "-f", "-"}, kConfigMap);
  Ok({"create", "namespace", "other"});
  Ok({"create", "configmap", "cm2", "-n", "other", "--from-literal=k=v"});
  EXPECT_EQ(JsonString(Ok({"get", "cm", "cm1", "-o", "json"}), "/data/a"), "1");
  EXPECT_THAT(Ok({"get", "cm", "cm1", "-o", "yaml"}), HasSubstr("name: cm1"));
  std::string selected = Ok({"get", "cm", "-l", "app=demo"});
  EXPECT_THAT(selected, HasSubstr("cm1"));
  EXPECT_THAT(Ok({"get", "cm", "-l", "app!=demo"}), Not(HasSubstr("cm1")));
  std::string all = Ok({"get", "cm", "-A"});
  EXPECT_THAT(all, HasSubstr("NAMESPACE"));
  EXPECT_THAT(all, HasSubstr("other"));
  EXPECT_THAT(all, HasSubstr("cm2"));
}

TEST_F(KubectlTest, PatchMergeJsonAndStrategic) {
  Ok({"apply", "-f", "-"}, kDeployment);
  Ok({"patch", "deploy", "web", "--type", "merge", "-p",
      R"({"metadata":{"labels":{"m":"1"}}})"});
  Ok({"patch", "deploy", "web", "--type", "json", "-p",
      R"([{"op":"replace","path":"/spec/replicas","value":4}])"});
  Ok({"patch", "deploy", "web", "--type", "strategic", "-p",
      R"({"spec":{"template":{"spec":{"containers":[{"name":"a","image":"busybox"}]}}}})"});
  std::string json = Ok({"get", "deploy", "web", "-o", "json"});
  EXPECT_EQ(JsonString(json, "/metadata/labels/m"), "1");
  EXPECT_EQ(JsonString(json, "/spec/replicas"), "4");
  EXPECT_EQ(JsonString(json, "/spec/template/spec/containers/0/image"),
            "busybox");
  // Strategic merge kept the container's env (merged by name).
  EXPECT_EQ(JsonString(json, "/spec/template/spec/containers/0/env/0/name"),
            "XA");
}

TEST_F(KubectlTest, ReplaceLikeEdit) {
  Ok({"apply", "-f", "-"}, kConfigMap);
  std::string json = Ok({"get", "cm", "cm1", "-o", "json"});
  size_t pos = json.find("\"a\": \"1\"");
  ASSERT_NE(pos, std::string::npos) << json;
  json.replace(pos, 8, "\"a\": \"edited\"");
  EXPECT_THAT(Ok({"replace", "-f", "-"}, json), HasSubstr("replaced"));
  EXPECT_EQ(Ok({"get", "cm", "cm1", "-o", "jsonpath={.data.a}"}), "edited");
  // The same stale body again: 409 Conflict.
  KubectlResult stale = Kubectl({"replace", "-f", "-"}, json);
  EXPECT_NE(stale.exit_code, 0);
  EXPECT_THAT(stale.err, HasSubstr("the object has been modified"));
}

TEST_F(KubectlTest, DeleteWaitsForFinalizer) {
  Ok({"apply", "-f", "-"},
     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n"
     "  finalizers: [example.com/hold]\n");
  auto del = kubectl_->Start({"delete", "cm", "held"});
  ASSERT_TRUE(del->started());
  ASSERT_TRUE(WaitFor([&] {
    KubectlResult r = Kubectl(
        {"get", "cm", "held", "-o", "jsonpath={.metadata.deletionTimestamp}"});
    return r.exit_code == 0 && !r.out.empty();
  })) << "deletionTimestamp never set";
  // The object is still there, so kubectl delete is still waiting.
  EXPECT_TRUE(del->Running());
  Ok({"patch", "cm", "held", "--type", "merge", "-p",
      R"({"metadata":{"finalizers":null}})"});
  EXPECT_EQ(del->Wait(absl::Seconds(20)), std::optional<int>(0)) << del->out();
  EXPECT_THAT(del->out(), HasSubstr("deleted"));
  EXPECT_NE(Kubectl({"get", "cm", "held"}).exit_code, 0);
}

TEST_F(KubectlTest, CreateNamespaceAndDeleteItWithContents) {
  EXPECT_THAT(Ok({"create", "namespace", "team"}), HasSubstr("created"));
  Ok({"create", "configmap", "c", "-n", "team", "--from-literal=a=b"});
  Ok({"create", "secret", "generic", "s", "-n", "team", "--from-literal=a=b"});
  EXPECT_THAT(Ok({"get", "ns", "team"}), HasSubstr("Active"));
  // kubectl waits until the namespace is gone: the namespace controller
  // deletes its contents, then the namespace.
  EXPECT_THAT(Ok({"delete", "namespace", "team"}), HasSubstr("deleted"));
  EXPECT_NE(Kubectl({"get", "ns", "team"}).exit_code, 0);
  KubectlResult create =
      Kubectl({"create", "configmap", "d", "-n", "team", "--from-literal=a=b"});
  EXPECT_NE(create.exit_code, 0);
  EXPECT_THAT(create.err, HasSubstr("not found"));
}

TEST_F(KubectlTest, GetWatchSeesChange) {
  Ok({"apply", "-f", "-"}, kConfigMap);
  auto watch = kubectl_->Start({"get", "cm", "-w"});
  ASSERT_TRUE(watch->WaitForOutput("cm1", absl::Seconds(20))) << watch->out();
  Ok({"create", "configmap", "fresh", "--from-literal=x=y"});
  EXPECT_TRUE(watch->WaitForOutput("fresh", absl::Seconds(20))) << watch->out();
  watch->Stop();
}

TEST_F(KubectlTest, ScaleDeployment) {
  Ok({"apply", "-f", "-"}, kDeployment);
  EXPECT_THAT(Ok({"scale", "deployment", "web", "--replicas=5"}),
              HasSubstr("scaled"));
  EXPECT_EQ(Ok({"get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"}),
            "5");
}

TEST_F(KubectlTest, Describe) {
  Ok({"apply", "-f", "-"}, kDeployment);
  std::string out = Ok({"describe", "deployment", "web"});
  EXPECT_THAT(out, HasSubstr("Name:"));
  EXPECT_THAT(out, HasSubstr("web"));
  EXPECT_THAT(out, HasSubstr("nginx:1.7.9"));
  EXPECT_THAT(Ok({"describe", "namespace", "default"}), HasSubstr("Active"));
}

// A file with a namespace and its contents: kubectl deletes the namespace,
// then each object in it. The namespace controller leaves the contents
// alone for its grace period, so kubectl's own deletes find them, as on a
// cluster, and kubectl exits 0.
TEST_F(KubectlTest, DeleteFileWithNamespaceAndItsContents) {
  constexpr char kFile[] = R"(apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: shop
data: {a: "1"}
---
apiVersion: v1
kind: Secret
metadata:
  name: token
  namespace: shop
stringData: {t: x}
)";
  Ok({"apply", "-f", "-"}, kFile);
  KubectlResult r = Kubectl({"delete", "-f", "-"}, kFile);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("configmap \"settings\" deleted"));
  EXPECT_THAT(r.out, HasSubstr("secret \"token\" deleted"));
}

// Empty maps a client sends are not stored, as Go's omitempty drops them.
TEST_F(KubectlTest, EmptyMapsAreNotStored) {
  Ok({"create", "-f", "-"},
     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bare\n"
     "  labels: {}\n  annotations: {}\ndata: {}\n");
  std::string yaml = Ok({"get", "cm", "bare", "-o", "yaml"});
  EXPECT_THAT(yaml, Not(HasSubstr("labels:"))) << yaml;
  EXPECT_THAT(yaml, Not(HasSubstr("annotations:"))) << yaml;
  EXPECT_THAT(yaml, Not(HasSubstr("\ndata:"))) << yaml;
}

// What `kubectl get` shows on a fresh cluster, and `kubectl cordon`.
TEST_F(KubectlTest, ClusterFurnitureAndCordon) {
  EXPECT_TRUE(WaitFor([&] {
    return Kubectl({"get", "serviceaccount", "default"}).exit_code == 0 &&
           Kubectl({"get", "configmap", "kube-root-ca.crt"}).exit_code == 0;
  }));
  EXPECT_TRUE(WaitFor([&] {
    KubectlResult r = Kubectl(
        {"get", "svc", "kubernetes", "-o", "jsonpath={.spec.clusterIP}"});
    return r.exit_code == 0 && r.out == "10.96.0.1";
  }));
  EXPECT_TRUE(WaitFor([&] {
    return Kubectl({"get", "node", "kcr-node"}).exit_code == 0;
  }));
  EXPECT_THAT(Ok({"cordon", "kcr-node"}), HasSubstr("cordoned"));
  Ok({"run", "held", "--image=nginx"});
  EXPECT_TRUE(WaitFor([&] {
    KubectlResult r = Kubectl({"get", "pod", "held", "-o",
                               "jsonpath={.status.conditions[0].reason}"});
    return r.out == "Unschedulable";
  }));
  EXPECT_EQ(Ok({"get", "pod", "held", "-o", "jsonpath={.spec.nodeName}"}), "");
  EXPECT_THAT(Ok({"uncordon", "kcr-node"}), HasSubstr("uncordoned"));
  EXPECT_TRUE(WaitFor([&] {
    return Kubectl({"get", "pod", "held", "-o", "jsonpath={.status.phase}"})
               .out == "Running";
  }));
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
