// PrometheusShardingMetrics: shard ownership's MetricsProvider
// (runtime/sharding/metrics.h) on a prometheus-cpp registry:
//
//   kcr_shards_held{controller}                   gauge
//   kcr_shard_acquisitions_total{controller}      counter
//   kcr_shard_releases_total{controller,reason}   counter (rebalance, lost,
//                                                 stop)
//   kcr_shard_handover_seconds{controller}        histogram: from the
//       previous holder's last write of the Lease (its release, or its
//       last renewal when the Lease expired) to this replica's acquisition
#ifndef KCR_RUNTIME_METRICS_SHARDING_METRICS_H_
#define KCR_RUNTIME_METRICS_SHARDING_METRICS_H_

#include <memory>
#include <string_view>

#include "runtime/sharding/metrics.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace kcr::metrics {

// Thread-safe. Registers its families in `registry` on construction; the
// registry must outlive the provider and every coordinator using it.
class PrometheusShardingMetrics final : public sharding::MetricsProvider {
 public:
  explicit PrometheusShardingMetrics(prometheus::Registry& registry);
  ~PrometheusShardingMetrics() override;

  std::unique_ptr<sharding::GaugeMetric> NewShardsHeldMetric(
      std::string_view controller) override;
  std::unique_ptr<sharding::CounterMetric> NewAcquisitionsMetric(
      std::string_view controller) override;
  std::unique_ptr<sharding::CounterMetric> NewReleasesMetric(
      std::string_view controller, std::string_view reason) override;
  std::unique_ptr<sharding::HistogramMetric> NewHandoverMetric(
      std::string_view controller) override;

 private:
  struct Families;
  std::unique_ptr<Families> families_;
};

}  // namespace kcr::metrics

#endif  // KCR_RUNTIME_METRICS_SHARDING_METRICS_H_
