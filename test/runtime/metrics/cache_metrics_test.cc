#include "runtime/metrics/cache_metrics.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace kcr::metrics {
namespace {

using ::testing::HasSubstr;

TEST(PrometheusCacheMetricsTest, ExportsEveryInstrumentWithItsLabels) {
  prometheus::Registry registry;
  PrometheusCacheMetrics provider(registry);
  auto added = provider.NewWatchEventsMetric("pods", "ADDED");
  auto bookmarks = provider.NewWatchEventsMetric("pods", "BOOKMARK");
  auto relists = provider.NewRelistsMetric("pods");
  auto restarts = provider.NewWatchRestartsMetric("pods");
  auto rv = provider.NewLastResourceVersionMetric("pods");
  auto dropped = provider.NewDroppedObjectsMetric("pods", "kind_mismatch");
  auto depth = provider.NewHandlerQueueDepthMetric("pods", "logger");
  added->Inc();
  added->IncBy(2);
  bookmarks->Inc();
  relists->Inc();
  restarts->IncBy(4);
  rv->Set(123456);
  dropped->Inc();
  depth->Add(5);
  depth->Add(-2);

  const std::string text =
      prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_THAT(text,
              HasSubstr("reflector_events_total{name=\"pods\",type=\"ADDED\"} "
                        "3"));
  EXPECT_THAT(text, HasSubstr("reflector_events_total{name=\"pods\",type="
                              "\"BOOKMARK\"} 1"));
  EXPECT_THAT(text, HasSubstr("reflector_relists_total{name=\"pods\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("reflector_watch_restarts_total{name=\"pods\"} 4"));
  EXPECT_THAT(text, HasSubstr("reflector_last_resource_version{name=\"pods\"} "
                              "123456"));
  EXPECT_THAT(text, HasSubstr("reflector_dropped_objects_total{name=\"pods\","
                              "reason=\"kind_mismatch\"} 1"));
  EXPECT_THAT(text, HasSubstr("informer_handler_queue_depth{handler=\"logger\","
                              "name=\"pods\"} 3"));
}

TEST(PrometheusCacheMetricsTest, InstrumentsOfOneNameShareTheirSeries) {
  prometheus::Registry registry;
  PrometheusCacheMetrics provider(registry);
  auto a = provider.NewRelistsMetric("cms");
  auto b = provider.NewRelistsMetric("cms");
  a->Inc();
  b->Inc();
  const std::string text =
      prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_THAT(text, HasSubstr("reflector_relists_total{name=\"cms\"} 2"));
}

}  // namespace
}  // namespace kcr::metrics
