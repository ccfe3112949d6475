#include "runtime/metrics/controller_metrics.h"

#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace kcr::metrics {
namespace {

prometheus::Histogram::BucketBoundaries ReconcileTimeBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3,  0.35,
          0.4,   0.45, 0.5,   0.6,  0.7, 0.8,  0.9, 1.0,  1.25, 1.5,
          1.75,  2.0,  2.5,   3.0,  3.5, 4.0,  4.5, 5,    6,    7,
          8,     9,    10,    15,   20,  25,   30,  40,   50,   60};
}

}  // namespace

struct PrometheusControllerMetrics::Families {
  explicit Families(prometheus::Registry& r)
      : total(prometheus::BuildCounter()
                  .Name("controller_runtime_reconcile_total")
                  .Help("Total number of reconciliations per controller")
                  .Register(r)),
        errors(prometheus::BuildCounter()
                   .Name("controller_runtime_reconcile_errors_total")
                   .Help("Total number of reconciliation errors per "
                         "controller")
                   .Register(r)),
        panics(prometheus::BuildCounter()
                   .Name("controller_runtime_reconcile_panics_total")
                   .Help("Total number of reconciliation panics per "
                         "controller")
                   .Register(r)),
        time(prometheus::BuildHistogram()
                 .Name("controller_runtime_reconcile_time_seconds")
                 .Help("Length of time per reconciliation per controller")
                 .Register(r)),
        max_concurrent(prometheus::BuildGauge()
                           .Name("controller_runtime_max_concurrent_reconciles")
                           .Help("Maximum number of concurrent reconciles per "
                                 "controller")
                           .Register(r)),
        active(prometheus::BuildGauge()
                   .Name("controller_runtime_active_workers")
                   .Help("Number of currently used workers per controller")
                   .Register(r)) {}

  prometheus::Family<prometheus::Counter>& total;
  prometheus::Family<prometheus::Counter>& errors;
  prometheus::Family<prometheus::Counter>& panics;
  prometheus::Family<prometheus::Histogram>& time;
  prometheus::Family<prometheus::Gauge>& max_concurrent;
  prometheus::Family<prometheus::Gauge>& active;
};

namespace {

class Instruments final : public controller::ControllerMetrics {
 public:
  Instruments(PrometheusControllerMetrics::Families& f, const std::string& name)
      : success_(Total(f, name, controller::ReconcileOutcome::kSuccess)),
        error_(Total(f, name, controller::ReconcileOutcome::kError)),
        requeue_(Total(f, name, controller::ReconcileOutcome::kRequeue)),
        requeue_after_(
            Total(f, name, controller::ReconcileOutcome::kRequeueAfter)),
        errors_(f.errors.Add({{"controller", name}})),
        panics_(f.panics.Add({{"controller", name}})),
        time_(f.time.Add({{"controller", name}}, ReconcileTimeBuckets())),
        max_concurrent_(f.max_concurrent.Add({{"controller", name}})),
        active_(f.active.Add({{"controller", name}})) {}

  void CountReconcile(controller::ReconcileOutcome outcome) override {
    switch (outcome) {
      case controller::ReconcileOutcome::kSuccess:
        success_.Increment();
        return;
      case controller::ReconcileOutcome::kError:
        error_.Increment();
        return;
      case controller::ReconcileOutcome::kRequeue:
        requeue_.Increment();
        return;
      case controller::ReconcileOutcome::kRequeueAfter:
        requeue_after_.Increment();
        return;
    }
  }
  void CountError() override { errors_.Increment(); }
  void CountPanic() override { panics_.Increment(); }
  void ObserveReconcileTime(double seconds) override { time_.Observe(seconds); }
  void SetMaxConcurrentReconciles(int workers) override {
    max_concurrent_.Set(workers);
  }
  void AddActiveWorkers(int delta) override { active_.Increment(delta); }

 private:
  static prometheus::Counter& Total(PrometheusControllerMetrics::Families& f,
                                    const std::string& name,
                                    controller::ReconcileOutcome outcome) {
    return f.total.Add(
        {{"controller", name},
         {"result", std::string(controller::ReconcileOutcomeName(outcome))}});
  }

  prometheus::Counter& success_;
  prometheus::Counter& error_;
  prometheus::Counter& requeue_;
  prometheus::Counter& requeue_after_;
  prometheus::Counter& errors_;
  prometheus::Counter& panics_;
  prometheus::Histogram& time_;
  prometheus::Gauge& max_concurrent_;
  prometheus::Gauge& active_;
};

}  // namespace

PrometheusControllerMetrics::PrometheusControllerMetrics(
    prometheus::Registry& registry)
    : families_(std::make_unique<Families>(registry)) {}

PrometheusControllerMetrics::~PrometheusControllerMetrics() = default;

std::unique_ptr<controller::ControllerMetrics>
PrometheusControllerMetrics::NewControllerMetrics(std::string_view controller) {
  return std::make_unique<Instruments>(*families_, std::string(controller));
}

}  // namespace kcr::metrics
