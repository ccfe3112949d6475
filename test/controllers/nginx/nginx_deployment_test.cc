// The nginx controller's decisions on their own: validation beyond the
// schema, the Deployment it creates, what counts as drift (and what, being
// the server's defaulting, does not), the repair, and readiness.
#include "controllers/nginx/nginx_deployment.h"

#include <string>
#include <vector>

#include "api/object.h"
#include "api/object_builder.h"
#include "api/types/owner_reference.h"
#include "controllers/nginx/nginx_types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr::nginx {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

api::ObjectPtr Parse(const std::string& json) {
  auto object = api::Object::Parse(json);
  EXPECT_TRUE(object.ok()) << object.status();
  return object.ok() ? *object : nullptr;
}

nginx::Nginx NginxWith(const std::string& spec) {
  api::ObjectPtr object = Parse(
      R"({"apiVersion":"example.org/v1","kind":"Nginx","metadata":{"name":"web","namespace":"ns","uid":"u-1","generation":2},"spec":)" +
      spec + "}");
  auto nginx = nginx::Nginx::FromObject(*object);
  EXPECT_TRUE(nginx.ok()) << nginx.status();
  nginx->ApplyDefaults();
  return *nginx;
}

api::ObjectPtr NginxObject() {
  return Parse(
      R"({"apiVersion":"example.org/v1","kind":"Nginx","metadata":{"name":"web","namespace":"ns","uid":"u-1","generation":2},"spec":{}})");
}

// A Deployment as the API server returns it after creating what
// NewDeployment built: with its defaults filled in.
api::ObjectPtr ServerDeployment(int replicas, const std::string& image,
                                int port) {
  return Parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web-deploy","namespace":"ns","resourceVersion":"7",
      "generation":1,
      "labels":{"app":"underneathall","underneathall-app":"nginx-web",
                "team":"a"}},
    "spec":{"replicas":)" +
               std::to_string(replicas) + R"(,"revisionHistoryLimit":10,
      "progressDeadlineSeconds":600,
      "strategy":{"type":"RollingUpdate",
        "rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},
      "selector":{"matchLabels":{"app":"underneathall",
                                 "underneathall-app":"nginx-web"}},
      "template":{"metadata":{"labels":{"app":"underneathall",
                                        "underneathall-app":"nginx-web"}},
        "spec":{"restartPolicy":"Always","dnsPolicy":"ClusterFirst",
          "containers":[{"name":"nginx","image":")" +
               image + R"(","imagePullPolicy":"IfNotPresent",
            "terminationMessagePath":"/dev/termination-log",
            "ports":[{"containerPort":)" +
               std::to_string(port) + R"(,"protocol":"TCP"}]}]}}}})");
}

// `deployment` read through its typed view.
api::DeploymentView View(api::ObjectPtr deployment) {
  return *api::DeploymentView::Create(std::move(deployment));
}

TEST(ValidateNginxTest, DefaultsAreValid) {
  nginx::Nginx nginx = NginxWith("{}");
  EXPECT_THAT(ValidateNginx(nginx), IsEmpty());
  const DesiredDeployment d = DesiredFor(nginx);
  EXPECT_EQ(d.name, "web-deploy");
  EXPECT_EQ(d.namespace_, "ns");
  EXPECT_EQ(d.replicas, 1);
  EXPECT_EQ(d.image, "nginx:1.7.9");
  EXPECT_EQ(d.port, 80);
  EXPECT_EQ(d.labels.at("underneathall-app"), "nginx-web");
  EXPECT_EQ(d.labels.at("app"), "underneathall");
}

TEST(ValidateNginxTest, SchemaViolationsInTheServersWords) {
  EXPECT_THAT(ValidateNginx(NginxWith(R"({"replicas":-1})")),
              ElementsAre(HasSubstr("spec.replicas: Invalid value: -1")));
  EXPECT_THAT(ValidateNginx(NginxWith(R"({"image":""})")),
              ElementsAre(HasSubstr("spec.image")));
  EXPECT_THAT(ValidateNginx(NginxWith(R"({"port":0})")),
              ElementsAre(HasSubstr("spec.port")));
  EXPECT_THAT(ValidateNginx(NginxWith(R"({"port":65536})")),
              ElementsAre(HasSubstr("spec.port")));
}

TEST(ValidateNginxTest, RefusesWhatTheSchemaAllowsButADeploymentCannotRun) {
  EXPECT_THAT(
      ValidateNginx(NginxWith(R"({"replicas":2147483648})")),
      ElementsAre("spec.replicas: Invalid value: 2147483648: must be less "
                  "than or equal to 2147483647"));
  EXPECT_THAT(ValidateNginx(NginxWith(R"({"replicas":2147483647})")),
              IsEmpty());
  for (const char* bad :
       {"nginx latest", " nginx", "nginx:1.7.9 ", "NGINX", "nginx:", "nginx@",
        "nginx:-tag", "nginx@sha256:abc", "/nginx", "nginx//x", "nginx_-x",
        "bad host:5000/nginx", "-registry.io/nginx", "nginx:a/b"}) {
    EXPECT_THAT(
        ValidateNginx(NginxWith(std::string(R"({"image":")") + bad + "\"}")),
        ElementsAre(HasSubstr("must be a container image reference")))
        << bad;
  }
  for (const char* good :
       {"nginx", "nginx:1.7.9", "library/nginx:1.25-alpine",
        "docker.io/library/nginx:latest", "localhost:5000/team/web_app:v1.0",
        "Registry.Example.com/a/b__c/d-e.f:tag",
        "nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef"
        "0123456789abcdef",
        "quay.io/x/y:1@sha256:0123456789abcdef0123456789abcdef"}) {
    EXPECT_THAT(
        ValidateNginx(NginxWith(std::string(R"({"image":")") + good + "\"}")),
        IsEmpty())
        << good;
  }
}

TEST(NewDeploymentTest, LabelsSelectorContainerAndOwner) {
  api::ObjectPtr owner = NginxObject();
  DesiredDeployment d = DesiredFor(
      NginxWith(R"({"replicas":3,"image":"nginx:1.25","port":8080})"));
  auto deploy = NewDeployment(*owner, d);
  ASSERT_TRUE(deploy.ok()) << deploy.status();
  const api::Object& o = **deploy;
  EXPECT_EQ(o.name(), "web-deploy");
  EXPECT_EQ(o.namespace_(), "ns");
  EXPECT_EQ(o.Label("underneathall-app"), "nginx-web");
  EXPECT_EQ(o.Label("app"), "underneathall");
  EXPECT_EQ(o.Find("/spec/replicas")->GetInt(), 3);
  EXPECT_EQ(
      std::string(
          o.Find("/spec/selector/matchLabels/underneathall-app")->GetString()),
      "nginx-web");
  EXPECT_EQ(
      std::string(o.Find("/spec/template/metadata/labels/app")->GetString()),
      "underneathall");
  EXPECT_EQ(o.Find("/spec/template/spec/containers")->Size(), 1u);
  EXPECT_EQ(
      std::string(o.Find("/spec/template/spec/containers/0/name")->GetString()),
      "nginx");
  EXPECT_EQ(std::string(
                o.Find("/spec/template/spec/containers/0/image")->GetString()),
            "nginx:1.25");
  EXPECT_EQ(o.Find("/spec/template/spec/containers/0/ports/0/containerPort")
                ->GetInt(),
            8080);
  EXPECT_TRUE(api::IsControlledBy(o, *owner));
  auto ref = api::ControllerOf(o);
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->kind, "Nginx");
  EXPECT_EQ(ref->api_version, "example.org/v1");
  EXPECT_TRUE(ref->block_owner_deletion);
  // What it builds is what it wants.
  EXPECT_THAT(DeploymentDrift(View(*deploy), d), IsEmpty());
}

TEST(DeploymentDriftTest, TheServersDefaultsAndOthersLabelsAreNotDrift) {
  DesiredDeployment d = DesiredFor(NginxWith(R"({"replicas":2})"));
  EXPECT_THAT(DeploymentDrift(View(ServerDeployment(2, "nginx:1.7.9", 80)), d),
              IsEmpty());
}

TEST(DeploymentDriftTest, NamesEachOwnedFieldThatDiffers) {
  DesiredDeployment d = DesiredFor(NginxWith(R"({"replicas":2})"));
  EXPECT_THAT(DeploymentDrift(View(ServerDeployment(5, "nginx:1.8", 8080)), d),
              ElementsAre("replicas 5->2", "image nginx:1.8->nginx:1.7.9",
                          "port 8080->80"));
  api::ObjectBuilder b(*ServerDeployment(2, "nginx:1.7.9", 80));
  b.RemoveLabel("app");
  ASSERT_TRUE(
      b.SetString("/spec/template/metadata/labels/underneathall-app", "x")
          .ok());
  ASSERT_TRUE(
      b.SetString("/spec/template/spec/containers/0/name", "other").ok());
  EXPECT_THAT(
      DeploymentDrift(View(*b.Build()), d),
      ElementsAre("container nginx missing", "labels", "template labels"));
}

TEST(RepairDeploymentTest, SetsOwnedFieldsAndKeepsTheRest) {
  DesiredDeployment d = DesiredFor(NginxWith(R"({"replicas":2})"));
  api::ObjectBuilder b(*ServerDeployment(5, "nginx:1.8", 8080));
  ASSERT_TRUE(b.SetJson("/spec/template/spec/containers/-",
                        R"({"name":"sidecar","image":"busybox"})")
                  .ok());
  b.RemoveLabel("app");
  api::ObjectPtr drifted = *b.Build();
  auto repaired = RepairDeployment(*drifted, d);
  ASSERT_TRUE(repaired.ok()) << repaired.status();
  const api::Object& o = **repaired;
  EXPECT_THAT(DeploymentDrift(View(*repaired), d), IsEmpty());
  EXPECT_EQ(o.resource_version(), "7");  // a conditional update
  EXPECT_EQ(o.Label("team"), "a");
  EXPECT_EQ(o.Find("/spec/revisionHistoryLimit")->GetInt(), 10);
  EXPECT_EQ(std::string(o.Find("/spec/template/spec/containers/0/"
                               "imagePullPolicy")
                            ->GetString()),
            "IfNotPresent");
  EXPECT_EQ(o.Find("/spec/template/spec/containers")->Size(), 2u);
  EXPECT_EQ(o.Find("/spec/template/spec/containers/0/ports")->Size(), 1u);
}

TEST(RepairDeploymentTest, AddsTheContainerWhenMissing) {
  DesiredDeployment d = DesiredFor(NginxWith("{}"));
  api::ObjectBuilder b(*ServerDeployment(1, "nginx:1.7.9", 80));
  ASSERT_TRUE(b.SetString("/spec/template/spec/containers/0/name", "x").ok());
  auto repaired = RepairDeployment(**b.Build(), d);
  ASSERT_TRUE(repaired.ok()) << repaired.status();
  EXPECT_THAT(DeploymentDrift(View(*repaired), d), IsEmpty());
  EXPECT_EQ((*repaired)->Find("/spec/template/spec/containers")->Size(), 2u);
}

api::DeploymentView WithStatus(const std::string& status, int generation = 1) {
  api::ObjectBuilder b(*ServerDeployment(2, "nginx:1.7.9", 80));
  b.SetGeneration(generation);
  EXPECT_TRUE(b.SetJson("/status", status).ok());
  return *api::DeploymentView::Create(*b.Build());
}

TEST(ReadyConditionForTest, TrueOnlyWhenTheRolloutIsComplete) {
  api::Condition c = ReadyConditionFor(
      WithStatus(R"({"observedGeneration":1,"replicas":2,"updatedReplicas":2,
                     "availableReplicas":2,"readyReplicas":2})"),
      2, 5);
  EXPECT_EQ(c.type, "Ready");
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, kReasonReady);
  EXPECT_EQ(c.message, "Deployment web-deploy: 2 of 2 replicas ready");
  EXPECT_EQ(c.observed_generation, 5);

  c = ReadyConditionFor(
      WithStatus(R"({"observedGeneration":1,"replicas":2,"updatedReplicas":2,
                     "availableReplicas":1,"readyReplicas":1})"),
      2, 5);
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, kReasonProgressing);
  EXPECT_EQ(c.message, "Deployment web-deploy: 1 of 2 replicas ready");

  // Not yet observed by the deployment controller.
  c = ReadyConditionFor(
      WithStatus(R"({"observedGeneration":1,"replicas":2,"updatedReplicas":2,
                     "availableReplicas":2,"readyReplicas":2})",
                 2),
      2, 5);
  EXPECT_EQ(c.status, "False");
  // Old replicas still around.
  c = ReadyConditionFor(
      WithStatus(R"({"observedGeneration":1,"replicas":3,"updatedReplicas":2,
                     "availableReplicas":3,"readyReplicas":3})"),
      2, 5);
  EXPECT_EQ(c.status, "False");
  // A fresh Deployment without status.
  c = ReadyConditionFor(
      *api::DeploymentView::Create(ServerDeployment(2, "nginx:1.7.9", 80)), 2,
      5);
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.message, "Deployment web-deploy: 0 of 2 replicas ready");
  // Zero replicas wanted, zero there.
  c = ReadyConditionFor(WithStatus(R"({"observedGeneration":1})"), 0, 5);
  EXPECT_EQ(c.status, "True");
}

TEST(ReadyConditionForTest, ProgressDeadlineExceeded) {
  api::Condition c = ReadyConditionFor(
      WithStatus(R"({"observedGeneration":1,"replicas":2,"updatedReplicas":2,
        "conditions":[{"type":"Progressing","status":"False",
          "reason":"ProgressDeadlineExceeded",
          "message":"ReplicaSet \"web-deploy-1\" has timed out progressing."}]})"),
      2, 5);
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, kReasonDeadlineExceeded);
  EXPECT_THAT(c.message, HasSubstr("has timed out progressing"));
}

// A Deployment with everything the API server fills in, as the informer
// gets it.
api::ObjectPtr FullDeployment(const std::string& status) {
  api::ObjectBuilder b(*ServerDeployment(3, "nginx:1.25", 8080));
  EXPECT_TRUE(b.SetJson("/metadata/annotations",
                        R"({"deployment.kubernetes.io/revision":"2"})")
                  .ok());
  EXPECT_TRUE(b.SetString("/metadata/uid", "d-1").ok());
  EXPECT_TRUE(
      b.SetString("/metadata/creationTimestamp", "2026-11-28T10:00:00Z").ok());
  EXPECT_TRUE(b.SetJson("/metadata/ownerReferences",
                        R"([{"apiVersion":"example.org/v1","kind":"Nginx",
                             "name":"web","uid":"u-1","controller":true,
                             "blockOwnerDeletion":true}])")
                  .ok());
  EXPECT_TRUE(b.SetJson("/spec/template/spec/containers/-",
                        R"({"name":"sidecar","image":"busybox",
                            "resources":{},"ports":[{"name":"m",
                            "containerPort":9090,"protocol":"UDP"}]})")
                  .ok());
  EXPECT_TRUE(b.SetJson("/status", status).ok());
  return *b.Build();
}

TEST(TrimDeploymentForCacheTest, KeepsExactlyWhatTheControllerReads) {
  api::ObjectPtr full = FullDeployment(
      R"({"observedGeneration":1,"replicas":3,"updatedReplicas":3,
          "availableReplicas":2,"readyReplicas":2,
          "conditions":[
            {"type":"Available","status":"True","reason":"MinimumReplicasAvailable",
             "message":"Deployment has minimum availability.",
             "lastUpdateTime":"2026-11-28T10:00:00Z",
             "lastTransitionTime":"2026-11-28T10:00:00Z"},
            {"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable",
             "message":"ReplicaSet \"web-deploy-1\" has successfully progressed.",
             "lastUpdateTime":"2026-11-28T10:00:00Z",
             "lastTransitionTime":"2026-11-28T10:00:00Z"}]})");
  auto trimmed = TrimDeploymentForCache(full);
  ASSERT_TRUE(trimmed.ok()) << trimmed.status();
  EXPECT_EQ((*trimmed)->ToJson(),
            R"({"apiVersion":"apps/v1","kind":"Deployment",)"
            R"("metadata":{"name":"web-deploy","namespace":"ns",)"
            R"("uid":"d-1","resourceVersion":"7","generation":1,)"
            R"("labels":{"app":"underneathall",)"
            R"("underneathall-app":"nginx-web","team":"a"},)"
            R"("ownerReferences":[{"apiVersion":"example.org/v1",)"
            R"("kind":"Nginx","name":"web","uid":"u-1","controller":true,)"
            R"("blockOwnerDeletion":true}]},)"
            R"("spec":{"replicas":3,"template":{"metadata":{"labels":)"
            R"({"app":"underneathall","underneathall-app":"nginx-web"}},)"
            R"("spec":{"containers":[{"name":"nginx","image":"nginx:1.25",)"
            R"("ports":[{"containerPort":8080}]},{"name":"sidecar",)"
            R"("image":"busybox","ports":[{"containerPort":9090}]}]}}},)"
            R"("status":{"replicas":3,"readyReplicas":2,)"
            R"("availableReplicas":2,"updatedReplicas":3,)"
            R"("observedGeneration":1}})");
  EXPECT_LT((*trimmed)->SpaceUsed(), full->SpaceUsed() * 3 / 5);

  // The controller decides the same from either.
  const DesiredDeployment want = DesiredFor(NginxWith(R"({"replicas":2})"));
  EXPECT_EQ(DeploymentDrift(View(*trimmed), want),
            DeploymentDrift(View(full), want));
  const api::Condition from_full = ReadyConditionFor(View(full), 3, 4);
  const api::Condition from_trimmed = ReadyConditionFor(View(*trimmed), 3, 4);
  EXPECT_EQ(from_trimmed.status, from_full.status);
  EXPECT_EQ(from_trimmed.reason, from_full.reason);
  EXPECT_EQ(from_trimmed.message, from_full.message);
  EXPECT_TRUE(api::IsControlledBy(**trimmed, *NginxObject()));
  EXPECT_FALSE((*trimmed)->being_deleted());
}

TEST(TrimDeploymentForCacheTest, KeepsADeadlineExceededAndDeletion) {
  api::ObjectBuilder b(*FullDeployment(
      R"({"observedGeneration":1,"replicas":3,"updatedReplicas":3,
          "conditions":[{"type":"Progressing","status":"False",
            "reason":"ProgressDeadlineExceeded",
            "message":"ReplicaSet \"web-deploy-1\" has timed out progressing.",
            "lastUpdateTime":"2026-11-28T10:00:00Z"}]})"));
  ASSERT_TRUE(
      b.SetString("/metadata/deletionTimestamp", "2026-11-28T11:00:00Z").ok());
  ASSERT_TRUE(
      b.SetJson("/metadata/finalizers", R"(["foregroundDeletion"])").ok());
  api::ObjectPtr full = *b.Build();
  auto trimmed = TrimDeploymentForCache(full);
  ASSERT_TRUE(trimmed.ok()) << trimmed.status();
  EXPECT_TRUE((*trimmed)->being_deleted());
  EXPECT_EQ((*trimmed)->ToJson().find("lastUpdateTime"), std::string::npos);
  const api::Condition c = ReadyConditionFor(View(*trimmed), 3, 4);
  EXPECT_EQ(c.reason, kReasonDeadlineExceeded);
  EXPECT_THAT(c.message, HasSubstr("has timed out progressing"));
  EXPECT_EQ(c.message, ReadyConditionFor(View(full), 3, 4).message);
}

TEST(TrimDeploymentForCacheTest, OddShapesReadAsTheyDid) {
  // No spec or status at all, a containers list with a non-object, a
  // replicas of the wrong type: the views read the same defaults.
  for (const std::string& json : {
           std::string(R"({"apiVersion":"apps/v1","kind":"Deployment",
             "metadata":{"name":"a","namespace":"ns"}})"),
           std::string(R"({"apiVersion":"apps/v1","kind":"Deployment",
             "metadata":{"name":"a","namespace":"ns"},
             "spec":{"replicas":"two","template":{"spec":{"containers":
               [7,{"name":"nginx","ports":"80"}]}}},"status":[]})"),
       }) {
    api::ObjectPtr full = Parse(json);
    auto trimmed = TrimDeploymentForCache(full);
    ASSERT_TRUE(trimmed.ok()) << trimmed.status();
    const DesiredDeployment want = DesiredFor(NginxWith("{}"));
    EXPECT_EQ(DeploymentDrift(View(*trimmed), want),
              DeploymentDrift(View(full), want))
        << json;
    EXPECT_EQ(View(*trimmed).replicas(), View(full).replicas());
  }
  EXPECT_FALSE(TrimDeploymentForCache(nullptr).ok());
}

}  // namespace
}  // namespace kcr::nginx
