// The pods controller as users run it: a pod made with kubectl is logged
// as added, then as it runs and finishes on the simulated node, and
// kcr_pods on /metrics follows its phase; a delete is logged and its
// series goes away.
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/e2e/manager_fixture.h"

namespace kcr::e2e {
namespace {

using apiserver::WaitFor;
using ::testing::HasSubstr;

class PodsE2eTest : public ManagerFixture {};

TEST_F(PodsE2eTest, LogsAndCountsAPodThroughItsLife) {
  ASSERT_NO_FATAL_FAILURE(StartServerWithCrds("pods"));
  ManagerProcess* mgr = StartManager({"--controllers=pods"});
  ASSERT_TRUE(mgr->started());
  const std::string metrics = mgr->MetricsUrl();
  ASSERT_FALSE(metrics.empty()) << mgr->Out() << mgr->Log();
  ASSERT_TRUE(WaitFor([&] {
    return mgr->CountLogLines("controller=pods started") == 1;
  })) << mgr->Log();

  Kubectl({"run", "web", "--image=nginx", "--restart=Never"});
  EXPECT_TRUE(WaitFor([&] {
    return mgr->CountLogLines("pod added namespace=default name=web") == 1;
  })) << mgr->Log();
  EXPECT_TRUE(WaitFor([&] {
    return mgr->CountLogLines("phase=Pending->Running") == 1;
  })) << mgr->Log();
  EXPECT_TRUE(WaitFor([&] {
    return absl::StrContains(
        ManagerProcess::HttpGet(metrics, "/metrics"),
        "kcr_pods{namespace=\"default\",phase=\"Running\"} 1");
  })) << ManagerProcess::HttpGet(metrics, "/metrics");

  Kubectl({"delete", "pod", "web", "--wait=true"});
  EXPECT_TRUE(WaitFor([&] {
    return mgr->CountLogLines("pod deleted namespace=default name=web") == 1;
  })) << mgr->Log();
  EXPECT_TRUE(WaitFor([&] {
    return !absl::StrContains(ManagerProcess::HttpGet(metrics, "/metrics"),
                              "kcr_pods{namespace=\"default\"");
  })) << ManagerProcess::HttpGet(metrics, "/metrics");
  EXPECT_THAT(ManagerProcess::HttpGet(mgr->HealthUrl(), "/readyz"),
              HasSubstr("ok"));
}

}  // namespace
}  // namespace kcr::e2e
