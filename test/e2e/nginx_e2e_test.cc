// The nginx controller as users run it: the real controller-manager
// against a local API server process, driven with kubectl. An Nginx gets
// its Deployment, which the server's deployment controller and simulated
// node make ready; kubectl patches of the Nginx are followed; kubectl
// scale and set image on the Deployment are undone; a spec the schema
// accepts but no container runtime would is refused with a condition and a
// Warning Event; a delete leaves the Deployment to the garbage collector.
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/e2e/manager_fixture.h"

namespace kcr::e2e {
namespace {

using apiserver::WaitFor;
using ::testing::HasSubstr;

constexpr char kNginx[] = R"(apiVersion: example.org/v1
kind: Nginx
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
)";

constexpr char kReady[] = R"({.status.conditions[?(@.type=="Ready")].status})";
constexpr char kReason[] = R"({.status.conditions[?(@.type=="Ready")].reason})";

class NginxE2eTest : public ManagerFixture {
 protected:
  void Start() {
    ASSERT_NO_FATAL_FAILURE(StartServerWithCrds("nginx"));
    mgr_ = StartManager({"--controllers=nginx"});
    ASSERT_TRUE(mgr_->started());
    ASSERT_TRUE(Apply(kNginx));
    ASSERT_TRUE(WaitForJsonpath({"nginx", "web"}, kReady, "True"))
        << last_jsonpath_ << mgr_->Log();
  }

  ManagerProcess* mgr_ = nullptr;
};

TEST_F(NginxE2eTest, CreateUpdateAndDelete) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::vector<std::string> deploy = {"deployment", "web-deploy"};
  EXPECT_EQ(Jsonpath(deploy, "{.metadata.labels.underneathall-app}"),
            "nginx-web");
  EXPECT_EQ(Jsonpath(deploy, "{.metadata.labels.app}"), "underneathall");
  EXPECT_EQ(Jsonpath(deploy, "{.spec.selector.matchLabels}"),
            R"({"app":"underneathall","underneathall-app":"nginx-web"})");
  EXPECT_EQ(Jsonpath(deploy, "{.spec.template.spec.containers[*].name}"),
            "nginx");
  EXPECT_EQ(Jsonpath(deploy, "{.spec.template.spec.containers[0].image}"),
            "nginx:1.7.9");
  EXPECT_EQ(Jsonpath(deploy,
                     "{.spec.template.spec.containers[0].ports[0]."
                     "containerPort}"),
            "80");
  EXPECT_EQ(Jsonpath(deploy,
                     "{.metadata.ownerReferences[0].kind}/"
                     "{.metadata.ownerReferences[0].name}/"
                     "{.metadata.ownerReferences[0].controller}"),
            "Nginx/web/true");
  EXPECT_EQ(Jsonpath({"nginx", "web"}, "{.status.readyReplicas}"), "2");
  EXPECT_EQ(Jsonpath({"nginx", "web"}, "{.status.observedGeneration}"),
            Jsonpath({"nginx", "web"}, "{.metadata.generation}"));
  EXPECT_THAT(
      Kubectl({"get", "events", "--field-selector", "involvedObject.name=web"}),
      HasSubstr("Created"));

  Kubectl({"patch", "nginx", "web", "--type=merge", "-p",
           R"({"spec":{"replicas":3,"image":"nginx:1.25"}})"});
  EXPECT_TRUE(WaitForJsonpath(
      deploy, "{.spec.replicas} {.spec.template.spec.containers[0].image}",
      "3 nginx:1.25"))
      << last_jsonpath_;
  EXPECT_TRUE(WaitForJsonpath({"nginx", "web"},
                              "{.status.readyReplicas} " + std::string(kReady),
                              "3 True"))
      << last_jsonpath_;
  EXPECT_TRUE(WaitFor([&] {
    return absl::StrContains(Kubectl({"describe", "nginx", "web"}),
                             "Updated Deployment web-deploy");
  }));

  Kubectl({"delete", "nginx", "web"});
  EXPECT_TRUE(WaitForGone(deploy)) << "the garbage collector kept it";
  EXPECT_TRUE(WaitFor(
      [&] {
        return Kubectl({"get", "replicasets,pods", "-l",
                        "underneathall-app=nginx-web", "-o", "name"})
            .empty();
      },
      absl::Seconds(60)));
}

TEST_F(NginxE2eTest, PutsBackAScaledOrEditedDeployment) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::vector<std::string> deploy = {"deployment", "web-deploy"};

  Kubectl({"scale", "deployment", "web-deploy", "--replicas=5"});
  EXPECT_TRUE(WaitFor(
      [&] {
        return mgr_->CountLogLines(
                   "repaired drift of deployment=web-deploy "
                   "changes=replicas 5->2") >= 1;
      },
      absl::Seconds(60)))
      << mgr_->Log();
  EXPECT_TRUE(WaitForJsonpath(deploy, "{.spec.replicas}", "2"))
      << last_jsonpath_;

  Kubectl({"set", "image", "deployment/web-deploy", "nginx=httpd:2.4"});
  EXPECT_TRUE(WaitFor(
      [&] {
        return mgr_->CountLogLines("changes=image httpd:2.4->nginx:1.7.9") >= 1;
      },
      absl::Seconds(60)))
      << mgr_->Log();
  EXPECT_TRUE(WaitForJsonpath(
      deploy, "{.spec.template.spec.containers[0].image}", "nginx:1.7.9"))
      << last_jsonpath_;
  EXPECT_TRUE(WaitForJsonpath({"nginx", "web"}, kReady, "True"))
      << last_jsonpath_;
  const std::string events =
      Kubectl({"get", "events", "--field-selector", "reason=DriftRepaired"});
  EXPECT_THAT(events, HasSubstr("replicas 5->2"));
  EXPECT_THAT(events, HasSubstr("image httpd:2.4->nginx:1.7.9"));
}

TEST_F(NginxE2eTest, AnInvalidSpecIsRefusedAndChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::vector<std::string> deploy = {"deployment", "web-deploy"};
  const std::optional<std::string> generation =
      Jsonpath(deploy, "{.metadata.generation}");

  // What the schema refuses never reaches the controller.
  integration::KubectlResult rejected =
      kubectl_->Run({"patch", "nginx", "web", "--type=merge", "-p",
                     R"({"spec":{"replicas":-1}})"});
  EXPECT_NE(rejected.exit_code, 0);
  EXPECT_THAT(rejected.err, HasSubstr("spec.replicas"));

  // What it allows but no container runtime would run is refused by the
  // controller.
  Kubectl({"patch", "nginx", "web", "--type=merge", "-p",
           R"({"spec":{"replicas":4,"image":"NGINX latest"}})"});
  EXPECT_TRUE(WaitForJsonpath({"nginx", "web"},
                              std::string(kReady) + "/" + kReason,
                              "False/InvalidSpec"))
      << last_jsonpath_;
  EXPECT_THAT(Jsonpath({"nginx", "web"},
                       R"({.status.conditions[?(@.type=="Ready")].message})")
                  .value_or(""),
              HasSubstr("spec.image: Invalid value: \"NGINX latest\""));
  EXPECT_TRUE(WaitFor([&] {
    const std::string events =
        Kubectl({"get", "events", "--field-selector", "type=Warning"});
    return absl::StrContains(events, "InvalidSpec") &&
           absl::StrContains(events, "nginx/web");
  }));
  EXPECT_THAT(Kubectl({"describe", "nginx", "web"}),
              HasSubstr("must be a container image reference"));
  EXPECT_EQ(Jsonpath(deploy, "{.metadata.generation}"), generation);
  EXPECT_EQ(Jsonpath(deploy,
                     "{.spec.replicas} "
                     "{.spec.template.spec.containers[0].image}"),
            "2 nginx:1.7.9");

  // Fixed: followed again.
  Kubectl({"patch", "nginx", "web", "--type=merge", "-p",
           R"({"spec":{"image":"nginx:1.25"}})"});
  EXPECT_TRUE(WaitForJsonpath(
      deploy, "{.spec.replicas} {.spec.template.spec.containers[0].image}",
      "4 nginx:1.25"))
      << last_jsonpath_;
  EXPECT_TRUE(WaitForJsonpath({"nginx", "web"}, kReady, "True"))
      << last_jsonpath_;
}

}  // namespace
}  // namespace kcr::e2e
