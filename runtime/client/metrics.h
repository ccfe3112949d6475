// REST client metrics: the two instruments client-go's tools/metrics
// exports for every request, created through a MetricsProvider (as
// runtime/workqueue/metrics.h does for queues).
//
// runtime/metrics/rest_client_metrics.h implements the provider with
// Prometheus under client-go's names:
//   rest_client_requests_total{code,method,host}          counter
//   rest_client_request_duration_seconds{verb,host}       histogram
// `code` is the HTTP status ("200", "404") or "<error>" when no response
// came back; `method` and `verb` are the HTTP method; `host` is host:port.
#ifndef KCR_RUNTIME_CLIENT_METRICS_H_
#define KCR_RUNTIME_CLIENT_METRICS_H_

#include <memory>
#include <string_view>

#include "absl/time/time.h"

namespace kcr::client {

// Both instruments must be safe to call from any thread.
class RequestResultMetric {
 public:
  virtual ~RequestResultMetric() = default;
  virtual void Increment(std::string_view code, std::string_view method,
                         std::string_view host) = 0;
};

class RequestLatencyMetric {
 public:
  virtual ~RequestLatencyMetric() = default;
  // One attempt, from sending the request to having the response headers
  // (for a watch) or the whole body (otherwise).
  virtual void Observe(std::string_view verb, std::string_view host,
                       absl::Duration latency) = 0;
};

// Thread-safe.
class MetricsProvider {
 public:
  virtual ~MetricsProvider() = default;
  virtual std::unique_ptr<RequestResultMetric> NewRequestResultMetric() = 0;
  virtual std::unique_ptr<RequestLatencyMetric> NewRequestLatencyMetric() = 0;
};

// Sets the provider used by clients whose options name none. Not owned;
// must outlive every client created afterwards. Only the first call takes
// effect; returns whether it did.
bool SetGlobalMetricsProvider(MetricsProvider* provider);
// The provider set above, or null.
MetricsProvider* GlobalMetricsProvider();

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_METRICS_H_
