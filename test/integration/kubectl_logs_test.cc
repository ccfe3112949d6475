// kubectl logs against the local API server: pods/log serves the simulated
// containers' output (apiserver/pod_log.h) with kube-apiserver's and the
// kubelet's answers for pods that cannot be read.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "apiserver/api_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_apiserver_fixture.h"
#include "test/integration/kubectl_harness.h"

namespace kcr::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

class KubectlLogsTest : public KubectlApiServerFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.controllers.node.running_after = absl::Milliseconds(100);
    ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
  }

  // Creates a pod with one container "c" (restartPolicy Never) and the
  // given annotations (YAML flow mapping entries).
  void CreatePod(const std::string& name, const std::string& annotations) {
    KubectlResult r = kubectl_->Run({"apply", "-f", "-"}, R"(
apiVersion: v1
kind: Pod
metadata:
  name: )" + name + R"(
  annotations: {)" + annotations + R"(}
spec:
  restartPolicy: Never
  containers: [{name: c, image: "example.org/runner:1"}]
)");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Waits (generously) until the pod's phase is `phase`.
  void WaitForPhase(const std::string& pod, const std::string& phase) {
    auto reached = [&](const KubectlResult& r) {
      return r.exit_code == 0 && r.out == phase;
    };
    KubectlResult r = RunUntil(
        {"get", "pod", pod, "-o", "jsonpath={.status.phase}"}, reached);
    if (reached(r)) return;
    FAIL() << "pod " << pod << " never reached " << phase << ", last " << r.out;
  }
};

TEST_F(KubectlLogsTest, LogOfARunningAndAFinishedPod) {
  CreatePod("job", R"("kcr.io/sim-complete-after": "60s",)"
                   R"( "kcr.io/sim-message": '{"requests":10,"failures":0}')");
  WaitForPhase("job", "Running");
  KubectlResult r = kubectl_->Run({"logs", "job"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Starting c (image example.org/runner:1)\n"
            "c is running on node kcr-node (simulated: no process runs)\n");

  r = kubectl_->Run({"logs", "job", "--timestamps"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, MatchesRegex("([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}"
                                  "\\.[0-9]{9}Z [^\n]+\n){2}"));
  r = kubectl_->Run({"logs", "job", "--limit-bytes=5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Start");
  r = kubectl_->Run({"logs", "job", "--previous"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("previous terminated container \"c\" in pod "
                               "\"job\" not found"));

  // -f streams until the container terminates; the termination message is
  // the last line.
  std::unique_ptr<KubectlProcess> follow =
      kubectl_->Start({"logs", "-f", "job"});
  ASSERT_TRUE(follow->WaitForLine("c is running", absl::Seconds(30)))
      << follow->out();
  EXPECT_TRUE(follow->Running());
  r = kubectl_->Run({"annotate", "--overwrite", "pod", "job",
                     "kcr.io/sim-complete-after=0s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::optional<int> code = follow->Wait(absl::Seconds(30));
  ASSERT_TRUE(code.has_value()) << follow->out();
  EXPECT_EQ(*code, 0);
  EXPECT_THAT(follow->out(), HasSubstr("c is running on node kcr-node "
                                       "(simulated: no process runs)\n"
                                       "{\"requests\":10,\"failures\":0}\n"));
  WaitForPhase("job", "Succeeded");

  r = kubectl_->Run({"logs", "job", "--tail=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"requests\":10,\"failures\":0}\n");
  // A finished container's log ends at once with -f.
  r = kubectl_->Run({"logs", "-f", "job", "--tail=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n{\"requests\":10,\"failures\":0}\n"));
}

TEST_F(KubectlLogsTest, SimLogAnnotation) {
  CreatePod("printer", R"("kcr.io/sim-log": "hello\nworld\n")");
  WaitForPhase("printer", "Running");
  KubectlResult r = kubectl_->Run({"logs", "printer"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hello\nworld\n");
  r = kubectl_->Run({"logs", "pod/printer", "-c", "c", "--tail=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "world\n");
}

TEST_F(KubectlLogsTest, Errors) {
  KubectlResult r = kubectl_->Run({"logs", "missing"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("pods \"missing\" not found"));

  CreatePod("slow", R"("kcr.io/sim-running-after": "1h")");
  // Scheduled, the container still being created.
  r = RunUntil({"logs", "slow"}, [](const KubectlResult& got) {
    return got.exit_code != 0 && absl::StrContains(got.err, "waiting to start");
  });
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("Error from server (BadRequest): container "
                               "\"c\" in pod \"slow\" is waiting to start: "
                               "ContainerCreating"));

  r = kubectl_->Run({"logs", "slow", "-c", "nope"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("container nope is not valid for pod slow"));

  r = kubectl_->Run({"apply", "-f", "-"}, R"(
apiVersion: v1
kind: Pod
metadata: {name: two}
spec:
  initContainers: [{name: init, image: busybox}]
  containers: [{name: a, image: nginx}, {name: b, image: busybox}]
)");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl_->Run(
      {"get", "--raw", "/api/v1/namespaces/default/pods/two/log"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("a container name must be specified for pod "
                               "two, choose one of: [init a b]"));
  r = kubectl_->Run(
      {"get", "--raw", "/api/v1/namespaces/default/pods/two/log?tailLines=-5"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("PodLogOptions \"two\" is invalid: "
                               "tailLines: Invalid value: -5: must be "
                               "greater than or equal to 0"));
}

}  // namespace
}  // namespace kcr::integration
