// FakeCacheMetrics: a cache::MetricsProvider that keeps every value in
// memory, for tests to read back.
#ifndef KCR_TEST_FAKES_FAKE_CACHE_METRICS_H_
#define KCR_TEST_FAKES_FAKE_CACHE_METRICS_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "runtime/cache/metrics.h"

namespace kcr::testing {

// Thread-safe. Instruments share the provider's values and must not
// outlive it.
class FakeCacheMetrics final : public cache::MetricsProvider {
 public:
  // Instrument names for Value().
  static constexpr std::string_view kEvents = "events";
  static constexpr std::string_view kRelists = "relists";
  static constexpr std::string_view kWatchRestarts = "watch_restarts";
  static constexpr std::string_view kLastResourceVersion = "last_rv";
  static constexpr std::string_view kDropped = "dropped";
  static constexpr std::string_view kHandlerQueueDepth = "handler_depth";

  // The value of `metric` for `name` and its second label (event type,
  // drop reason, handler; "" for none); 0 when never recorded.
  double Value(std::string_view metric, std::string_view name,
               std::string_view label = "") const;

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
  class Instrument;
  std::unique_ptr<Instrument> Make(std::string_view metric,
                                   std::string_view name,
                                   std::string_view label);
  void Set(const std::string& id, double value);
  void Add(const std::string& id, double delta);

  mutable Mutex mu_;
  std::map<std::string, double, std::less<>> values_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::testing

#endif  // KCR_TEST_FAKES_FAKE_CACHE_METRICS_H_
