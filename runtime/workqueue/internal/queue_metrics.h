// Bookkeeping behind a queue's metrics, as client-go's defaultQueueMetrics:
// first-add and processing-start times per item, keyed by the queue's slot
// number (stable from Add to Done), all under the owning queue's mutex.
#ifndef KCR_RUNTIME_WORKQUEUE_INTERNAL_QUEUE_METRICS_H_
#define KCR_RUNTIME_WORKQUEUE_INTERNAL_QUEUE_METRICS_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "runtime/base/clock.h"
#include "runtime/workqueue/metrics.h"

namespace kcr::workqueue::internal {

// Not thread-safe: the owning queue serialises every call.
class QueueMetrics {
 public:
  QueueMetrics(MetricsProvider* provider, std::string_view name,
               const Clock* clock)
      : clock_(clock),
        depth_(provider->NewDepthMetric(name)),
        adds_(provider->NewAddsMetric(name)),
        latency_(provider->NewLatencyMetric(name)),
        work_duration_(provider->NewWorkDurationMetric(name)),
        unfinished_work_(provider->NewUnfinishedWorkSecondsMetric(name)),
        longest_running_(
            provider->NewLongestRunningProcessorSecondsMetric(name)) {}

  void Add(uint32_t slot) {
    adds_->Inc();
    depth_->Inc();
    add_times_.try_emplace(slot, clock_->Now());
  }

  void Get(uint32_t slot) {
    depth_->Dec();
    const absl::Time now = clock_->Now();
    processing_start_[slot] = now;
    auto it = add_times_.find(slot);
    if (it != add_times_.end()) {
      latency_->Observe(absl::ToDoubleSeconds(now - it->second));
      add_times_.erase(it);
    }
  }

  void Done(uint32_t slot) {
    auto it = processing_start_.find(slot);
    if (it != processing_start_.end()) {
      work_duration_->Observe(absl::ToDoubleSeconds(clock_->Now() - it->second));
      processing_start_.erase(it);
    }
  }

  void UpdateUnfinishedWork() {
    const absl::Time now = clock_->Now();
    double total = 0;
    double oldest = 0;
    for (const auto& [slot, start] : processing_start_) {
      const double age = absl::ToDoubleSeconds(now - start);
      total += age;
      if (age > oldest) oldest = age;
    }
    unfinished_work_->Set(total);
    longest_running_->Set(oldest);
  }

 private:
  const Clock* const clock_;
  std::unique_ptr<GaugeMetric> depth_;
  std::unique_ptr<CounterMetric> adds_;
  std::unique_ptr<HistogramMetric> latency_;
  std::unique_ptr<HistogramMetric> work_duration_;
  std::unique_ptr<SettableGaugeMetric> unfinished_work_;
  std::unique_ptr<SettableGaugeMetric> longest_running_;
  absl::flat_hash_map<uint32_t, absl::Time> add_times_;
  absl::flat_hash_map<uint32_t, absl::Time> processing_start_;
};

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_INTERNAL_QUEUE_METRICS_H_
