#include "runtime/metrics/workqueue_metrics.h"

#include <string>
#include <utility>
#include <vector>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace kcr::metrics {
namespace {

prometheus::Histogram::BucketBoundaries ClientGoBuckets() {
  // ExponentialBuckets(10e-9, 10, 10).
  prometheus::Histogram::BucketBoundaries buckets;
  double bound = 10e-9;
  for (int i = 0; i < 10; ++i) {
    buckets.push_back(bound);
    bound *= 10;
  }
  return buckets;
}

prometheus::Labels NameLabel(std::string_view name) {
  return {{"name", std::string(name)}};
}

class Gauge final : public workqueue::GaugeMetric,
                    public workqueue::SettableGaugeMetric {
 public:
  explicit Gauge(prometheus::Gauge& gauge) : gauge_(gauge) {}
  void Inc() override { gauge_.Increment(); }
  void IncBy(size_t n) override { gauge_.Increment(static_cast<double>(n)); }
  void Dec() override { gauge_.Decrement(); }
  void DecBy(size_t n) override { gauge_.Decrement(static_cast<double>(n)); }
  void Set(double value) override { gauge_.Set(value); }

 private:
  prometheus::Gauge& gauge_;
};

class Counter final : public workqueue::CounterMetric {
 public:
  explicit Counter(prometheus::Counter& counter) : counter_(counter) {}
  void Inc() override { counter_.Increment(); }
  void IncBy(size_t n) override { counter_.Increment(static_cast<double>(n)); }

 private:
  prometheus::Counter& counter_;
};

class Histogram final : public workqueue::HistogramMetric {
 public:
  Histogram(prometheus::Histogram& histogram,
            prometheus::Histogram::BucketBoundaries bounds)
      : histogram_(histogram), bounds_(std::move(bounds)) {}
  void Observe(double value) override { histogram_.Observe(value); }

  // Sorts the values into buckets here, as Observe would (the first bound
  // not below the value; past the last, +Inf), and takes the histogram's
  // lock once for the batch.
  void ObserveBatch(absl::Span<const double> values) override {
    // Reused: a queue hands over a batch every 128 observations.
    thread_local std::vector<double> increments;
    increments.assign(bounds_.size() + 1, 0.0);
    double sum = 0;
    const double* const bounds = bounds_.data();
    const size_t n = bounds_.size();
    for (double v : values) {
      // The number of bounds below the value, which for sorted bounds is
      // where lower_bound lands; counted without branches, since the
      // values of a batch fall into buckets in no predictable order.
      size_t bucket = 0;
      for (size_t i = 0; i < n; ++i) bucket += bounds[i] < v ? 1 : 0;
      increments[bucket] += 1;
      sum += v;
    }
    histogram_.ObserveMultiple(increments, sum);
  }

 private:
  prometheus::Histogram& histogram_;
  const prometheus::Histogram::BucketBoundaries bounds_;
};

}  // namespace

struct PrometheusWorkqueueMetrics::Families {
  explicit Families(prometheus::Registry& r)
      : depth(prometheus::BuildGauge()
                  .Name("workqueue_depth")
                  .Help("Current depth of workqueue")
                  .Register(r)),
        adds(prometheus::BuildCounter()
                 .Name("workqueue_adds_total")
                 .Help("Total number of adds handled by workqueue")
                 .Register(r)),
        latency(prometheus::BuildHistogram()
                    .Name("workqueue_queue_duration_seconds")
                    .Help("How long in seconds an item stays in workqueue "
                          "before being requested.")
                    .Register(r)),
        work_duration(prometheus::BuildHistogram()
                          .Name("workqueue_work_duration_seconds")
                          .Help("How long in seconds processing an item from "
                                "workqueue takes.")
                          .Register(r)),
        unfinished(prometheus::BuildGauge()
                       .Name("workqueue_unfinished_work_seconds")
                       .Help("How many seconds of work has done that is in "
                             "progress and hasn't been observed by "
                             "work_duration.")
                       .Register(r)),
        longest(prometheus::BuildGauge()
                    .Name("workqueue_longest_running_processor_seconds")
                    .Help("How many seconds has the longest running processor "
                          "for workqueue been running.")
                    .Register(r)),
        retries(prometheus::BuildCounter()
                    .Name("workqueue_retries_total")
                    .Help("Total number of retries handled by workqueue")
                    .Register(r)) {}

  prometheus::Family<prometheus::Gauge>& depth;
  prometheus::Family<prometheus::Counter>& adds;
  prometheus::Family<prometheus::Histogram>& latency;
  prometheus::Family<prometheus::Histogram>& work_duration;
  prometheus::Family<prometheus::Gauge>& unfinished;
  prometheus::Family<prometheus::Gauge>& longest;
  prometheus::Family<prometheus::Counter>& retries;
};

PrometheusWorkqueueMetrics::PrometheusWorkqueueMetrics(
    prometheus::Registry& registry)
    : families_(std::make_unique<Families>(registry)) {}

PrometheusWorkqueueMetrics::~PrometheusWorkqueueMetrics() = default;

std::unique_ptr<workqueue::GaugeMetric>
PrometheusWorkqueueMetrics::NewDepthMetric(std::string_view name) {
  return std::make_unique<Gauge>(families_->depth.Add(NameLabel(name)));
}

std::unique_ptr<workqueue::CounterMetric>
PrometheusWorkqueueMetrics::NewAddsMetric(std::string_view name) {
  return std::make_unique<Counter>(families_->adds.Add(NameLabel(name)));
}

std::unique_ptr<workqueue::HistogramMetric>
PrometheusWorkqueueMetrics::NewLatencyMetric(std::string_view name) {
  return std::make_unique<Histogram>(
      families_->latency.Add(NameLabel(name), ClientGoBuckets()),
      ClientGoBuckets());
}

std::unique_ptr<workqueue::HistogramMetric>
PrometheusWorkqueueMetrics::NewWorkDurationMetric(std::string_view name) {
  return std::make_unique<Histogram>(
      families_->work_duration.Add(NameLabel(name), ClientGoBuckets()),
      ClientGoBuckets());
}

std::unique_ptr<workqueue::SettableGaugeMetric>
PrometheusWorkqueueMetrics::NewUnfinishedWorkSecondsMetric(
    std::string_view name) {
  return std::make_unique<Gauge>(families_->unfinished.Add(NameLabel(name)));
}

std::unique_ptr<workqueue::SettableGaugeMetric>
PrometheusWorkqueueMetrics::NewLongestRunningProcessorSecondsMetric(
    std::string_view name) {
  return std::make_unique<Gauge>(families_->longest.Add(NameLabel(name)));
}

std::unique_ptr<workqueue::CounterMetric>
PrometheusWorkqueueMetrics::NewRetriesMetric(std::string_view name) {
  return std::make_unique<Counter>(families_->retries.Add(NameLabel(name)));
}

}  // namespace kcr::metrics
