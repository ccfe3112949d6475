#include "runtime/metrics/rest_client_metrics.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace kcr::metrics {
namespace {

using ::testing::HasSubstr;

TEST(PrometheusRestClientMetricsTest, ExportsClientGoNamesAndLabels) {
  prometheus::Registry registry;
  PrometheusRestClientMetrics provider(registry);
  auto result = provider.NewRequestResultMetric();
  auto latency = provider.NewRequestLatencyMetric();
  result->Increment("200", "GET", "10.0.0.1:6443");
  result->Increment("200", "GET", "10.0.0.1:6443");
  result->Increment("<error>", "POST", "10.0.0.1:6443");
  latency->Observe("GET", "10.0.0.1:6443", absl::Milliseconds(20));
  latency->Observe("GET", "10.0.0.1:6443", absl::Seconds(3));

  const std::string text =
      prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_THAT(text, HasSubstr("rest_client_requests_total{code=\"200\",host="
                              "\"10.0.0.1:6443\",method=\"GET\"} 2"));
  EXPECT_THAT(text, HasSubstr("rest_client_requests_total{code=\"<error>\","
                              "host=\"10.0.0.1:6443\",method=\"POST\"} 1"));
  EXPECT_THAT(text, HasSubstr("rest_client_request_duration_seconds_count{host="
                              "\"10.0.0.1:6443\",verb=\"GET\"} 2"));
  EXPECT_THAT(text,
              HasSubstr("rest_client_request_duration_seconds_bucket{host=\"10."
                        "0.0.1:6443\",verb=\"GET\",le=\"0.025\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("rest_client_request_duration_seconds_bucket{host=\"10."
                        "0.0.1:6443\",verb=\"GET\",le=\"4\"} 2"));
}

}  // namespace
}  // namespace kcr::metrics
