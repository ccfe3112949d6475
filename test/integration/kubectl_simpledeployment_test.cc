// kubectl against the SimpleDeployment manifests (manifests/crds and
// manifests/samples) on the local API server: its short names, its
// printer columns with the create handler's result where the handler
// framework stores it, and the simulated node running its kind of pod
// (a shell that ends with `sleep N`) for N seconds.
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_apiserver_fixture.h"
#include "test/integration/kubectl_harness.h"

namespace kcr::integration {
namespace {

using ::testing::ElementsAre;

std::string Cwd() {
  char cwd[4096];
  return getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : ".";
}

class KubectlSimpleDeploymentTest : public KubectlApiServerFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.controllers.node.running_after = absl::Milliseconds(100);
    ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
    KubectlResult r = kubectl_->Run(
        {"apply", "-f", Cwd() + "/manifests/crds/simpledeployment.yaml"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = RunUntil({"get", "crd", "simpledeployments.example.org", "-o",
                  "jsonpath={.status.conditions[?(@.type==\"Established\")]"
                  ".status}"},
                 [](const KubectlResult& r) { return r.out == "True"; });
    ASSERT_EQ(r.out, "True") << r.err;
  }
};

TEST_F(KubectlSimpleDeploymentTest, TheSampleShowsItsChildren) {
  KubectlResult r = kubectl_->Run(
      {"apply", "-f", Cwd() + "/manifests/samples/simpledeployment.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // What the create handler's result becomes: status.create_fn.
  r = kubectl_->Run({"patch", "simpledeployment", "example-01",
                     "--subresource=status", "--type=merge", "-p",
                     R"({"status":{"create_fn":{"children":["u-1"]}}})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"simpledeployments", "simpledeployment", "sd",
                           "simdep", "simpledeployments.example.org"}) {
    r = kubectl_->Run({"get", name});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    auto rows = WithoutColumn(KubectlHarness::Columns(r.out), 3);
    EXPECT_THAT(rows,
                ElementsAre(ElementsAre("NAME", "SLEEPYTIME", "CHILDREN"),
                            ElementsAre("example-01", "120", "[\"u-1\"]")))
        << name << ": " << r.out;
  }
  r = kubectl_->Run({"get", "sd", "-l", "app=simple-app", "-o", "name"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "simpledeployment.example.org/example-01\n");
}

TEST_F(KubectlSimpleDeploymentTest, ThePodSleepsItsSecondsThenCompletes) {
  KubectlResult r = kubectl_->Run(
      {"run", "nap", "--image=busybox", "--restart=Never", "--command", "--",
       "sh", "-c", "echo \"I'm so very useful!\"; sleep 2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl_->Run({"wait", "--for=jsonpath={.status.phase}=Running",
                     "pod/nap", "--timeout=20s"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  r = kubectl_->Run({"wait", "--for=jsonpath={.status.phase}=Succeeded",
                     "pod/nap", "--timeout=20s"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  r = kubectl_->Run({"get", "pod", "nap", "-o",
                     "jsonpath={.status.containerStatuses[0].state.terminated."
                     "reason} {.status.containerStatuses[0].state.terminated."
                     "startedAt} {.status.containerStatuses[0].state."
                     "terminated.finishedAt}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> parts = absl::StrSplit(r.out, ' ');
  ASSERT_EQ(parts.size(), 3u) << r.out;
  EXPECT_EQ(parts[0], "Completed");
  absl::Time started, finished;
  std::string err;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, parts[1], &started, &err));
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, parts[2], &finished, &err));
  // Whole seconds on the wire: 2s of sleep is 2 or 3 apart.
  EXPECT_GE(finished - started, absl::Seconds(2));
  EXPECT_LE(finished - started, absl::Seconds(3));
}

}  // namespace
}  // namespace kcr::integration
