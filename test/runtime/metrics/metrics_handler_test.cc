#include "runtime/metrics/metrics_handler.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "runtime/metrics/process_collector.h"
#include "test/runtime/metrics/raw_http.h"

namespace kcr::metrics {
namespace {

using ::kcr::metrics::testing::Get;
using ::testing::HasSubstr;

TEST(MetricsHandlerTest, ServesEveryCollectableInTextFormat) {
  prometheus::Registry registry;
  auto& family = prometheus::BuildCounter()
                     .Name("kcr_test_total")
                     .Help("A test counter.")
                     .Register(registry);
  family.Add({{"kind", "a"}}).Increment(3);
  ProcessCollector process;
  auto endpoint = HttpEndpoint::Create({.bind_address = "127.0.0.1:0"});
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  (*endpoint)->Handle("/metrics", MetricsHandler({&registry, &process}));
  (*endpoint)->Start();
  const std::string answer = Get((*endpoint)->port(), "/metrics");
  EXPECT_THAT(answer, HasSubstr("Content-Type: text/plain; version=0.0.4; "
                                "charset=utf-8\r\n"));
  EXPECT_THAT(answer, HasSubstr("# TYPE kcr_test_total counter\n"));
  EXPECT_THAT(answer, HasSubstr("kcr_test_total{kind=\"a\"} 3\n"));
  EXPECT_THAT(answer, HasSubstr("# TYPE process_cpu_seconds_total counter\n"));
  EXPECT_THAT(answer, HasSubstr("\nprocess_resident_memory_bytes "));
  // The counter moves between scrapes.
  family.Add({{"kind", "a"}}).Increment();
  EXPECT_THAT(Get((*endpoint)->port(), "/metrics"),
              HasSubstr("kcr_test_total{kind=\"a\"} 4\n"));
}

}  // namespace
}  // namespace kcr::metrics
