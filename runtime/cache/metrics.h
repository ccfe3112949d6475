// Cache metrics: the instruments a Reflector, its RealFifo and an
// informer's handlers record, created through a MetricsProvider (as
// runtime/client/metrics.h and runtime/workqueue/metrics.h do for the REST
// client and the work queue).
//
// A component records metrics only when it has a non-empty name AND a
// provider (its own, from its options, or the process-wide one set by
// SetGlobalMetricsProvider); otherwise it holds no instrument at all.
//
// runtime/metrics/cache_metrics.h implements the provider with Prometheus:
//   reflector_events_total{name,type}                 counter
//   reflector_relists_total{name}                     counter
//   reflector_watch_restarts_total{name}              counter
//   reflector_last_resource_version{name}             gauge
//   reflector_dropped_objects_total{name,reason}      counter
//   informer_handler_queue_depth{name,handler}        gauge
#ifndef KCR_RUNTIME_CACHE_METRICS_H_
#define KCR_RUNTIME_CACHE_METRICS_H_

#include <cstdint>
#include <memory>
#include <string_view>

namespace kcr::cache {

// All instruments must be safe to call from any thread.
class CounterMetric {
 public:
  virtual ~CounterMetric() = default;
  virtual void Inc() = 0;
  // As `n` Inc calls; implementations override it to add at once.
  virtual void IncBy(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) Inc();
  }
};

class GaugeMetric {
 public:
  virtual ~GaugeMetric() = default;
  virtual void Set(double value) = 0;
  // Adds `delta` (negative to subtract).
  virtual void Add(double delta) = 0;
};

// Why an object was kept out of the cache (the `reason` label).
inline constexpr std::string_view kDropKindMismatch = "kind_mismatch";
inline constexpr std::string_view kDropTransformError = "transform_error";
inline constexpr std::string_view kDropNoKey = "no_key";

// Creates the instruments of one reflector or informer, named by `name`
// (the value of the `name` label; client-go names a reflector after the
// type it watches and where it was made). Thread-safe.
class MetricsProvider {
 public:
  virtual ~MetricsProvider() = default;
  // Watch events received, by `type` (ADDED, MODIFIED, DELETED, BOOKMARK,
  // ERROR).
  virtual std::unique_ptr<CounterMetric> NewWatchEventsMetric(
      std::string_view name, std::string_view type) = 0;
  // Lists that replaced the store's contents, after the first.
  virtual std::unique_ptr<CounterMetric> NewRelistsMetric(
      std::string_view name) = 0;
  // Watches started after the first one of a Run.
  virtual std::unique_ptr<CounterMetric> NewWatchRestartsMetric(
      std::string_view name) = 0;
  // The last resourceVersion seen (from a list or a watch event), as a
  // number; resourceVersions that are not numbers are not recorded.
  virtual std::unique_ptr<GaugeMetric> NewLastResourceVersionMetric(
      std::string_view name) = 0;
  // Objects kept out of the cache, by `reason` (kDrop* above).
  virtual std::unique_ptr<CounterMetric> NewDroppedObjectsMetric(
      std::string_view name, std::string_view reason) = 0;
  // Notifications waiting in one handler's queue of informer `name`.
  virtual std::unique_ptr<GaugeMetric> NewHandlerQueueDepthMetric(
      std::string_view name, std::string_view handler) = 0;
};

// Sets the provider used by components whose options name none. Not owned;
// must outlive every component created afterwards. Only the first call
// takes effect; returns whether it did.
bool SetGlobalMetricsProvider(MetricsProvider* provider);
// The provider set above, or null.
MetricsProvider* GlobalMetricsProvider();

// `own` if set, else the global provider; null when `name` is empty (an
// unnamed component records nothing).
MetricsProvider* ResolveMetricsProvider(MetricsProvider* own,
                                        std::string_view name);

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_METRICS_H_
