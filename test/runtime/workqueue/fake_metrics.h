// A MetricsProvider that records every value, for tests.
#ifndef KCR_TEST_RUNTIME_WORKQUEUE_FAKE_METRICS_H_
#define KCR_TEST_RUNTIME_WORKQUEUE_FAKE_METRICS_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "runtime/workqueue/metrics.h"

namespace kcr::workqueue {

class FakeMetricsProvider final : public MetricsProvider {
 public:
  // The current value of instrument `kind` ("depth", "adds", "unfinished",
  // "longest", "retries") of queue `name`.
  double Value(const std::string& kind, std::string_view name) {
    MutexLock lock(&mu_);
    return values_[Key(kind, name)];
  }
  // Observations of histogram `kind` ("latency", "work").
  std::vector<double> Observations(const std::string& kind,
                                   std::string_view name) {
    MutexLock lock(&mu_);
    return observations_[Key(kind, name)];
  }
  int Created() {
    MutexLock lock(&mu_);
    return created_;
  }

  std::unique_ptr<GaugeMetric> NewDepthMetric(std::string_view name) override {
    return std::make_unique<Gauge>(this, Key("depth", name));
  }
  std::unique_ptr<CounterMetric> NewAddsMetric(std::string_view name) override {
    return std::make_unique<Counter>(this, Key("adds", name));
  }
  std::unique_ptr<HistogramMetric> NewLatencyMetric(
      std::string_view name) override {
    return std::make_unique<Histogram>(this, Key("latency", name));
  }
  std::unique_ptr<HistogramMetric> NewWorkDurationMetric(
      std::string_view name) override {
    return std::make_unique<Histogram>(this, Key("work", name));
  }
  std::unique_ptr<SettableGaugeMetric> NewUnfinishedWorkSecondsMetric(
      std::string_view name) override {
    return std::make_unique<Settable>(this, Key("unfinished", name));
  }
  std::unique_ptr<SettableGaugeMetric> NewLongestRunningProcessorSecondsMetric(
      std::string_view name) override {
    return std::make_unique<Settable>(this, Key("longest", name));
  }
  std::unique_ptr<CounterMetric> NewRetriesMetric(
      std::string_view name) override {
    return std::make_unique<Counter>(this, Key("retries", name));
  }

 private:
  static std::string Key(const std::string& kind, std::string_view name) {
    return kind + "/" + std::string(name);
  }
  void Bump(const std::string& key, double delta) {
    MutexLock lock(&mu_);
    values_[key] += delta;
  }
  void Set(const std::string& key, double v) {
    MutexLock lock(&mu_);
    values_[key] = v;
  }
  void Observe(const std::string& key, double v) {
    MutexLock lock(&mu_);
    observations_[key].push_back(v);
  }
  void Count() {
    MutexLock lock(&mu_);
    ++created_;
  }

  struct Gauge : GaugeMetric {
    Gauge(FakeMetricsProvider* p, std::string k) : p(p), k(std::move(k)) {
      p->Count();
    }
    void Inc() override { p->Bump(k, 1); }
    void Dec() override { p->Bump(k, -1); }
    FakeMetricsProvider* p;
    std::string k;
  };
  struct Counter : CounterMetric {
    Counter(FakeMetricsProvider* p, std::string k) : p(p), k(std::move(k)) {
      p->Count();
    }
    void Inc() override { p->Bump(k, 1); }
    FakeMetricsProvider* p;
    std::string k;
  };
  struct Settable : SettableGaugeMetric {
    Settable(FakeMetricsProvider* p, std::string k) : p(p), k(std::move(k)) {
      p->Count();
    }
    void Set(double v) override { p->Set(k, v); }
    FakeMetricsProvider* p;
    std::string k;
  };
  struct Histogram : HistogramMetric {
    Histogram(FakeMetricsProvider* p, std::string k) : p(p), k(std::move(k)) {
      p->Count();
    }
    void Observe(double v) override { p->Observe(k, v); }
    FakeMetricsProvider* p;
    std::string k;
  };

  Mutex mu_;
  std::map<std::string, double> values_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<double>> observations_ ABSL_GUARDED_BY(mu_);
  int created_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kcr::workqueue

#endif  // KCR_TEST_RUNTIME_WORKQUEUE_FAKE_METRICS_H_
