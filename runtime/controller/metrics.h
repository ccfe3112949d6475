// Controller metrics hooks: the instruments controller-runtime exports for
// every controller, created through a MetricsProvider.
//
// runtime/metrics/controller_metrics.h implements the provider with
// Prometheus under controller-runtime's names, each labelled `controller`:
//
//   controller_runtime_reconcile_total{result}      counter
//   controller_runtime_reconcile_errors_total       counter
//   controller_runtime_reconcile_panics_total       counter
//   controller_runtime_reconcile_time_seconds       histogram
//   controller_runtime_max_concurrent_reconciles    gauge
//   controller_runtime_active_workers               gauge
#ifndef KCR_RUNTIME_CONTROLLER_METRICS_H_
#define KCR_RUNTIME_CONTROLLER_METRICS_H_

#include <memory>
#include <string_view>

namespace kcr::controller {

// The `result` label of reconcile_total.
enum class ReconcileOutcome { kSuccess, kError, kRequeue, kRequeueAfter };

// "success", "error", "requeue", "requeue_after".
std::string_view ReconcileOutcomeName(ReconcileOutcome outcome);

// One controller's instruments. Every method is called from the
// controller's workers, concurrently: implementations must be thread-safe.
class ControllerMetrics {
 public:
  virtual ~ControllerMetrics() = default;
  // reconcile_total{result}.
  virtual void CountReconcile(ReconcileOutcome outcome) = 0;
  // reconcile_errors_total (errors and panics alike).
  virtual void CountError() = 0;
  // reconcile_panics_total: a reconcile that threw.
  virtual void CountPanic() = 0;
  // reconcile_time_seconds.
  virtual void ObserveReconcileTime(double seconds) = 0;
  // max_concurrent_reconciles.
  virtual void SetMaxConcurrentReconciles(int workers) = 0;
  // active_workers: workers inside a reconcile.
  virtual void AddActiveWorkers(int delta) = 0;
};

// Creates a controller's instruments; `controller` is the label's value.
// Thread-safe.
class MetricsProvider {
 public:
  virtual ~MetricsProvider() = default;
  virtual std::unique_ptr<ControllerMetrics> NewControllerMetrics(
      std::string_view controller) = 0;
};

}  // namespace kcr::controller

#endif  // KCR_RUNTIME_CONTROLLER_METRICS_H_
