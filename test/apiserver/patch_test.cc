// PATCH through the local API server over HTTP: strategic merge patch with
// the bodies kubectl sends, 415 for custom resources, server-side apply
// (create, update, conflicts, force) and managedFields on every write.
#include <memory>
#include <string>

#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "test/apiserver/test_client.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::HasSubstr;

constexpr char kApply[] = "application/apply-patch+yaml";
constexpr char kStrategic[] = "application/strategic-merge-patch+json";
constexpr char kMerge[] = "application/merge-patch+json";
constexpr char kDeployments[] = "/apis/apps/v1/namespaces/default/deployments";
constexpr char kConfigMaps[] = "/api/v1/namespaces/default/configmaps";

constexpr char kDeployment[] = R"({"apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"d"},
  "spec":{"replicas":1,"selector":{"matchLabels":{"app":"d"}},
    "template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[
      {"name":"a","image":"busybox:1","env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}]},
      {"name":"b","image":"busybox:1"}]}}}})";

class PatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ApiServerOptions options;
    // Objects change only here.
    options.controllers.node_simulator = false;
    options.controllers.deployment_controller = false;
    options.controllers.replicaset_controller = false;
    auto s = ApiServer::Start(options);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
  }

  TestResponse Patch(const std::string& target, const std::string& body,
                     const std::string& type) {
    return client_->Do("PATCH", target, body, type,
                       {{"User-Agent", "kubectl.1.32/v1.32.0 (linux/amd64)"}});
  }

  // The managedFields entry of `manager`, as compact JSON of its fieldsV1,
  // or "" when there is none.
  static std::string FieldsOf(const TestResponse& r, const std::string& manager,
                              const std::string& operation) {
    rapidjson::Document d = r.Json();
    if (!d.IsObject() || !d.HasMember("metadata") ||
        !d["metadata"].HasMember("managedFields")) {
      return "";
    }
    for (const auto& e : d["metadata"]["managedFields"].GetArray()) {
      if (manager == e["manager"].GetString() &&
          operation == e["operation"].GetString()) {
        rapidjson::StringBuffer buf;
        rapidjson::Writer<rapidjson::StringBuffer> w(buf);
        e["fieldsV1"].Accept(w);
        return buf.GetString();
      }
    }
    return "";
  }

  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(PatchTest, StrategicMergeWithKubectlApplyBody) {
  ASSERT_EQ(client_
                ->Post(std::string(kDeployments) +
                           "?fieldManager=kubectl-client-side-apply",
                       kDeployment)
                .status,
            201);
  // kubectl 1.32's body for: swap the containers, b's image to busybox:2,
  // replicas 2, drop env X.
  TestResponse r = Patch(
      std::string(kDeployments) + "/d?fieldManager=kubectl-client-side-apply",
      R"({"spec":{"replicas":2,"template":{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],"containers":[{"image":"busybox:2","name":"b"},{"$setElementOrder/env":[{"name":"Y"}],"env":[{"$patch":"delete","name":"X"}],"name":"a"}]}}}})",
      kStrategic);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Int("/spec/replicas"), 2);
  EXPECT_EQ(r.Str("/spec/template/spec/containers/0/name"), "b");
  EXPECT_EQ(r.Str("/spec/template/spec/containers/0/image"), "busybox:2");
  EXPECT_EQ(r.Str("/spec/template/spec/containers/1/name"), "a");
  EXPECT_EQ(r.Str("/spec/template/spec/containers/1/env/0/name"), "Y");
  EXPECT_EQ(r.Str("/spec/template/spec/containers/1/env/1/name"), "");
  EXPECT_EQ(r.Int("/metadata/generation"), 2);
  EXPECT_THAT(FieldsOf(r, "kubectl-client-side-apply", "Update"),
              HasSubstr(R"("f:replicas":{})"));

  // $patch: delete of a container.
  r = Patch(
      std::string(kDeployments) + "/d",
      R"({"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"$patch":"delete","name":"b"}]}}}})",
      kStrategic);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Str("/spec/template/spec/containers/0/name"), "a");
  EXPECT_EQ(r.Str("/spec/template/spec/containers/1/name"), "");
}

// Each list the issue names merges by its key under a strategic merge
// patch (kube-apiserver's patchMergeKey struct tags): ownerReferences by
// uid, containers, initContainers, env and volumes by name, ports by
// containerPort, volumeMounts by mountPath, conditions by type. Order is
// apimachinery's: elements new in the patch come before the server's.
TEST_F(PatchTest, StrategicMergeKeysOfEveryListField) {
  // Live owners, so the garbage collector leaves the deployment alone.
  std::string uid[3];
  for (int i = 0; i < 3; ++i) {
    TestResponse o =
        client_->Post(kConfigMaps, R"({"metadata":{"name":"o)" +
                                       std::to_string(i) + R"("}})");
    ASSERT_EQ(o.status, 201) << o.body;
    uid[i] = o.Str("/metadata/uid");
  }
  auto ref = [&](int i) {
    return R"({"apiVersion":"v1","kind":"ConfigMap","name":"o)" +
           std::to_string(i) + R"(","uid":")" + uid[i] + R"("})";
  };
  ASSERT_EQ(
      client_
          ->Post(kDeployments, R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"m","ownerReferences":[)" +
                                   ref(0) + R"(]},
    "spec":{"selector":{"matchLabels":{"app":"m"}},
      "template":{"metadata":{"labels":{"app":"m"}},"spec":{
        "initContainers":[{"name":"i1","image":"x"}],
        "containers":[{"name":"c1","image":"x","ports":[{"containerPort":80}],
          "env":[{"name":"A","value":"1"}],"volumeMounts":[{"name":"v1","mountPath":"/a"}]}],
        "volumes":[{"name":"v1","emptyDir":{}}]}}}})")
          .status,
      201);
  const std::string d = std::string(kDeployments) + "/m";
  TestResponse r =
      Patch(d, R"({"metadata":{"ownerReferences":[)" + ref(1) + R"(]},
    "spec":{"template":{"spec":{
      "initContainers":[{"name":"i2","image":"y"}],
      "containers":[{"name":"c1","ports":[{"containerPort":81}],"env":[{"name":"B","value":"2"}],
        "volumeMounts":[{"name":"v2","mountPath":"/b"}]}],
      "volumes":[{"name":"v2","emptyDir":{}}]}}}})",
            kStrategic);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Str("/metadata/ownerReferences/0/uid"), uid[1]);
  EXPECT_EQ(r.Str("/metadata/ownerReferences/1/uid"), uid[0]);
  EXPECT_EQ(r.Str("/spec/template/spec/initContainers/0/name"), "i2");
  EXPECT_EQ(r.Str("/spec/template/spec/initContainers/1/name"), "i1");
  EXPECT_EQ(r.Str("/spec/template/spec/containers/0/image"), "x");
  EXPECT_EQ(r.Str("/spec/template/spec/containers/1/name"), "");
  EXPECT_EQ(r.Int("/spec/template/spec/containers/0/ports/0/containerPort"),
            81);
  EXPECT_EQ(r.Int("/spec/template/spec/containers/0/ports/1/containerPort"),
            80);
  EXPECT_EQ(r.Str("/spec/template/spec/containers/0/env/0/name"), "B");
  EXPECT_EQ(r.Str("/spec/template/spec/containers/0/env/1/name"), "A");
  EXPECT_EQ(r.Str("/spec/template/spec/containers/0/volumeMounts/0/mountPath"),
            "/b");
  EXPECT_EQ(r.Str("/spec/template/spec/containers/0/volumeMounts/1/mountPath"),
            "/a");
  EXPECT_EQ(r.Str("/spec/template/spec/volumes/0/name"), "v2");
  EXPECT_EQ(r.Str("/spec/template/spec/volumes/1/name"), "v1");

  // A keyed element changes in place; the others stay where they are.
  r = Patch(
      d,
      R"({"spec":{"template":{"spec":{"containers":[{"name":"c1","env":[{"name":"A","value":"9"}]}]}}}})",
      kStrategic);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Str("/spec/template/spec/containers/0/env/0/value"), "2");
  EXPECT_EQ(r.Str("/spec/template/spec/containers/0/env/1/value"), "9");

  ASSERT_EQ(
      Patch(
          d + "/status",
          R"({"status":{"conditions":[{"type":"Available","status":"True"}]}})",
          kStrategic)
          .status,
      200);
  ASSERT_EQ(
      Patch(
          d + "/status",
          R"({"status":{"conditions":[{"type":"Progressing","status":"True"}]}})",
          kStrategic)
          .status,
      200);
  r = Patch(
      d + "/status",
      R"({"status":{"conditions":[{"type":"Available","status":"False"}]}})",
      kStrategic);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Str("/status/conditions/0/type"), "Progressing");
  EXPECT_EQ(r.Str("/status/conditions/1/type"), "Available");
  EXPECT_EQ(r.Str("/status/conditions/1/status"), "False");
  EXPECT_EQ(r.Str("/status/conditions/2/type"), "");

  // A merge patch of the same list replaces it whole.
  r = Patch(d, R"({"metadata":{"ownerReferences":[)" + ref(2) + "]}}", kMerge);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Str("/metadata/ownerReferences/0/uid"), uid[2]);
  EXPECT_EQ(r.Str("/metadata/ownerReferences/1/uid"), "");
}

TEST_F(PatchTest, UnknownPatchMediaTypeListsTheAcceptedOnes) {
  ASSERT_EQ(client_->Post(kDeployments, kDeployment).status, 201);
  TestResponse r =
      Patch(std::string(kDeployments) + "/d", "{}", "application/json");
  EXPECT_EQ(r.status, 415);
  EXPECT_EQ(r.Str("/reason"), "UnsupportedMediaType");
  EXPECT_EQ(
      r.Str("/message"),
      "the body of the request was in an unknown format - accepted media "
      "types include: application/json-patch+json, "
      "application/merge-patch+json, application/strategic-merge-patch+json, "
      "application/apply-patch+yaml");
}

TEST_F(PatchTest, BadStrategicPatchIsBadRequest) {
  ASSERT_EQ(client_->Post(kDeployments, kDeployment).status, 201);
  TestResponse r =
      Patch(std::string(kDeployments) + "/d",
            R"({"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}})",
            kStrategic);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.Str("/reason"), "BadRequest");
  EXPECT_THAT(r.Str("/message"),
              HasSubstr("does not contain the declared merge key \"name\""));
}

TEST_F(PatchTest, StrategicMergeOnCustomResourceIsUnsupportedMediaType) {
  const std::string crd =
      R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"widgets.example.com"},
    "spec":{"group":"example.com","scope":"Namespaced",
      "names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
      "versions":[{"name":"v1","served":true,"storage":true,
        "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}})";
  ASSERT_EQ(
      client_
          ->Post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
          .status,
      201);
  const std::string widgets = "/apis/example.com/v1/namespaces/default/widgets";
  TestResponse created = client_->Post(
      widgets,
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1}})");
  ASSERT_EQ(created.status, 201) << created.body;
  TestResponse r = Patch(widgets + "/w", R"({"spec":{"size":2}})", kStrategic);
  EXPECT_EQ(r.status, 415);
  EXPECT_EQ(r.Str("/reason"), "UnsupportedMediaType");
  EXPECT_EQ(r.Str("/message"),
            "the body of the request was in an unknown format - accepted media "
            "types include: application/json-patch+json, "
            "application/merge-patch+json, application/apply-patch+yaml");
  // Merge patch and apply work on custom resources.
  EXPECT_EQ(Patch(widgets + "/w", R"({"spec":{"size":2}})", kMerge).status,
            200);
  TestResponse applied = Patch(
      widgets + "/w?fieldManager=ci",
      R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"items":[1,2]}})",
      kApply);
  ASSERT_EQ(applied.status, 200) << applied.body;
  EXPECT_EQ(FieldsOf(applied, "ci", "Apply"), R"({"f:spec":{"f:items":{}}})");
}

TEST_F(PatchTest, ApplyCreatesUpdatesAndReportsConflicts) {
  const std::string cm = std::string(kConfigMaps) + "/cm1";
  TestResponse created = Patch(
      cm + "?fieldManager=kubectl&fieldValidation=Strict&force=false",
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1","namespace":"default","labels":{"app":"demo"}},"data":{"a":"1","b":"2"}})",
      kApply);
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.Str("/metadata/managedFields/0/manager"), "kubectl");
  EXPECT_EQ(created.Str("/metadata/managedFields/0/operation"), "Apply");
  EXPECT_EQ(created.Str("/metadata/managedFields/0/apiVersion"), "v1");
  EXPECT_EQ(created.Str("/metadata/managedFields/0/fieldsType"), "FieldsV1");
  EXPECT_FALSE(created.Str("/metadata/managedFields/0/time").empty());
  EXPECT_EQ(
      FieldsOf(created, "kubectl", "Apply"),
      R"({"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}})");
  EXPECT_FALSE(created.Str("/metadata/uid").empty());

  // Same manager, b dropped: b goes.
  TestResponse updated =
      Patch(cm + "?fieldManager=kubectl&force=false",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm1\n  "
            "labels:\n    app: demo\ndata:\n  a: \"3\"\n",
            kApply);
  ASSERT_EQ(updated.status, 200) << updated.body;
  EXPECT_EQ(updated.Str("/data/a"), "3");
  EXPECT_EQ(updated.Str("/data/b"), "");

  // Another manager changing a conflicts.
  const std::string other =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"},"data":{"a":"9"}})";
  TestResponse conflict = Patch(cm + "?fieldManager=other", other, kApply);
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(conflict.Str("/reason"), "Conflict");
  EXPECT_EQ(conflict.Str("/message"),
            "Apply failed with 1 conflict: conflict with \"kubectl\": .data.a");
  EXPECT_EQ(conflict.Str("/details/causes/0/reason"), "FieldManagerConflict");
  EXPECT_EQ(conflict.Str("/details/causes/0/message"),
            "conflict with \"kubectl\"");
  EXPECT_EQ(conflict.Str("/details/causes/0/field"), ".data.a");

  TestResponse forced =
      Patch(cm + "?fieldManager=other&force=true", other, kApply);
  ASSERT_EQ(forced.status, 200) << forced.body;
  EXPECT_EQ(forced.Str("/data/a"), "9");
  EXPECT_EQ(FieldsOf(forced, "other", "Apply"), R"({"f:data":{"f:a":{}}})");
  EXPECT_EQ(FieldsOf(forced, "kubectl", "Apply"),
            R"({"f:metadata":{"f:labels":{"f:app":{}}}})");
}

TEST_F(PatchTest, ApplyConflictsWithClientSideApplyManager) {
  ASSERT_EQ(client_
                ->Post(std::string(kDeployments) +
                           "?fieldManager=kubectl-client-side-apply",
                       kDeployment)
                .status,
            201);
  TestResponse r = Patch(
      std::string(kDeployments) + "/d?fieldManager=kubectl&force=false",
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":3}})",
      kApply);
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.Str("/message"),
            "Apply failed with 1 conflict: conflict with "
            "\"kubectl-client-side-apply\" using apps/v1: .spec.replicas");
}

TEST_F(PatchTest, ApplyOptionErrors) {
  const std::string cm = std::string(kConfigMaps) + "/cm1";
  const std::string body =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"}})";
  TestResponse r = Patch(cm, body, kApply);
  EXPECT_EQ(r.status, 422);
  EXPECT_THAT(r.Str("/message"), HasSubstr("fieldManager: Required value: is "
                                           "required for apply patch"));
  r = Patch(cm + "?fieldManager=m", "a: [", kApply);
  EXPECT_EQ(r.status, 400);
  r = Patch(cm + "?fieldManager=m", R"({"metadata":{"name":"cm1"}})", kApply);
  EXPECT_EQ(r.status, 400);
}

TEST_F(PatchTest, WritesRecordUpdateManagers) {
  TestResponse created = client_->Do(
      "POST", std::string(kConfigMaps) + "?fieldManager=kubectl-create",
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"},"data":{"a":"1"}})");
  ASSERT_EQ(created.status, 201);
  EXPECT_EQ(FieldsOf(created, "kubectl-create", "Update"),
            R"({"f:data":{"f:a":{}}})");

  // PUT without fieldManager: the User-Agent's prefix names the manager.
  rapidjson::Document d = created.Json();
  d["data"]["a"] = "2";
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  d.Accept(w);
  TestResponse put = client_->Do(
      "PUT", std::string(kConfigMaps) + "/cm1", buf.GetString(),
      "application/json", {{"User-Agent", "OpenAPI-Generator/22.6.0/python"}});
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(FieldsOf(put, "OpenAPI-Generator", "Update"),
            R"({"f:data":{"f:a":{}}})");
  EXPECT_EQ(FieldsOf(put, "kubectl-create", "Update"), "");

  // A merge patch with fieldManager.
  TestResponse patched =
      Patch(std::string(kConfigMaps) + "/cm1?fieldManager=kubectl-patch",
            R"({"data":{"b":"1"}})", kMerge);
  ASSERT_EQ(patched.status, 200);
  EXPECT_EQ(FieldsOf(patched, "kubectl-patch", "Update"),
            R"({"f:data":{"f:b":{}}})");
}

TEST_F(PatchTest, ScalePatchRecordsScaleSubresourceManager) {
  ASSERT_EQ(client_->Post(kDeployments, kDeployment).status, 201);
  // kubectl scale deployment d --replicas=3 (no fieldManager).
  TestResponse r = Patch(std::string(kDeployments) + "/d/scale",
                         R"({"spec":{"replicas":3}})", kMerge);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Int("/spec/replicas"), 3);
  TestResponse d = client_->Get(std::string(kDeployments) + "/d");
  EXPECT_EQ(d.Int("/spec/replicas"), 3);
  rapidjson::Document doc = d.Json();
  bool found = false;
  for (const auto& e : doc["metadata"]["managedFields"].GetArray()) {
    if (std::string(e["manager"].GetString()) == "kubectl.1.32") {
      found = true;
      EXPECT_STREQ(e["subresource"].GetString(), "scale");
    }
  }
  EXPECT_TRUE(found) << d.body;
}

TEST_F(PatchTest, ScaleUpdateRecordsScaleSubresourceManager) {
  ASSERT_EQ(client_->Post(kDeployments, kDeployment).status, 201);
  TestResponse put = client_->Do(
      "PUT", std::string(kDeployments) + "/d/scale?fieldManager=scaler",
      R"({"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d","namespace":"default"},"spec":{"replicas":4}})");
  ASSERT_EQ(put.status, 200) << put.body;
  TestResponse d = client_->Get(std::string(kDeployments) + "/d");
  EXPECT_EQ(d.Int("/spec/replicas"), 4);
  EXPECT_EQ(FieldsOf(d, "scaler", "Update"), R"({"f:spec":{"f:replicas":{}}})");
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
