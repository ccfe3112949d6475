// The simulated node's pod Events as kubectl shows them: `kubectl get
// events` and the Events section of `kubectl describe pod`.
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

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class KubectlEventsTest : public KubectlApiServerFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.controllers.node.running_after = absl::Milliseconds(100);
    ASSERT_NO_FATAL_FAILURE(StartServer(std::move(options)));
  }

  // Runs kubectl until its output contains `text` (generous deadline).
  KubectlResult WaitForOutput(const std::vector<std::string>& args,
                              const std::string& text) {
    return RunUntil(args, [&](const KubectlResult& r) {
      return r.exit_code == 0 && absl::StrContains(r.out, text);
    });
  }
};

TEST_F(KubectlEventsTest, PodLifecycleEvents) {
  KubectlResult r =
      kubectl_->Run({"run", "web", "--image=nginx:1.27", "--restart=Never"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = WaitForOutput({"get", "events"}, "Started container web");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Without the first (LAST SEEN) column.
  auto rows = WithoutColumn(KubectlHarness::Columns(r.out), 0);
  ASSERT_FALSE(rows.empty()) << r.out;
  EXPECT_THAT(rows[0], ElementsAre("TYPE", "REASON", "OBJECT", "MESSAGE"));
  EXPECT_THAT(rows, Contains(ElementsAre(
                        "Normal", "Scheduled", "pod/web",
                        "Successfully assigned default/web to kcr-node")));
  EXPECT_THAT(rows, Contains(ElementsAre("Normal", "Pulling", "pod/web",
                                         "Pulling image \"nginx:1.27\"")));
  EXPECT_THAT(rows, Contains(ElementsAre("Normal", "Pulled", "pod/web",
                                         "Successfully pulled image "
                                         "\"nginx:1.27\" in 0s (0s including "
                                         "waiting)")));
  EXPECT_THAT(rows, Contains(ElementsAre("Normal", "Created", "pod/web",
                                         "Created container: web")));
  EXPECT_THAT(rows, Contains(ElementsAre("Normal", "Started", "pod/web",
                                         "Started container web")));

  // -o wide: SUBOBJECT and SOURCE.
  r = kubectl_->Run(
      {"get", "events", "-o", "wide", "--field-selector", "reason=Started"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("spec.containers{web}"));
  EXPECT_THAT(r.out, HasSubstr("kubelet, kcr-node"));

  r = kubectl_->Run({"describe", "pod", "web"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t events = r.out.find("\nEvents:");
  ASSERT_NE(events, std::string::npos) << r.out;
  const std::string section = r.out.substr(events);
  EXPECT_THAT(section, HasSubstr("default-scheduler"));
  EXPECT_THAT(section,
              HasSubstr("Successfully assigned default/web to kcr-node"));
  EXPECT_THAT(section, HasSubstr("kubelet"));
  EXPECT_THAT(section, HasSubstr("Started container web"));
}

TEST_F(KubectlEventsTest, FailedScheduling) {
  KubectlResult r = kubectl_->Run({"cordon", "kcr-node"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = kubectl_->Run({"run", "stuck", "--image=nginx", "--restart=Never"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = WaitForOutput({"get", "events", "--field-selector", "type=Warning"},
                    "FailedScheduling");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("pod/stuck"));
  EXPECT_THAT(r.out, HasSubstr("0/1 nodes are available: 1 node(s) were "
                               "unschedulable."));
}

}  // namespace
}  // namespace kcr::integration
