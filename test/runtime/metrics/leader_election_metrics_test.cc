#include "runtime/metrics/leader_election_metrics.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace kcr::metrics {
namespace {

using ::testing::HasSubstr;

std::string Text(prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

TEST(PrometheusLeaderElectionMetricsTest, MasterStatusFollowsTheSwitch) {
  prometheus::Registry registry;
  PrometheusLeaderElectionMetrics provider(registry);
  auto leader = provider.NewLeaderMetric("manager");
  auto other = provider.NewLeaderMetric("other");
  leader->On();
  other->Off();
  EXPECT_THAT(Text(registry),
              HasSubstr("leader_election_master_status{name=\"manager\"} 1"));
  EXPECT_THAT(Text(registry),
              HasSubstr("leader_election_master_status{name=\"other\"} 0"));
  leader->Off();
  EXPECT_THAT(Text(registry),
              HasSubstr("leader_election_master_status{name=\"manager\"} 0"));
}

TEST(PrometheusLeaderElectionMetricsTest, SlowpathCounts) {
  prometheus::Registry registry;
  PrometheusLeaderElectionMetrics provider(registry);
  auto a = provider.NewSlowpathMetric("manager");
  auto b = provider.NewSlowpathMetric("manager");
  a->Inc();
  b->Inc();
  a->Inc();
  EXPECT_THAT(Text(registry),
              HasSubstr("leader_election_slowpath_total{name=\"manager\"} 3"));
}

}  // namespace
}  // namespace kcr::metrics
