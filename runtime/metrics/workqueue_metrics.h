// PrometheusWorkqueueMetrics: the work-queue MetricsProvider on a
// prometheus-cpp registry, under client-go's metric names
// (k8s.io/component-base/metrics/prometheus/workqueue), each labelled with
// the queue's `name`:
//
//   workqueue_depth                               gauge
//   workqueue_adds_total                          counter
//   workqueue_queue_duration_seconds              histogram
//   workqueue_work_duration_seconds               histogram
//   workqueue_unfinished_work_seconds             gauge
//   workqueue_longest_running_processor_seconds   gauge
//   workqueue_retries_total                       counter
//
// Histograms use client-go's buckets: 1e-8 s to 10 s, ten powers of ten.
#ifndef KCR_RUNTIME_METRICS_WORKQUEUE_METRICS_H_
#define KCR_RUNTIME_METRICS_WORKQUEUE_METRICS_H_

#include <memory>
#include <string_view>

#include "runtime/workqueue/metrics.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace kcr::metrics {

// Thread-safe. Registers its seven families in `registry` on construction;
// the registry must outlive the provider and every queue using it.
class PrometheusWorkqueueMetrics final : public workqueue::MetricsProvider {
 public:
  explicit PrometheusWorkqueueMetrics(prometheus::Registry& registry);
  ~PrometheusWorkqueueMetrics() override;

  std::unique_ptr<workqueue::GaugeMetric> NewDepthMetric(
      std::string_view name) override;
  std::unique_ptr<workqueue::CounterMetric> NewAddsMetric(
      std::string_view name) override;
  std::unique_ptr<workqueue::HistogramMetric> NewLatencyMetric(
      std::string_view name) override;
  std::unique_ptr<workqueue::HistogramMetric> NewWorkDurationMetric(
      std::string_view name) override;
  std::unique_ptr<workqueue::SettableGaugeMetric>
  NewUnfinishedWorkSecondsMetric(std::string_view name) override;
  std::unique_ptr<workqueue::SettableGaugeMetric>
  NewLongestRunningProcessorSecondsMetric(std::string_view name) override;
  std::unique_ptr<workqueue::CounterMetric> NewRetriesMetric(
      std::string_view name) override;

 private:
  struct Families;
  std::unique_ptr<Families> families_;
};

}  // namespace kcr::metrics

#endif  // KCR_RUNTIME_METRICS_WORKQUEUE_METRICS_H_
