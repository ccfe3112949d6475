#include "api/types/deployment.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/api/testdata_util.h"

namespace kcr {
namespace api {
namespace {

using ::testing::ElementsAre;

ObjectPtr Parse(std::string_view json) {
  absl::StatusOr<ObjectPtr> obj = Object::Parse(json);
  EXPECT_TRUE(obj.ok()) << obj.status();
  return obj.ok() ? *obj : nullptr;
}

TEST(DeploymentViewTest, ReadsFixture) {
  absl::StatusOr<DeploymentView> d =
      DeploymentView::Create(Parse(testing::ReadTestdata("deployment.json")));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->replicas(), 3);
  EXPECT_EQ(d->selector_match_labels().Get("app"), "web-frontend");
  ASSERT_NE(d->selector(), nullptr);
  ASSERT_NE(d->pod_template(), nullptr);
  EXPECT_EQ(d->template_labels().Get("tier"), "frontend");
  auto containers = d->containers();
  ASSERT_EQ(containers.size(), 1u);
  EXPECT_EQ(containers[0].name, "web");
  EXPECT_EQ(containers[0].image, "registry.example.com/web-frontend:2.14.1");
  EXPECT_THAT(containers[0].container_ports, ElementsAre(8080));
  EXPECT_EQ(d->status_replicas(), 3);
  EXPECT_EQ(d->ready_replicas(), 3);
  EXPECT_EQ(d->available_replicas(), 3);
  EXPECT_EQ(d->updated_replicas(), 3);
  EXPECT_EQ(d->observed_generation(), 7);
  EXPECT_TRUE(IsStatusConditionTrue(d->conditions(), "Available"));
}

TEST(DeploymentViewTest, DefaultsAndBadFields) {
  absl::StatusOr<DeploymentView> d = DeploymentView::Create(Parse(
      R"({"kind":"Deployment","metadata":{},"spec":{"replicas":"3",)"
      R"("template":{"spec":{"containers":[5,{"ports":[{"containerPort":"x"}]}]}}},)"
      R"("status":{"readyReplicas":-1.5}})"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->replicas(), 1);  // mistyped reads as absent -> default
  EXPECT_EQ(d->ready_replicas(), 0);
  EXPECT_TRUE(d->selector_match_labels().empty());
  ASSERT_EQ(d->containers().size(), 1u);
  EXPECT_TRUE(d->containers()[0].container_ports.empty());
  absl::StatusOr<DeploymentView> zero =
      DeploymentView::Create(Parse(R"({"metadata":{},"spec":{"replicas":0}})"));
  EXPECT_EQ(zero->replicas(), 0);
  EXPECT_EQ(
      DeploymentView::Create(
          Parse(
              R"({"metadata":{},"spec":{"selector":{"matchLabels":{"a":1}}}})"))
          .status()
          .message(),
      "spec.selector.matchLabels.a is not a string");
  EXPECT_FALSE(
      DeploymentView::Create(Parse(R"({"kind":"Pod","metadata":{}})")).ok());
}

TEST(DeploymentBuilderTest, BuildsWhatTheNginxControllerWrites) {
  ObjectPtr owner = Parse(
      R"({"apiVersion":"example.org/v1","kind":"Nginx","metadata":{"name":"web","namespace":"ns","uid":"u-1"}})");
  DeploymentBuilder b("ns", "web-deploy");
  b.SetReplicas(2)
      .SetLabels({{"app", "underneathall"}})
      .SetSelectorLabels({{"underneathall-app", "nginx-web"}})
      .SetContainer("nginx", "nginx:1.7.9", 80)
      .SetOwner(NewControllerRef(*owner));
  EXPECT_EQ(
      b.ToJson(),
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web-deploy",)"
      R"("namespace":"ns","labels":{"app":"underneathall"},"ownerReferences":[)"
      R"({"apiVersion":"example.org/v1","kind":"Nginx","name":"web","uid":"u-1",)"
      R"("controller":true,"blockOwnerDeletion":true}]},"spec":{"replicas":2,)"
      R"("selector":{"matchLabels":{"underneathall-app":"nginx-web"}},)"
      R"("template":{"metadata":{"labels":{"underneathall-app":"nginx-web"}},)"
      R"("spec":{"containers":[{"name":"nginx","image":"nginx:1.7.9",)"
      R"("ports":[{"containerPort":80}]}]}}}})");
  absl::StatusOr<ObjectPtr> built = b.Build();
  ASSERT_TRUE(built.ok());
  absl::StatusOr<DeploymentView> view = DeploymentView::Create(*built);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->replicas(), 2);
  EXPECT_TRUE(IsControlledBy(**built, *owner));

  // Edit: scale and change the image, keeping the rest of the container.
  DeploymentBuilder edit(**built);
  ASSERT_TRUE(edit.object()
                  .SetString("/spec/template/spec/containers/0/imagePullPolicy",
                             "Always")
                  .ok());
  edit.SetReplicas(5).SetContainer("nginx", "nginx:1.25", 8080);
  edit.SetContainer("sidecar", "busybox");
  absl::StatusOr<DeploymentView> edited = DeploymentView::Create(*edit.Build());
  ASSERT_TRUE(edited.ok());
  EXPECT_EQ(edited->replicas(), 5);
  auto containers = edited->containers();
  ASSERT_EQ(containers.size(), 2u);
  EXPECT_EQ(containers[0].image, "nginx:1.25");
  EXPECT_THAT(containers[0].container_ports, ElementsAre(8080));
  EXPECT_EQ(containers[1].name, "sidecar");
  EXPECT_TRUE(containers[1].container_ports.empty());
  EXPECT_NE(
      edited->object().Find("/spec/template/spec/containers/0/imagePullPolicy"),
      nullptr);
}

}  // namespace
}  // namespace api
}  // namespace kcr
