// PrometheusCacheMetrics: the cache's MetricsProvider
// (runtime/cache/metrics.h) on a prometheus-cpp registry. client-go no
// longer exports reflector metrics; the names follow its style:
//
//   reflector_events_total{name,type}              counter
//   reflector_relists_total{name}                  counter
//   reflector_watch_restarts_total{name}           counter
//   reflector_last_resource_version{name}          gauge
//   reflector_dropped_objects_total{name,reason}   counter
//   informer_handler_queue_depth{name,handler}     gauge
#ifndef KCR_RUNTIME_METRICS_CACHE_METRICS_H_
#define KCR_RUNTIME_METRICS_CACHE_METRICS_H_

#include <memory>
#include <string_view>

#include "runtime/cache/metrics.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace kcr::metrics {

// Thread-safe. Registers its six families in `registry` on construction;
// the registry must outlive the provider and every reflector, FIFO and
// informer using it.
class PrometheusCacheMetrics final : public cache::MetricsProvider {
 public:
  explicit PrometheusCacheMetrics(prometheus::Registry& registry);
  ~PrometheusCacheMetrics() override;

  std::unique_ptr<cache::CounterMetric> NewWatchEventsMetric(
      std::string_view name, std::string_view type) override;
  std::unique_ptr<cache::CounterMetric> NewRelistsMetric(
      std::string_view name) override;
  std::unique_ptr<cache::CounterMetric> NewWatchRestartsMetric(
      std::string_view name) override;
  std::unique_ptr<cache::GaugeMetric> NewLastResourceVersionMetric(
      std::string_view name) override;
  std::unique_ptr<cache::CounterMetric> NewDroppedObjectsMetric(
      std::string_view name, std::string_view reason) override;
  std::unique_ptr<cache::GaugeMetric> NewHandlerQueueDepthMetric(
      std::string_view name, std::string_view handler) override;

 private:
  struct Families;
  std::unique_ptr<Families> families_;
};

}  // namespace kcr::metrics

#endif  // KCR_RUNTIME_METRICS_CACHE_METRICS_H_
