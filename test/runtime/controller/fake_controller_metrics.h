// FakeControllerMetrics: a controller MetricsProvider that counts in
// memory, for tests.
#ifndef KCR_TEST_RUNTIME_CONTROLLER_FAKE_CONTROLLER_METRICS_H_
#define KCR_TEST_RUNTIME_CONTROLLER_FAKE_CONTROLLER_METRICS_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "runtime/controller/metrics.h"

namespace kcr::controller::testing {

// Counts for every controller, by name. Thread-safe.
class FakeControllerMetrics final : public MetricsProvider {
 public:
  struct Counts {
    std::map<ReconcileOutcome, int> reconciles;
    int errors = 0;
    int panics = 0;
    int observations = 0;
    int max_concurrent = 0;
    int active = 0;
  };

  std::unique_ptr<ControllerMetrics> NewControllerMetrics(
      std::string_view controller) override {
    return std::make_unique<Instruments>(this, std::string(controller));
  }

  Counts Get(const std::string& controller) {
    MutexLock lock(&mu_);
    return counts_[controller];
  }

 private:
  class Instruments final : public ControllerMetrics {
   public:
    Instruments(FakeControllerMetrics* parent, std::string name)
        : parent_(parent), name_(std::move(name)) {}
    void CountReconcile(ReconcileOutcome o) override {
      Edit([o](Counts& c) { ++c.reconciles[o]; });
    }
    void CountError() override {
      Edit([](Counts& c) { ++c.errors; });
    }
    void CountPanic() override {
      Edit([](Counts& c) { ++c.panics; });
    }
    void ObserveReconcileTime(double) override {
      Edit([](Counts& c) { ++c.observations; });
    }
    void SetMaxConcurrentReconciles(int n) override {
      Edit([n](Counts& c) { c.max_concurrent = n; });
    }
    void AddActiveWorkers(int d) override {
      Edit([d](Counts& c) { c.active += d; });
    }

   private:
    template <typename F>
    void Edit(F f) {
      MutexLock lock(&parent_->mu_);
      f(parent_->counts_[name_]);
    }
    FakeControllerMetrics* const parent_;
    const std::string name_;
  };

  Mutex mu_;
  std::map<std::string, Counts> counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::controller::testing

#endif  // KCR_TEST_RUNTIME_CONTROLLER_FAKE_CONTROLLER_METRICS_H_
