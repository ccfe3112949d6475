// Work-queue metrics: the seven instruments client-go's util/workqueue
// exports, created through a MetricsProvider.
//
// A queue records metrics only when it has a non-empty name AND a provider
// (its own, from Options, or the process-wide one set by
// SetGlobalMetricsProvider). Otherwise it holds no metrics object at all and
// pays one predictable branch per operation.
//
// runtime/metrics/workqueue_metrics.h implements the provider with
// Prometheus under client-go's names (workqueue_depth, workqueue_adds_total,
// workqueue_queue_duration_seconds, workqueue_work_duration_seconds,
// workqueue_unfinished_work_seconds,
// workqueue_longest_running_processor_seconds, workqueue_retries_total),
// each with the label `name`.
#ifndef KCR_RUNTIME_WORKQUEUE_METRICS_H_
#define KCR_RUNTIME_WORKQUEUE_METRICS_H_

#include <cstddef>
#include <memory>
#include <string_view>

#include "absl/types/span.h"

namespace kcr::workqueue {

// All instruments must be safe to call from any thread.
class GaugeMetric {
 public:
  virtual ~GaugeMetric() = default;
  virtual void Inc() = 0;
  virtual void Dec() = 0;
  // As `n` Inc calls; implementations override it to add at once.
  virtual void IncBy(size_t n) {
    for (size_t i = 0; i < n; ++i) Inc();
  }
  // As `n` Dec calls; implementations override it to subtract at once.
  virtual void DecBy(size_t n) {
    for (size_t i = 0; i < n; ++i) Dec();
  }
};

class SettableGaugeMetric {
 public:
  virtual ~SettableGaugeMetric() = default;
  virtual void Set(double value) = 0;
};

class CounterMetric {
 public:
  virtual ~CounterMetric() = default;
  virtual void Inc() = 0;
  // As `n` Inc calls; implementations override it to add at once.
  virtual void IncBy(size_t n) {
    for (size_t i = 0; i < n; ++i) Inc();
  }
};

class HistogramMetric {
 public:
  virtual ~HistogramMetric() = default;
  virtual void Observe(double value) = 0;
  // As one Observe call per value; implementations override it to record
  // the batch at once (one lock instead of `values.size()`).
  virtual void ObserveBatch(absl::Span<const double> values) {
    for (double v : values) Observe(v);
  }
};

// Creates the instruments of one queue. `name` is the queue's name, the
// value of the `name` label. Implementations must be thread-safe.
class MetricsProvider {
 public:
  virtual ~MetricsProvider() = default;
  // Items waiting in the queue.
  virtual std::unique_ptr<GaugeMetric> NewDepthMetric(
      std::string_view name) = 0;
  // Adds that were not collapsed into an already waiting item.
  virtual std::unique_ptr<CounterMetric> NewAddsMetric(
      std::string_view name) = 0;
  // Seconds an item waited between its first Add and Get.
  virtual std::unique_ptr<HistogramMetric> NewLatencyMetric(
      std::string_view name) = 0;
  // Seconds between Get and Done.
  virtual std::unique_ptr<HistogramMetric> NewWorkDurationMetric(
      std::string_view name) = 0;
  // Sum of the ages of all items being processed, updated every 500 ms.
  virtual std::unique_ptr<SettableGaugeMetric> NewUnfinishedWorkSecondsMetric(
      std::string_view name) = 0;
  // Age of the oldest item being processed, updated every 500 ms.
  virtual std::unique_ptr<SettableGaugeMetric>
  NewLongestRunningProcessorSecondsMetric(std::string_view name) = 0;
  // AddAfter / AddRateLimited calls.
  virtual std::unique_ptr<CounterMetric> NewRetriesMetric(
      std::string_view name) = 0;
};

// Sets the provider used by queues whose Options name no provider. Not
// owned; must outlive every queue created afterwards. Like client-go's
// SetProvider only the first call takes effect; returns whether it did.
bool SetGlobalMetricsProvider(MetricsProvider* provider);
// The provider set above, or null.
MetricsProvider* GlobalMetricsProvider();

}  // namespace kcr::workqueue

#endif  // KCR_RUNTIME_WORKQUEUE_METRICS_H_
