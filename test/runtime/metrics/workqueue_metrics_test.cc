#include "runtime/metrics/workqueue_metrics.h"

#include <string>

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

}  // namespace
}  // namespace kcr::metrics
