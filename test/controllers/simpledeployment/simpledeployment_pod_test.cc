#include "controllers/simpledeployment/simpledeployment_pod.h"

#include <string>

#include "api/json/json_util.h"
#include "api/object.h"
#include "api/types/owner_reference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr::simpledeployment {
namespace {

using ::testing::HasSubstr;

api::ObjectPtr Owner(const std::string& labels = R"({"app":"simple-app"})") {
  absl::StatusOr<api::ObjectPtr> o = api::Object::Parse(
      R"({"apiVersion":"example.org/v1","kind":"SimpleDeployment",
          "metadata":{"name":"example-01","namespace":"default",
                      "uid":"6f1c2a3e-0000-4000-8000-000000000001",
                      "labels":)" +
      labels + R"(},"spec":{"sleepytime":"120"}})");
  EXPECT_TRUE(o.ok()) << o.status();
  return *o;
}

std::string At(const api::Object& o, const char* pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  if (v == nullptr) return "<absent>";
  return *json::JsonToString(*v);
}

TEST(SimpleDeploymentPodTest, TheTutorialsBusyboxPodAdopted) {
  api::ObjectPtr owner = Owner();
  absl::StatusOr<api::ObjectPtr> pod = BuildPod(*owner, 120);
  ASSERT_TRUE(pod.ok()) << pod.status();
  const api::Object& p = **pod;
  EXPECT_EQ(At(p, "/apiVersion"), R"("v1")");
  EXPECT_EQ(At(p, "/kind"), R"("Pod")");
  // Adopted as kopf.adopt does: namespace, generateName, labels, owner.
  EXPECT_EQ(p.namespace_(), "default");
  EXPECT_EQ(p.name(), "");
  EXPECT_EQ(At(p, "/metadata/generateName"), R"("example-01-")");
  EXPECT_EQ(At(p, "/metadata/labels"),
            R"({"app":"simple-app","simpledeployment.example.org/uid":)"
            R"("6f1c2a3e-0000-4000-8000-000000000001"})");
  EXPECT_TRUE(api::IsControlledBy(p, *owner));
  const std::optional<api::OwnerReference> ref = api::ControllerOf(p);
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->api_version, "example.org/v1");
  EXPECT_EQ(ref->kind, "SimpleDeployment");
  EXPECT_EQ(ref->name, "example-01");
  EXPECT_TRUE(ref->block_owner_deletion);
  // Echo, then sleep, never restarted.
  EXPECT_EQ(At(p, "/spec/restartPolicy"), R"("Never")");
  EXPECT_EQ(At(p, "/spec/containers/0/name"), R"("the-only-one")");
  EXPECT_EQ(At(p, "/spec/containers/0/image"), R"("busybox")");
  EXPECT_EQ(At(p, "/spec/containers/0/command"), R"(["sh","-x","-c"])");
  EXPECT_EQ(At(p, "/spec/containers/0/args"),
            R"(["echo \"I'm so very useful!\"\nsleep 120\n"])");
  EXPECT_EQ(p.Find("/spec/containers/1"), nullptr);
}

TEST(SimpleDeploymentPodTest, SleepytimeAndImage) {
  PodOptions o;
  o.image = "registry.local/busybox:1.36";
  absl::StatusOr<api::ObjectPtr> pod = BuildPod(*Owner(), 0, o);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(At(**pod, "/spec/containers/0/image"),
            R"("registry.local/busybox:1.36")");
  EXPECT_THAT(At(**pod, "/spec/containers/0/args/0"), HasSubstr("sleep 0\\n"));
  EXPECT_EQ(PodScript(45), "echo \"I'm so very useful!\"\nsleep 45\n");
}

TEST(SimpleDeploymentPodTest, TheOwnerLabelIsOursEvenIfTheOwnerHasOne) {
  absl::StatusOr<api::ObjectPtr> pod = BuildPod(
      *Owner(R"({"simpledeployment.example.org/uid":"forged","tier":"x"})"), 5);
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(At(**pod, "/metadata/labels"),
            R"({"simpledeployment.example.org/uid":)"
            R"("6f1c2a3e-0000-4000-8000-000000000001","tier":"x"})");
  absl::StatusOr<api::ObjectPtr> bare = BuildPod(*Owner("{}"), 5);
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ(At(**bare, "/metadata/labels"),
            R"({"simpledeployment.example.org/uid":)"
            R"("6f1c2a3e-0000-4000-8000-000000000001"})");
}

TEST(SimpleDeploymentPodTest, RefusesWhatCannotOwnOrSleep) {
  EXPECT_EQ(BuildPod(*Owner(), -1).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<api::ObjectPtr> no_uid = api::Object::Parse(
      R"({"apiVersion":"example.org/v1","kind":"SimpleDeployment",
          "metadata":{"name":"x","namespace":"default"}})");
  ASSERT_TRUE(no_uid.ok());
  EXPECT_EQ(BuildPod(**no_uid, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<api::ObjectPtr> no_ns = api::Object::Parse(
      R"({"apiVersion":"example.org/v1","kind":"SimpleDeployment",
          "metadata":{"name":"x","uid":"u"}})");
  ASSERT_TRUE(no_ns.ok());
  EXPECT_EQ(BuildPod(**no_ns, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kcr::simpledeployment
