#include "runtime/metrics/controller_metrics.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "prometheus/registry.h"

namespace kcr::metrics {
namespace {

using controller::ReconcileOutcome;

// The metric of family `name` labelled controller="c" (and `result`, when
// given), or null.
const prometheus::ClientMetric* Find(
    const std::vector<prometheus::MetricFamily>& families,
    const std::string& name, const std::string& result = "") {
  for (const auto& f : families) {
    if (f.name != name) continue;
    for (const auto& m : f.metric) {
      std::map<std::string, std::string> labels;
      for (const auto& l : m.label) labels[l.name] = l.value;
      if (labels["controller"] != "c") continue;
      if (!result.empty() && labels["result"] != result) continue;
      return &m;
    }
  }
  return nullptr;
}

TEST(PrometheusControllerMetricsTest, RecordsUnderControllerRuntimeNames) {
  prometheus::Registry registry;
  PrometheusControllerMetrics provider(registry);
  auto m = provider.NewControllerMetrics("c");

  // Every result series exists at 0 before any reconcile.
  auto families = registry.Collect();
  for (const char* result : {"success", "error", "requeue", "requeue_after"}) {
    const auto* total =
        Find(families, "controller_runtime_reconcile_total", result);
    ASSERT_NE(total, nullptr) << result;
    EXPECT_EQ(total->counter.value, 0);
  }

  m->CountReconcile(ReconcileOutcome::kSuccess);
  m->CountReconcile(ReconcileOutcome::kSuccess);
  m->CountReconcile(ReconcileOutcome::kRequeueAfter);
  m->CountError();
  m->CountPanic();
  m->ObserveReconcileTime(0.003);
  m->ObserveReconcileTime(75);
  m->SetMaxConcurrentReconciles(4);
  m->AddActiveWorkers(2);
  m->AddActiveWorkers(-1);

  families = registry.Collect();
  EXPECT_EQ(Find(families, "controller_runtime_reconcile_total", "success")
                ->counter.value,
            2);
  EXPECT_EQ(
      Find(families, "controller_runtime_reconcile_total", "requeue_after")
          ->counter.value,
      1);
  EXPECT_EQ(Find(families, "controller_runtime_reconcile_errors_total")
                ->counter.value,
            1);
  EXPECT_EQ(Find(families, "controller_runtime_reconcile_panics_total")
                ->counter.value,
            1);
  EXPECT_EQ(Find(families, "controller_runtime_max_concurrent_reconciles")
                ->gauge.value,
            4);
  EXPECT_EQ(Find(families, "controller_runtime_active_workers")->gauge.value,
            1);
  const auto* time =
      Find(families, "controller_runtime_reconcile_time_seconds");
  ASSERT_NE(time, nullptr);
  EXPECT_EQ(time->histogram.sample_count, 2u);
  // controller-runtime's 40 bounds, 5 ms to 60 s, and +Inf.
  ASSERT_EQ(time->histogram.bucket.size(), 41u);
  EXPECT_EQ(time->histogram.bucket.front().upper_bound, 0.005);
  EXPECT_EQ(time->histogram.bucket.front().cumulative_count, 1u);
  EXPECT_EQ(time->histogram.bucket[39].upper_bound, 60);
  EXPECT_EQ(time->histogram.bucket[39].cumulative_count, 1u);
  EXPECT_EQ(time->histogram.bucket.back().cumulative_count, 2u);
}

}  // namespace
}  // namespace kcr::metrics
