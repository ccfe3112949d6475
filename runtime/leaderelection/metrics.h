// Leader election metrics: the instruments a LeaderElector records,
// created through a MetricsProvider (as runtime/cache/metrics.h does for
// the cache), client-go's leaderMetricsProvider.
//
// An elector records metrics only when its config has a non-empty name AND
// a provider (its own, or the process-wide one set by
// SetGlobalMetricsProvider); otherwise it holds no instrument at all.
//
// runtime/metrics/leader_election_metrics.h implements the provider with
// Prometheus:
//   leader_election_master_status{name}    gauge (1 leading, 0 not)
//   leader_election_slowpath_total{name}   counter
#ifndef KCR_RUNTIME_LEADERELECTION_METRICS_H_
#define KCR_RUNTIME_LEADERELECTION_METRICS_H_

#include <memory>
#include <string_view>

namespace kcr::leaderelection {

// Whether one elector leads. Safe to call from any thread.
class SwitchMetric {
 public:
  virtual ~SwitchMetric() = default;
  virtual void On() = 0;
  virtual void Off() = 0;
};

// Safe to call from any thread.
class CounterMetric {
 public:
  virtual ~CounterMetric() = default;
  virtual void Inc() = 0;
};

// Creates the instruments of the elector named `name` (the value of the
// `name` label). Thread-safe.
class MetricsProvider {
 public:
  virtual ~MetricsProvider() = default;
  // On while the elector leads.
  virtual std::unique_ptr<SwitchMetric> NewLeaderMetric(
      std::string_view name) = 0;
  // Renewals by the leader that had to read the lock first because the
  // optimistic update from its cached record failed.
  virtual std::unique_ptr<CounterMetric> NewSlowpathMetric(
      std::string_view name) = 0;
};

// Sets the provider used by electors whose config names none. Not owned;
// must outlive every elector created afterwards. Only the first call takes
// effect; returns whether it did.
bool SetGlobalMetricsProvider(MetricsProvider* provider);
// The provider set above, or null.
MetricsProvider* GlobalMetricsProvider();

// `own` if set, else the global provider; null when `name` is empty (an
// unnamed elector records nothing).
MetricsProvider* ResolveMetricsProvider(MetricsProvider* own,
                                        std::string_view name);

}  // namespace kcr::leaderelection

#endif  // KCR_RUNTIME_LEADERELECTION_METRICS_H_
