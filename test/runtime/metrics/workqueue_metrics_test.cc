#include "runtime/metrics/workqueue_metrics.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "runtime/workqueue/delaying_queue.h"
#include "test/fakes/fake_clock.h"

namespace kcr::metrics {
namespace {

using ::testing::HasSubstr;

TEST(PrometheusWorkqueueMetricsTest,
     ExportsClientGoNamesWithTheQueueNameLabel) {
  prometheus::Registry registry;
  PrometheusWorkqueueMetrics provider(registry);
  testing::FakeClock clock;
  {
    workqueue::QueueOptions options;
    options.name = "pods";
    options.metrics_provider = &provider;
    options.clock = &clock;
    workqueue::DelayingQueue<std::string> queue(options);
    queue.Add("a");
    queue.Add("b");
    queue.AddAfter("c", absl::Seconds(1));
    clock.Advance(absl::Milliseconds(20));
    ASSERT_EQ(*queue.Get(), "a");
    queue.Done("a");
    // Workers' observations reach the instruments in batches; Len (or the
    // queue's 500 ms tick) hands them over.
    ASSERT_EQ(queue.Len(), 1u);

    const std::string text =
        prometheus::TextSerializer().Serialize(registry.Collect());
    EXPECT_THAT(text, HasSubstr("workqueue_adds_total{name=\"pods\"} 2"));
    EXPECT_THAT(text, HasSubstr("workqueue_depth{name=\"pods\"} 1"));
    EXPECT_THAT(text, HasSubstr("workqueue_retries_total{name=\"pods\"} 1"));
    EXPECT_THAT(
        text,
        HasSubstr("workqueue_queue_duration_seconds_count{name=\"pods\"} 1"));
    EXPECT_THAT(text, HasSubstr("workqueue_queue_duration_seconds_bucket{name="
                                "\"pods\",le=\"0.1\"} 1"));
    EXPECT_THAT(
        text,
        HasSubstr("workqueue_work_duration_seconds_count{name=\"pods\"} 1"));
    EXPECT_THAT(text,
                HasSubstr("workqueue_unfinished_work_seconds{name=\"pods\"}"));
    EXPECT_THAT(
        text,
        HasSubstr(
            "workqueue_longest_running_processor_seconds{name=\"pods\"}"));
  }
}

// A batch lands in the buckets that one Observe per value would fill:
// values on a bound (which belong to its bucket, `le`), between bounds,
// below the first and above the last.
TEST(PrometheusWorkqueueMetricsTest, ObserveBatchBucketsAsObserveDoes) {
  prometheus::Registry registry;
  PrometheusWorkqueueMetrics provider(registry);
  auto one_by_one = provider.NewLatencyMetric("one");
  auto batched = provider.NewLatencyMetric("batch");
  std::vector<double> values = {0,   1e-9, 1e-8, 1.5e-8, 1e-7, 3e-6, 1e-3,
                                0.5, 1,    9.99, 10,     11,   1e6};
  for (double v : values) one_by_one->Observe(v);
  batched->ObserveBatch(values);

  const std::vector<prometheus::MetricFamily> families = registry.Collect();
  std::vector<std::vector<uint64_t>> counts;
  for (const auto& family : families) {
    if (family.name != "workqueue_queue_duration_seconds") continue;
    ASSERT_EQ(family.metric.size(), 2u);
    for (const auto& metric : family.metric) {
      EXPECT_EQ(metric.histogram.sample_count, values.size());
      std::vector<uint64_t> cumulative;
      for (const auto& bucket : metric.histogram.bucket) {
        cumulative.push_back(bucket.cumulative_count);
      }
      counts.push_back(cumulative);
    }
  }
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0], counts[1]);
  // le="1e-08" holds 0, 1e-9 and 1e-8 (on the bound).
  EXPECT_EQ(counts[0][0], 3u);
}

}  // namespace
}  // namespace kcr::metrics
