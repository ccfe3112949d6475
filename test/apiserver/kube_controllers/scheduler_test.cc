#include "apiserver/kube_controllers/scheduler.h"

#include <optional>

#include "gtest/gtest.h"

namespace kcr::apiserver {
namespace {

TEST(QuantityTest, ParsesKubesForms) {
  EXPECT_EQ(ParseQuantity("100m", true), 100);
  EXPECT_EQ(ParseQuantity("1.5", true), 1500);
  EXPECT_EQ(ParseQuantity("2", true), 2000);
  EXPECT_EQ(ParseQuantity("128Mi", false), 134217728);
  EXPECT_EQ(ParseQuantity("1G", false), 1000000000);
  EXPECT_EQ(ParseQuantity("1e3", false), 1000);
  EXPECT_EQ(ParseQuantity("1.5Gi", false), 1610612736);
  // A fraction of a unit rounds up, as kube's Value() does.
  EXPECT_EQ(ParseQuantity("100m", false), 1);
  EXPECT_EQ(ParseQuantity("", true), std::nullopt);
  EXPECT_EQ(ParseQuantity("12 cores", true), std::nullopt);
  EXPECT_EQ(ParseQuantity("1Qi", false), std::nullopt);
  EXPECT_EQ(ParseQuantity("-1", true), std::nullopt);
}

TEST(PodRequestsTest, SumsContainersAndTakesTheLargestInitContainer) {
  auto pod = api::Object::Parse(R"({"metadata":{"name":"p"},"spec":{
      "initContainers":[{"name":"i","resources":{"requests":{"cpu":"3"}}}],
      "containers":[
        {"name":"a","resources":{"requests":{"cpu":"500m","memory":"1Gi"}}},
        {"name":"b","resources":{"limits":{"cpu":"1","memory":"512Mi"}}}]}})");
  ASSERT_TRUE(pod.ok());
  const Resources r = PodRequests(**pod);
  EXPECT_EQ(r.cpu_milli, 3000);
  EXPECT_EQ(r.memory, 1610612736);
  EXPECT_EQ(r.pods, 1);
}

TEST(ScheduleTest, NoNodesIsKubesMessage) {
  auto pod = api::Object::Parse(R"({"metadata":{"name":"p"},"spec":{}})");
  ASSERT_TRUE(pod.ok());
  Placement p =
      Schedule(**pod, {}, [](std::string_view) { return Resources{}; });
  EXPECT_EQ(p.node, "");
  EXPECT_EQ(p.message, "no nodes available to schedule pods");
}

}  // namespace
}  // namespace kcr::apiserver
