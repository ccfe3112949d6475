#include "runtime/metrics/sharding_metrics.h"

#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace kcr::metrics {
namespace {

class Gauge final : public sharding::GaugeMetric {
 public:
  explicit Gauge(prometheus::Gauge& gauge) : gauge_(gauge) {}
  void Set(double value) override { gauge_.Set(value); }

 private:
  prometheus::Gauge& gauge_;
};

class Counter final : public sharding::CounterMetric {
 public:
  explicit Counter(prometheus::Counter& counter) : counter_(counter) {}
  void Inc() override { counter_.Increment(); }

 private:
  prometheus::Counter& counter_;
};

class Histogram final : public sharding::HistogramMetric {
 public:
  explicit Histogram(prometheus::Histogram& histogram)
      : histogram_(histogram) {}
  void Observe(double value) override { histogram_.Observe(value); }

 private:
  prometheus::Histogram& histogram_;
};

prometheus::Labels Labels(std::string_view controller) {
  return {{"controller", std::string(controller)}};
}

// A released shard is taken within a round or two (seconds); an expired
// one after the lease duration (15 s by default) and more.
prometheus::Histogram::BucketBoundaries HandoverBuckets() {
  return {0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 20, 30, 60, 120};
}

}  // namespace

struct PrometheusShardingMetrics::Families {
  explicit Families(prometheus::Registry& r)
      : held(prometheus::BuildGauge()
                 .Name("kcr_shards_held")
                 .Help("Virtual shards of the controller this replica holds.")
                 .Register(r)),
        acquisitions(prometheus::BuildCounter()
                         .Name("kcr_shard_acquisitions_total")
                         .Help("Shard Leases this replica acquired.")
                         .Register(r)),
        releases(prometheus::BuildCounter()
                     .Name("kcr_shard_releases_total")
                     .Help("Shards this replica gave up, by reason: "
                           "rebalance, lost (not renewed in time, or taken), "
                           "stop.")
                     .Register(r)),
        handover(prometheus::BuildHistogram()
                     .Name("kcr_shard_handover_seconds")
                     .Help("Seconds from the previous holder's last write "
                           "of a shard's Lease (its release, or its last "
                           "renewal when the Lease expired) to this "
                           "replica's acquisition, as the Lease's renewTime "
                           "and this replica's clock tell.")
                     .Register(r)) {}

  prometheus::Family<prometheus::Gauge>& held;
  prometheus::Family<prometheus::Counter>& acquisitions;
  prometheus::Family<prometheus::Counter>& releases;
  prometheus::Family<prometheus::Histogram>& handover;
};

PrometheusShardingMetrics::PrometheusShardingMetrics(
    prometheus::Registry& registry)
    : families_(std::make_unique<Families>(registry)) {}

PrometheusShardingMetrics::~PrometheusShardingMetrics() = default;

std::unique_ptr<sharding::GaugeMetric>
PrometheusShardingMetrics::NewShardsHeldMetric(std::string_view controller) {
  return std::make_unique<Gauge>(families_->held.Add(Labels(controller)));
}

std::unique_ptr<sharding::CounterMetric>
PrometheusShardingMetrics::NewAcquisitionsMetric(std::string_view controller) {
  return std::make_unique<Counter>(
      families_->acquisitions.Add(Labels(controller)));
}

std::unique_ptr<sharding::CounterMetric>
PrometheusShardingMetrics::NewReleasesMetric(std::string_view controller,
                                             std::string_view reason) {
  return std::make_unique<Counter>(
      families_->releases.Add({{"controller", std::string(controller)},
                               {"reason", std::string(reason)}}));
}

std::unique_ptr<sharding::HistogramMetric>
PrometheusShardingMetrics::NewHandoverMetric(std::string_view controller) {
  return std::make_unique<Histogram>(
      families_->handover.Add(Labels(controller), HandoverBuckets()));
}

}  // namespace kcr::metrics
