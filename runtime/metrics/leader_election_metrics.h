// PrometheusLeaderElectionMetrics: leader election's MetricsProvider
// (runtime/leaderelection/metrics.h) on a prometheus-cpp registry, with
// client-go's names:
//
//   leader_election_master_status{name}    gauge: 1 leading, 0 not
//   leader_election_slowpath_total{name}   counter
#ifndef KCR_RUNTIME_METRICS_LEADER_ELECTION_METRICS_H_
#define KCR_RUNTIME_METRICS_LEADER_ELECTION_METRICS_H_

#include <memory>
#include <string_view>

#include "runtime/leaderelection/metrics.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace kcr::metrics {

// Thread-safe. Registers its two families in `registry` on construction;
// the registry must outlive the provider and every elector using it.
class PrometheusLeaderElectionMetrics final
    : public leaderelection::MetricsProvider {
 public:
  explicit PrometheusLeaderElectionMetrics(prometheus::Registry& registry);
  ~PrometheusLeaderElectionMetrics() override;

  std::unique_ptr<leaderelection::SwitchMetric> NewLeaderMetric(
      std::string_view name) override;
  std::unique_ptr<leaderelection::CounterMetric> NewSlowpathMetric(
      std::string_view name) override;

 private:
  struct Families;
  std::unique_ptr<Families> families_;
};

}  // namespace kcr::metrics

#endif  // KCR_RUNTIME_METRICS_LEADER_ELECTION_METRICS_H_
