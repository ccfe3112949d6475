#include "runtime/metrics/leader_election_metrics.h"

#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace kcr::metrics {
namespace {

class Switch final : public leaderelection::SwitchMetric {
 public:
  explicit Switch(prometheus::Gauge& gauge) : gauge_(gauge) {}
  void On() override { gauge_.Set(1); }
  void Off() override { gauge_.Set(0); }

 private:
  prometheus::Gauge& gauge_;
};

class Counter final : public leaderelection::CounterMetric {
 public:
  explicit Counter(prometheus::Counter& counter) : counter_(counter) {}
  void Inc() override { counter_.Increment(); }

 private:
  prometheus::Counter& counter_;
};

prometheus::Labels Labels(std::string_view name) {
  return {{"name", std::string(name)}};
}

}  // namespace

struct PrometheusLeaderElectionMetrics::Families {
  explicit Families(prometheus::Registry& r)
      : master_status(prometheus::BuildGauge()
                          .Name("leader_election_master_status")
                          .Help("Gauge of if the reporting system is master "
                                "of the relevant lease, 0 indicates backup, "
                                "1 indicates master. 'name' is the string "
                                "used to identify the lease.")
                          .Register(r)),
        slowpath(prometheus::BuildCounter()
                     .Name("leader_election_slowpath_total")
                     .Help("Renewals by the leader that read the lease "
                           "before updating it.")
                     .Register(r)) {}

  prometheus::Family<prometheus::Gauge>& master_status;
  prometheus::Family<prometheus::Counter>& slowpath;
};

PrometheusLeaderElectionMetrics::PrometheusLeaderElectionMetrics(
    prometheus::Registry& registry)
    : families_(std::make_unique<Families>(registry)) {}

PrometheusLeaderElectionMetrics::~PrometheusLeaderElectionMetrics() = default;

std::unique_ptr<leaderelection::SwitchMetric>
PrometheusLeaderElectionMetrics::NewLeaderMetric(std::string_view name) {
  return std::make_unique<Switch>(families_->master_status.Add(Labels(name)));
}

std::unique_ptr<leaderelection::CounterMetric>
PrometheusLeaderElectionMetrics::NewSlowpathMetric(std::string_view name) {
  return std::make_unique<Counter>(families_->slowpath.Add(Labels(name)));
}

}  // namespace kcr::metrics
