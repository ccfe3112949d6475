#include "runtime/metrics/process_collector.h"

#include <unistd.h>

#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kcr::metrics {
namespace {

std::map<std::string, double> Values() {
  std::map<std::string, double> out;
  for (const prometheus::MetricFamily& f : ProcessCollector().Collect()) {
    EXPECT_EQ(f.metric.size(), 1u) << f.name;
    const prometheus::ClientMetric& m = f.metric.at(0);
    out[f.name] = f.type == prometheus::MetricType::Counter ? m.counter.value
                                                            : m.gauge.value;
  }
  return out;
}

TEST(ProcessCollectorTest, ReportsThisProcess) {
  // Burn a little CPU so the counter has something to show.
  volatile double x = 0;
  const std::clock_t until = std::clock() + CLOCKS_PER_SEC / 20;
  while (std::clock() < until) x = x + 1;
  std::map<std::string, double> v = Values();
  ASSERT_EQ(v.size(), 7u);
  EXPECT_GT(v["process_cpu_seconds_total"], 0);
  EXPECT_GT(v["process_resident_memory_bytes"], 1 << 20);
  EXPECT_GE(v["process_virtual_memory_bytes"],
            v["process_resident_memory_bytes"]);
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(v["process_start_time_seconds"], now + 1);
  EXPECT_GT(v["process_start_time_seconds"], now - 3600);
  EXPECT_GE(v["process_open_fds"], 3);  // stdin, stdout, stderr at least
  EXPECT_GE(v["process_max_fds"], v["process_open_fds"]);
}

TEST(ProcessCollectorTest, OpenFdsFollowsTheProcess) {
  const double before = Values()["process_open_fds"];
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_EQ(Values()["process_open_fds"], before + 2);
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(Values()["process_open_fds"], before);
}

}  // namespace
}  // namespace kcr::metrics
