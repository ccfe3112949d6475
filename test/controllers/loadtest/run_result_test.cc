#include "controllers/loadtest/run_result.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr::loadtest {
namespace {

using LoadTest = loadtest::LoadTest;
using ::testing::HasSubstr;

TEST(ParseSummaryTest, ReadsWhatTheRunnerWrites) {
  auto r = ParseSummary(
      "web-r1-0",
      "{\"requests\":100,\"failures\":3,\"p50Ms\":1.500,\"p90Ms\":4.000,"
      "\"p99Ms\":9.250}\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->pod, "web-r1-0");
  EXPECT_EQ(r->requests, 100);
  EXPECT_EQ(r->failures, 3);
  ASSERT_TRUE(r->latency_ms.has_value());
  EXPECT_EQ(r->latency_ms->p50, 1.5);
  EXPECT_EQ(r->latency_ms->p90, 4.0);
  EXPECT_EQ(r->latency_ms->p99, 9.25);
  EXPECT_FALSE(r->latency_ms->max.has_value());
}

TEST(ParseSummaryTest, IgnoresUnknownMembersAndAllowsNoPercentiles) {
  auto r = ParseSummary("p", R"({"requests":0,"failures":0,"extra":"x"})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->requests, 0);
  EXPECT_FALSE(r->latency_ms.has_value());
}

TEST(ParseSummaryTest, RefusesWhatIsNotASummary) {
  EXPECT_THAT(ParseSummary("p", "Error: boom").status().message(),
              HasSubstr("not JSON"));
  EXPECT_THAT(ParseSummary("p", "[1]").status().message(),
              HasSubstr("not a JSON object"));
  EXPECT_THAT(ParseSummary("p", R"({"failures":0})").status().message(),
              HasSubstr("no \"requests\""));
  EXPECT_THAT(
      ParseSummary("p", R"({"requests":-1,"failures":0})").status().message(),
      HasSubstr("\"requests\" must be a non-negative integer"));
  EXPECT_THAT(
      ParseSummary("p", R"({"requests":1.5,"failures":0})").status().message(),
      HasSubstr("\"requests\""));
  EXPECT_THAT(
      ParseSummary("p", R"({"requests":1,"failures":2})").status().message(),
      HasSubstr("more failures than requests"));
  EXPECT_THAT(ParseSummary("p", R"({"requests":1,"failures":0,"p50Ms":"x"})")
                  .status()
                  .message(),
              HasSubstr("\"p50Ms\""));
  EXPECT_THAT(ParseSummary("p", R"({"requests":1,"failures":0,"p99Ms":-2})")
                  .status()
                  .message(),
              HasSubstr("\"p99Ms\""));
}

LoadTest::PodResult Pod(const char* name, int64_t requests, int64_t failures,
                        double p50, double p90, double p99) {
  LoadTest::PodResult r;
  r.pod = name;
  r.requests = requests;
  r.failures = failures;
  r.latency_ms = LoadTest::Latency{p50, p90, p99, std::nullopt};
  return r;
}

TEST(AggregateTest, SumsCountsAndWeighsPercentilesByRequests) {
  LoadTest::Result r =
      Aggregate({Pod("a", 100, 1, 10, 20, 30), Pod("b", 300, 2, 20, 40, 70)});
  EXPECT_EQ(r.requests, 400);
  EXPECT_EQ(r.failures, 3);
  ASSERT_TRUE(r.latency_ms.has_value());
  EXPECT_DOUBLE_EQ(*r.latency_ms->p50, (100 * 10 + 300 * 20) / 400.0);
  EXPECT_DOUBLE_EQ(*r.latency_ms->p90, (100 * 20 + 300 * 40) / 400.0);
  EXPECT_DOUBLE_EQ(*r.latency_ms->p99, (100 * 30 + 300 * 70) / 400.0);
  EXPECT_FALSE(r.latency_ms->max.has_value());
  ASSERT_EQ(r.pods.size(), 2u);
  EXPECT_EQ(r.pods[0].pod, "a");
  EXPECT_EQ(r.pods[1].pod, "b");
  EXPECT_EQ(CountWithoutSummary(r), 0);
}

TEST(AggregateTest, PodsWithoutSummaryAreListedNotCounted) {
  LoadTest::PodResult none;
  none.pod = "c";
  LoadTest::Result r = Aggregate({Pod("a", 10, 0, 5, 5, 5), none});
  EXPECT_EQ(r.requests, 10);
  EXPECT_EQ(r.failures, 0);
  EXPECT_DOUBLE_EQ(*r.latency_ms->p99, 5);
  EXPECT_EQ(CountWithoutSummary(r), 1);
  ASSERT_EQ(r.pods.size(), 2u);
  EXPECT_FALSE(r.pods[1].requests.has_value());
}

TEST(AggregateTest, NoSummaryAtAllLeavesTheTotalsAbsent) {
  LoadTest::PodResult a, b;
  a.pod = "a";
  b.pod = "b";
  LoadTest::Result r = Aggregate({a, b});
  EXPECT_FALSE(r.requests.has_value());
  EXPECT_FALSE(r.failures.has_value());
  EXPECT_FALSE(r.latency_ms.has_value());
  EXPECT_EQ(CountWithoutSummary(r), 2);
}

TEST(AggregateTest, PodsWithZeroRequestsWeighNothing) {
  LoadTest::Result r =
      Aggregate({Pod("a", 0, 0, 100, 100, 100), Pod("b", 4, 0, 1, 2, 3)});
  EXPECT_EQ(r.requests, 4);
  EXPECT_DOUBLE_EQ(*r.latency_ms->p50, 1);
  EXPECT_DOUBLE_EQ(*r.latency_ms->p99, 3);
}

// The aggregate round-trips through the LoadTest's JSON (status.result is
// what the CRD schema keeps).
TEST(AggregateTest, FitsTheSchema) {
  rapidjson::Document doc;
  doc.Parse(R"({"apiVersion":"example.org/v1","kind":"LoadTest",
      "metadata":{"name":"x"},
      "spec":{"replicas":1,"test":{"serviceName":"web"}}})");
  auto parsed = LoadTest::FromJson(doc);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  LoadTest lt = *parsed;
  LoadTest::Status s;
  s.state = LoadTest::kFinished;
  s.result = Aggregate({Pod("a", 10, 1, 1, 2, 3)});
  lt.status = s;
  auto back = LoadTest::FromJson(lt.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->status, lt.status);
  EXPECT_THAT(lt.Validate(), ::testing::IsEmpty());
}

}  // namespace
}  // namespace kcr::loadtest
