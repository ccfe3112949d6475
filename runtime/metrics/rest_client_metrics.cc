#include "runtime/metrics/rest_client_metrics.h"

#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace kcr::metrics {

struct PrometheusRestClientMetrics::Families {
  explicit Families(prometheus::Registry& r)
      : requests(
            prometheus::BuildCounter()
                .Name("rest_client_requests_total")
                .Help("Number of HTTP requests, partitioned by status code, "
                      "method, and host.")
                .Register(r)),
        duration(prometheus::BuildHistogram()
                     .Name("rest_client_request_duration_seconds")
                     .Help("Request latency in seconds. Broken down by verb, "
                           "and host.")
                     .Register(r)) {}
  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Family<prometheus::Histogram>& duration;
};

namespace {

class Result final : public client::RequestResultMetric {
 public:
  explicit Result(prometheus::Family<prometheus::Counter>& family)
      : family_(family) {}
  void Increment(std::string_view code, std::string_view method,
                 std::string_view host) override {
    // Family::Add is thread-safe and returns the existing child for known
    // labels.
    family_
        .Add({{"code", std::string(code)},
              {"method", std::string(method)},
              {"host", std::string(host)}})
        .Increment();
  }

 private:
  prometheus::Family<prometheus::Counter>& family_;
};

class Latency final : public client::RequestLatencyMetric {
 public:
  explicit Latency(prometheus::Family<prometheus::Histogram>& family)
      : family_(family) {}
  void Observe(std::string_view verb, std::string_view host,
               absl::Duration latency) override {
    static const prometheus::Histogram::BucketBoundaries kBuckets = {
        0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0};
    family_
        .Add({{"verb", std::string(verb)}, {"host", std::string(host)}},
             kBuckets)
        .Observe(absl::ToDoubleSeconds(latency));
  }

 private:
  prometheus::Family<prometheus::Histogram>& family_;
};

}  // namespace

PrometheusRestClientMetrics::PrometheusRestClientMetrics(
    prometheus::Registry& registry)
    : families_(std::make_unique<Families>(registry)) {}

PrometheusRestClientMetrics::~PrometheusRestClientMetrics() = default;

std::unique_ptr<client::RequestResultMetric>
PrometheusRestClientMetrics::NewRequestResultMetric() {
  return std::make_unique<Result>(families_->requests);
}

std::unique_ptr<client::RequestLatencyMetric>
PrometheusRestClientMetrics::NewRequestLatencyMetric() {
  return std::make_unique<Latency>(families_->duration);
}

}  // namespace kcr::metrics
