#include "runtime/metrics/cache_metrics.h"

#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace kcr::metrics {
namespace {

class Counter final : public cache::CounterMetric {
 public:
  explicit Counter(prometheus::Counter& counter) : counter_(counter) {}
  void Inc() override { counter_.Increment(); }
  void IncBy(uint64_t n) override {
    counter_.Increment(static_cast<double>(n));
  }

 private:
  prometheus::Counter& counter_;
};

class Gauge final : public cache::GaugeMetric {
 public:
  explicit Gauge(prometheus::Gauge& gauge) : gauge_(gauge) {}
  void Set(double value) override { gauge_.Set(value); }
  void Add(double delta) override { gauge_.Increment(delta); }

 private:
  prometheus::Gauge& gauge_;
};

prometheus::Labels Labels(std::string_view name) {
  return {{"name", std::string(name)}};
}

prometheus::Labels Labels(std::string_view name, std::string_view key,
                          std::string_view value) {
  return {{"name", std::string(name)}, {std::string(key), std::string(value)}};
}

}  // namespace

struct PrometheusCacheMetrics::Families {
  explicit Families(prometheus::Registry& r)
      : events(prometheus::BuildCounter()
                   .Name("reflector_events_total")
                   .Help("Watch events a reflector received, by type.")
                   .Register(r)),
        relists(prometheus::BuildCounter()
                    .Name("reflector_relists_total")
                    .Help("Lists that replaced a reflector's store after "
                          "its first.")
                    .Register(r)),
        watch_restarts(prometheus::BuildCounter()
                           .Name("reflector_watch_restarts_total")
                           .Help("Watches a reflector started after its "
                                 "first.")
                           .Register(r)),
        last_resource_version(
            prometheus::BuildGauge()
                .Name("reflector_last_resource_version")
                .Help("The last resourceVersion a reflector saw, when "
                      "numeric.")
                .Register(r)),
        dropped(prometheus::BuildCounter()
                    .Name("reflector_dropped_objects_total")
                    .Help("Objects kept out of the cache, by reason.")
                    .Register(r)),
        handler_depth(prometheus::BuildGauge()
                          .Name("informer_handler_queue_depth")
                          .Help("Notifications waiting for one event "
                                "handler of an informer.")
                          .Register(r)) {}

  prometheus::Family<prometheus::Counter>& events;
  prometheus::Family<prometheus::Counter>& relists;
  prometheus::Family<prometheus::Counter>& watch_restarts;
  prometheus::Family<prometheus::Gauge>& last_resource_version;
  prometheus::Family<prometheus::Counter>& dropped;
  prometheus::Family<prometheus::Gauge>& handler_depth;
};

PrometheusCacheMetrics::PrometheusCacheMetrics(prometheus::Registry& registry)
    : families_(std::make_unique<Families>(registry)) {}

PrometheusCacheMetrics::~PrometheusCacheMetrics() = default;

std::unique_ptr<cache::CounterMetric>
PrometheusCacheMetrics::NewWatchEventsMetric(std::string_view name,
                                             std::string_view type) {
  return std::make_unique<Counter>(
      families_->events.Add(Labels(name, "type", type)));
}

std::unique_ptr<cache::CounterMetric> PrometheusCacheMetrics::NewRelistsMetric(
    std::string_view name) {
  return std::make_unique<Counter>(families_->relists.Add(Labels(name)));
}

std::unique_ptr<cache::CounterMetric>
PrometheusCacheMetrics::NewWatchRestartsMetric(std::string_view name) {
  return std::make_unique<Counter>(families_->watch_restarts.Add(Labels(name)));
}

std::unique_ptr<cache::GaugeMetric>
PrometheusCacheMetrics::NewLastResourceVersionMetric(std::string_view name) {
  return std::make_unique<Gauge>(
      families_->last_resource_version.Add(Labels(name)));
}

std::unique_ptr<cache::CounterMetric>
PrometheusCacheMetrics::NewDroppedObjectsMetric(std::string_view name,
                                                std::string_view reason) {
  return std::make_unique<Counter>(
      families_->dropped.Add(Labels(name, "reason", reason)));
}

std::unique_ptr<cache::GaugeMetric>
PrometheusCacheMetrics::NewHandlerQueueDepthMetric(std::string_view name,
                                                   std::string_view handler) {
  return std::make_unique<Gauge>(
      families_->handler_depth.Add(Labels(name, "handler", handler)));
}

}  // namespace kcr::metrics
