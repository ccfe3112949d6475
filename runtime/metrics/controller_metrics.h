// PrometheusControllerMetrics: the controller MetricsProvider on a
// prometheus-cpp registry, under controller-runtime's names
// (sigs.k8s.io/controller-runtime/pkg/internal/controller/metrics), each
// labelled with the controller's name:
//
//   controller_runtime_reconcile_total{controller,result}   counter
//   controller_runtime_reconcile_errors_total{controller}   counter
//   controller_runtime_reconcile_panics_total{controller}   counter
//   controller_runtime_reconcile_time_seconds{controller}   histogram
//   controller_runtime_max_concurrent_reconciles{controller} gauge
//   controller_runtime_active_workers{controller}           gauge
//
// `result` is success, error, requeue or requeue_after; all four series
// exist (at 0) from the controller's creation, as controller-runtime
// initialises them. The histogram has controller-runtime's buckets, 5 ms
// to 60 s.
#ifndef KCR_RUNTIME_METRICS_CONTROLLER_METRICS_H_
#define KCR_RUNTIME_METRICS_CONTROLLER_METRICS_H_

#include <memory>
#include <string_view>

#include "runtime/controller/metrics.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace kcr::metrics {

// Thread-safe. Registers its six families in `registry` on construction;
// the registry must outlive the provider and every controller using it.
class PrometheusControllerMetrics final : public controller::MetricsProvider {
 public:
  explicit PrometheusControllerMetrics(prometheus::Registry& registry);
  ~PrometheusControllerMetrics() override;

  std::unique_ptr<controller::ControllerMetrics> NewControllerMetrics(
      std::string_view controller) override;

  // The registered families; defined in the .cc file.
  struct Families;

 private:
  std::unique_ptr<Families> families_;
};

}  // namespace kcr::metrics

#endif  // KCR_RUNTIME_METRICS_CONTROLLER_METRICS_H_
