#include "runtime/metrics/sharding_metrics.h"

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

TEST(PrometheusShardingMetricsTest, RecordsHeldAcquisitionsReleasesHandovers) {
  prometheus::Registry registry;
  PrometheusShardingMetrics provider(registry);
  auto held = provider.NewShardsHeldMetric("nginx");
  auto acquired = provider.NewAcquisitionsMetric("nginx");
  auto lost = provider.NewReleasesMetric("nginx", "lost");
  auto rebalance = provider.NewReleasesMetric("nginx", "rebalance");
  auto handover = provider.NewHandoverMetric("nginx");
  held->Set(7);
  acquired->Inc();
  acquired->Inc();
  lost->Inc();
  handover->Observe(0.3);
  handover->Observe(16);
  const std::string text = Text(registry);
  EXPECT_THAT(text, HasSubstr("kcr_shards_held{controller=\"nginx\"} 7"));
  EXPECT_THAT(
      text, HasSubstr("kcr_shard_acquisitions_total{controller=\"nginx\"} 2"));
  EXPECT_THAT(text, HasSubstr("kcr_shard_releases_total{controller=\"nginx\","
                              "reason=\"lost\"} 1"));
  EXPECT_THAT(text, HasSubstr("kcr_shard_releases_total{controller=\"nginx\","
                              "reason=\"rebalance\"} 0"));
  EXPECT_THAT(text, HasSubstr("kcr_shard_handover_seconds_count{controller="
                              "\"nginx\"} 2"));
  EXPECT_THAT(text, HasSubstr("kcr_shard_handover_seconds_bucket{controller="
                              "\"nginx\",le=\"0.5\"} 1"));
}

}  // namespace
}  // namespace kcr::metrics
