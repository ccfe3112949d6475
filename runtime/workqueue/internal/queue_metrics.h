// Bookkeeping behind a queue's metrics, as client-go's defaultQueueMetrics:
// the processing-start time of each item, kept in an array indexed by the
// queue's slot number (stable from Add to Done), so that no Get or Done
// hashes anything for its metrics. (The first-add time lives in the queue's
// own entry.)
#ifndef KCR_RUNTIME_WORKQUEUE_INTERNAL_QUEUE_METRICS_H_
#define KCR_RUNTIME_WORKQUEUE_INTERNAL_QUEUE_METRICS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "runtime/base/clock.h"
#include "runtime/workqueue/metrics.h"

namespace kcr::workqueue::internal {

// Not thread-safe, but for the Observe* calls: the owning queue serialises
// every other call.
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

  // `n` Adds that count (client-go's metrics.add, for n items at once).
  // Their first-add times are kept by the queue, in its entries.
  void Add(size_t n) {
    adds_->IncBy(n);
    depth_->IncBy(n);
  }

  // The Get of the item in `slot` at `now`: it is being processed from now.
  void Get(uint32_t slot, absl::Time now) {
    Times& t = At(slot);
    if (!t.processing) {
      t.processing = true;
      t.prev = kNone;
      t.next = processing_head_;
      if (processing_head_ != kNone) times_[processing_head_].prev = slot;
      processing_head_ = slot;
    }
    t.started = now;
  }

  // The Done of the item in `slot` at `now`. Returns its work duration in
  // seconds, or -1 if it was not being processed, for ObserveDone.
  double Done(uint32_t slot, absl::Time now) {
    Times& t = At(slot);
    if (!t.processing) return -1;
    t.processing = false;
    if (t.prev != kNone) {
      times_[t.prev].next = t.next;
    } else {
      processing_head_ = t.next;
    }
    if (t.next != kNone) times_[t.next].prev = t.prev;
    return absl::ToDoubleSeconds(now - t.started);
  }

  // The instruments' side of Get and Done. Thread-safe: the queue calls
  // them after releasing its lock.
  void ObserveGet(double latency) const {
    depth_->Dec();
    if (latency >= 0) latency_->Observe(latency);
  }
  void ObserveDone(double duration) const {
    if (duration >= 0) work_duration_->Observe(duration);
  }

  // Sets the two unfinished-work gauges from the items being processed.
  void UpdateUnfinishedWork() {
    const absl::Time now = clock_->Now();
    double total = 0;
    double oldest = 0;
    for (uint32_t s = processing_head_; s != kNone; s = times_[s].next) {
      const double age = absl::ToDoubleSeconds(now - times_[s].started);
      total += age;
      oldest = std::max(oldest, age);
    }
    unfinished_work_->Set(total);
    longest_running_->Set(oldest);
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;

  // One slot's times. Items being processed are linked in a list, so the
  // unfinished-work update visits only them.
  struct Times {
    absl::Time started;
    uint32_t prev = kNone;
    uint32_t next = kNone;
    bool processing = false;
  };

  Times& At(uint32_t slot) {
    if (slot >= times_.size()) {
      times_.resize(std::max<size_t>(size_t{slot} + 1, times_.size() * 2));
    }
    return times_[slot];
  }

  const Clock* const clock_;
  std::unique_ptr<GaugeMetric> depth_;
  std::unique_ptr<CounterMetric> adds_;
  std::unique_ptr<HistogramMetric> latency_;
  std::unique_ptr<HistogramMetric> work_duration_;
  std::unique_ptr<SettableGaugeMetric> unfinished_work_;
  std::unique_ptr<SettableGaugeMetric> longest_running_;
  std::vector<Times> times_;
  uint32_t processing_head_ = kNone;
};

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_INTERNAL_QUEUE_METRICS_H_
