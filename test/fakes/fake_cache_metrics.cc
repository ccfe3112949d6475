#include "test/fakes/fake_cache_metrics.h"

#include <utility>

namespace kcr::testing {
namespace {

std::string Id(std::string_view metric, std::string_view name,
               std::string_view label) {
  std::string id(metric);
  id.append("|").append(name).append("|").append(label);
  return id;
}

}  // namespace

class FakeCacheMetrics::Instrument final : public cache::CounterMetric,
                                           public cache::GaugeMetric {
 public:
  Instrument(FakeCacheMetrics* owner, std::string id)
      : owner_(owner), id_(std::move(id)) {}
  void Inc() override { owner_->Add(id_, 1); }
  void IncBy(uint64_t n) override { owner_->Add(id_, static_cast<double>(n)); }
  void Set(double value) override { owner_->Set(id_, value); }
  void Add(double delta) override { owner_->Add(id_, delta); }

 private:
  FakeCacheMetrics* const owner_;
  const std::string id_;
};

double FakeCacheMetrics::Value(std::string_view metric, std::string_view name,
                               std::string_view label) const {
  MutexLock lock(&mu_);
  auto it = values_.find(Id(metric, name, label));
  return it == values_.end() ? 0 : it->second;
}

void FakeCacheMetrics::Set(const std::string& id, double value) {
  MutexLock lock(&mu_);
  values_[id] = value;
}

void FakeCacheMetrics::Add(const std::string& id, double delta) {
  MutexLock lock(&mu_);
  values_[id] += delta;
}

std::unique_ptr<FakeCacheMetrics::Instrument> FakeCacheMetrics::Make(
    std::string_view metric, std::string_view name, std::string_view label) {
  return std::make_unique<Instrument>(this, Id(metric, name, label));
}

std::unique_ptr<cache::CounterMetric> FakeCacheMetrics::NewWatchEventsMetric(
    std::string_view name, std::string_view type) {
  return Make(kEvents, name, type);
}

std::unique_ptr<cache::CounterMetric> FakeCacheMetrics::NewRelistsMetric(
    std::string_view name) {
  return Make(kRelists, name, "");
}

std::unique_ptr<cache::CounterMetric> FakeCacheMetrics::NewWatchRestartsMetric(
    std::string_view name) {
  return Make(kWatchRestarts, name, "");
}

std::unique_ptr<cache::GaugeMetric>
FakeCacheMetrics::NewLastResourceVersionMetric(std::string_view name) {
  return Make(kLastResourceVersion, name, "");
}

std::unique_ptr<cache::CounterMetric> FakeCacheMetrics::NewDroppedObjectsMetric(
    std::string_view name, std::string_view reason) {
  return Make(kDropped, name, reason);
}

std::unique_ptr<cache::GaugeMetric>
FakeCacheMetrics::NewHandlerQueueDepthMetric(std::string_view name,
                                             std::string_view handler) {
  return Make(kHandlerQueueDepth, name, handler);
}

}  // namespace kcr::testing
