// Bookkeeping behind a queue's metrics, as client-go's defaultQueueMetrics:
// the processing-start time of each item, kept in an array indexed by the
// queue's slot number (stable from Add to Done), so that no Get or Done
// hashes anything for its metrics. (The first-add time lives in the queue's
// own entry.)
//
// What Get and Done record for the instruments (the depth decrement, the
// latency and work-duration observations) is buffered under the queue's
// lock, which they hold anyway, and handed to the instruments in batches
// after it is released: a histogram takes a lock per observation, and with
// several workers that lock, not the queue, would set the pace. A batch
// reaches the instruments when it is full, when a worker finds no work, on
// Len, and on the updater's 500 ms tick, so the instruments are never more
// than one tick behind, and an idle queue's are exact.
//
// Not an API: an implementation detail of the public queue templates
// (queue.h, delaying_queue.h), which include it, and installed with them
// for that reason only.
#ifndef KCR_RUNTIME_WORKQUEUE_QUEUE_METRICS_H_
#define KCR_RUNTIME_WORKQUEUE_QUEUE_METRICS_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "base/clock.h"
#include "runtime/workqueue/metrics.h"

namespace kcr::workqueue::internal {

// Observations made under the queue's lock, waiting to reach the
// instruments.
struct Observations {
  static constexpr size_t kCapacity = 128;

  bool full() const {
    return latency_count == kCapacity || duration_count == kCapacity;
  }
  bool empty() const {
    return gets == 0 && latency_count == 0 && duration_count == 0;
  }

  size_t gets = 0;
  size_t latency_count = 0;
  size_t duration_count = 0;
  std::array<double, kCapacity> latencies;
  std::array<double, kCapacity> durations;
};

// Not thread-safe, but for Publish and the instruments it owns: the owning
// queue serialises every other call under its lock, and Takes the pending
// batch in the same critical section as the Get or Done that filled it.
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

  ~QueueMetrics() { Publish(pending_); }

  // `n` Adds that count (client-go's metrics.add, for n items at once).
  // Their first-add times are kept by the queue, in its entries.
  void Add(size_t n) {
    adds_->IncBy(n);
    depth_->IncBy(n);
  }

  // The Get at `now_ns` (Unix nanoseconds) of the item in `slot`, first
  // added at `added_ns` (0: unknown).
  void Get(uint32_t slot, int64_t now_ns, int64_t added_ns) {
    Times& t = At(slot);
    if (t.prev == kIdle) {
      t.prev = kNone;
      t.next = processing_head_;
      if (processing_head_ != kNone) times_[processing_head_].prev = slot;
      processing_head_ = slot;
    }
    t.started = now_ns;
    ++pending_.gets;
    if (added_ns != 0) {
      pending_.latencies[pending_.latency_count++] = Seconds(now_ns - added_ns);
    }
  }

  // The Done at `now_ns` of the item in `slot`.
  void Done(uint32_t slot, int64_t now_ns) {
    Times& t = At(slot);
    if (t.prev == kIdle) return;  // not being processed
    if (t.prev != kNone) {
      times_[t.prev].next = t.next;
    } else {
      processing_head_ = t.next;
    }
    if (t.next != kNone) times_[t.next].prev = t.prev;
    t.prev = kIdle;
    pending_.durations[pending_.duration_count++] = Seconds(now_ns - t.started);
  }

  // Whether the pending batch is full (the next Get or Done needs room):
  // the queue Takes it before releasing its lock.
  bool Full() const { return pending_.full(); }
  bool HasPending() const { return !pending_.empty(); }

  // Moves the pending observations to `*out`, to Publish once the queue's
  // lock is released.
  void Take(Observations* out) {
    out->gets = pending_.gets;
    out->latency_count = pending_.latency_count;
    out->duration_count = pending_.duration_count;
    std::copy_n(pending_.latencies.begin(), pending_.latency_count,
                out->latencies.begin());
    std::copy_n(pending_.durations.begin(), pending_.duration_count,
                out->durations.begin());
    pending_.gets = pending_.latency_count = pending_.duration_count = 0;
  }

  // Hands `batch` to the instruments. Thread-safe.
  void Publish(const Observations& batch) const {
    if (batch.gets != 0) depth_->DecBy(batch.gets);
    if (batch.latency_count != 0) {
      latency_->ObserveBatch(
          absl::MakeConstSpan(batch.latencies.data(), batch.latency_count));
    }
    if (batch.duration_count != 0) {
      work_duration_->ObserveBatch(
          absl::MakeConstSpan(batch.durations.data(), batch.duration_count));
    }
  }

  // Sets the two unfinished-work gauges from the items being processed.
  void UpdateUnfinishedWork() {
    const int64_t now_ns = absl::ToUnixNanos(clock_->Now());
    double total = 0;
    double oldest = 0;
    for (uint32_t s = processing_head_; s != kNone; s = times_[s].next) {
      const double age = Seconds(now_ns - times_[s].started);
      total += age;
      oldest = std::max(oldest, age);
    }
    unfinished_work_->Set(total);
    longest_running_->Set(oldest);
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  // In `prev`: the slot's item is not being processed.
  static constexpr uint32_t kIdle = UINT32_MAX - 1;

  static double Seconds(int64_t nanos) {
    return static_cast<double>(nanos) / 1e9;
  }

  // One slot's processing-start time. Items being processed are linked in
  // a list, so the unfinished-work update visits only them.
  struct Times {
    int64_t started = 0;
    uint32_t prev = kIdle;
    uint32_t next = kNone;
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
  Observations pending_;
};

}  // namespace kcr::workqueue::internal

#endif  // KCR_RUNTIME_WORKQUEUE_QUEUE_METRICS_H_
