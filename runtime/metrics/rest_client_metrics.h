// PrometheusRestClientMetrics: the REST client's MetricsProvider on a
// prometheus-cpp registry, under client-go's names
// (k8s.io/component-base/metrics/prometheus/restclient):
//
//   rest_client_requests_total{code,method,host}       counter
//   rest_client_request_duration_seconds{verb,host}    histogram
//
// The histogram uses client-go's buckets: 0.005, 0.025, 0.1, 0.25, 0.5, 1,
// 2, 4, 8, 15, 30, 60 seconds.
#ifndef KCR_RUNTIME_METRICS_REST_CLIENT_METRICS_H_
#define KCR_RUNTIME_METRICS_REST_CLIENT_METRICS_H_

#include <memory>

#include "runtime/client/metrics.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace kcr::metrics {

// Thread-safe. Registers both families in `registry` on construction; the
// registry must outlive the provider and every client using it.
class PrometheusRestClientMetrics final : public client::MetricsProvider {
 public:
  explicit PrometheusRestClientMetrics(prometheus::Registry& registry);
  ~PrometheusRestClientMetrics() override;

  std::unique_ptr<client::RequestResultMetric> NewRequestResultMetric()
      override;
  std::unique_ptr<client::RequestLatencyMetric> NewRequestLatencyMetric()
      override;

 private:
  struct Families;
  std::unique_ptr<Families> families_;
};

}  // namespace kcr::metrics

#endif  // KCR_RUNTIME_METRICS_REST_CLIENT_METRICS_H_
