// Shard ownership metrics: the instruments a LeaseShardCoordinator
// records, created through a MetricsProvider (as leader election's are).
//
// A coordinator records metrics only when it has a controller name AND a
// provider (its own, or the process-wide one set by
// SetGlobalMetricsProvider); otherwise it holds no instrument at all.
//
// runtime/metrics/sharding_metrics.h implements the provider with
// Prometheus:
//   kcr_shards_held{controller}                      gauge
//   kcr_shard_acquisitions_total{controller}         counter
//   kcr_shard_releases_total{controller,reason}      counter
//   kcr_shard_handover_seconds{controller}           histogram
#ifndef KCR_RUNTIME_SHARDING_METRICS_H_
#define KCR_RUNTIME_SHARDING_METRICS_H_

#include <memory>
#include <string_view>

namespace kcr::sharding {

// Why a shard was given up: "rebalance" (given back to another member),
// "lost" (not renewed within the renew deadline, or taken by another
// holder), "stop" (the coordinator stopped).
inline constexpr char kReleaseRebalance[] = "rebalance";
inline constexpr char kReleaseLost[] = "lost";
inline constexpr char kReleaseStop[] = "stop";

// All instruments are safe to call from any thread.
class GaugeMetric {
 public:
  virtual ~GaugeMetric() = default;
  virtual void Set(double value) = 0;
};

class CounterMetric {
 public:
  virtual ~CounterMetric() = default;
  virtual void Inc() = 0;
};

class HistogramMetric {
 public:
  virtual ~HistogramMetric() = default;
  virtual void Observe(double value) = 0;
};

// Creates the instruments of the sharded controller `controller` (the
// value of the `controller` label). Thread-safe.
class MetricsProvider {
 public:
  virtual ~MetricsProvider() = default;
  // The shards held now.
  virtual std::unique_ptr<GaugeMetric> NewShardsHeldMetric(
      std::string_view controller) = 0;
  // Shards taken (a Lease acquired).
  virtual std::unique_ptr<CounterMetric> NewAcquisitionsMetric(
      std::string_view controller) = 0;
  // Shards given up, by `reason` (kRelease*).
  virtual std::unique_ptr<CounterMetric> NewReleasesMetric(
      std::string_view controller, std::string_view reason) = 0;
  // Seconds from the previous holder's last write of a shard's Lease (its
  // release, or its last renewal when the Lease expired), as the Lease's
  // renewTime records it, to this replica's acquisition: the time the
  // shard went without an owner, plus any difference of the two clocks.
  virtual std::unique_ptr<HistogramMetric> NewHandoverMetric(
      std::string_view controller) = 0;
};

// Sets the provider used by coordinators whose options name none. Not
// owned; must outlive every coordinator created afterwards. Only the first
// call takes effect; returns whether it did.
bool SetGlobalMetricsProvider(MetricsProvider* provider);
// The provider set above, or null.
MetricsProvider* GlobalMetricsProvider();
// `own` if set, else the global provider; null when `controller` is empty.
MetricsProvider* ResolveMetricsProvider(MetricsProvider* own,
                                        std::string_view controller);

}  // namespace kcr::sharding

#endif  // KCR_RUNTIME_SHARDING_METRICS_H_
