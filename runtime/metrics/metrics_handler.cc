#include "runtime/metrics/metrics_handler.h"

#include <iterator>
#include <utility>

#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace kcr::metrics {

HttpEndpoint::Handler MetricsHandler(
    std::vector<const prometheus::Collectable*> collectables) {
  return [collectables = std::move(collectables)](const HttpGet&) {
    std::vector<prometheus::MetricFamily> families;
    for (const prometheus::Collectable* c : collectables) {
      std::vector<prometheus::MetricFamily> more = c->Collect();
      families.insert(families.end(), std::make_move_iterator(more.begin()),
                      std::make_move_iterator(more.end()));
    }
    HttpReply reply;
    reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
    reply.body = prometheus::TextSerializer().Serialize(families);
    return reply;
  };
}

}  // namespace kcr::metrics
