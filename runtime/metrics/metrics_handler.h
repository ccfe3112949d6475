// The /metrics answer: every family of the given collectables in
// Prometheus' text exposition format (0.0.4), written by prometheus-cpp's
// TextSerializer.
#ifndef KCR_RUNTIME_METRICS_METRICS_HANDLER_H_
#define KCR_RUNTIME_METRICS_METRICS_HANDLER_H_

#include <vector>

#include "prometheus/collectable.h"
#include "runtime/metrics/http_endpoint.h"

namespace kcr::metrics {

// A handler serving `collectables`, which must outlive it. Collect runs at
// each scrape, on the endpoint's answering thread.
HttpEndpoint::Handler MetricsHandler(
    std::vector<const prometheus::Collectable*> collectables);

}  // namespace kcr::metrics

#endif  // KCR_RUNTIME_METRICS_METRICS_HANDLER_H_
