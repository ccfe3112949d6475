// ProcessCollector: the process's own figures under the names every
// Prometheus client exports (Go's process collector, which
// controller-runtime registers):
//
//   process_cpu_seconds_total          counter  user + system CPU time
//   process_resident_memory_bytes      gauge
//   process_virtual_memory_bytes       gauge
//   process_virtual_memory_max_bytes   gauge    RLIMIT_AS (-1: unlimited)
//   process_start_time_seconds         gauge    since the Unix epoch
//   process_open_fds                   gauge
//   process_max_fds                    gauge    RLIMIT_NOFILE
//
// Read from /proc at each Collect, so the figures are as fresh as the
// scrape. Linux only. Thread-safe (it keeps no state).
#ifndef KCR_RUNTIME_METRICS_PROCESS_COLLECTOR_H_
#define KCR_RUNTIME_METRICS_PROCESS_COLLECTOR_H_

#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace kcr::metrics {

class ProcessCollector final : public prometheus::Collectable {
 public:
  // Families whose figure cannot be read (no /proc) are left out.
  std::vector<prometheus::MetricFamily> Collect() const override;
};

}  // namespace kcr::metrics

#endif  // KCR_RUNTIME_METRICS_PROCESS_COLLECTOR_H_
