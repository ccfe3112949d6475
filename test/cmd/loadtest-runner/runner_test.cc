#include "cmd/loadtest-runner/runner.h"

#include <vector>

#include "gtest/gtest.h"

namespace kcr::loadtest {
namespace {

TEST(SummarizeTest, NearestRankPercentiles) {
  std::vector<absl::Duration> latencies;
  // 100 .. 1 ms, shuffled by the reverse order.
  for (int i = 100; i >= 1; --i) latencies.push_back(absl::Milliseconds(i));
  Summary s = Summarize(latencies, 7);
  EXPECT_EQ(s.requests, 100);
  EXPECT_EQ(s.failures, 7);
  EXPECT_DOUBLE_EQ(s.p50_ms, 50);
  EXPECT_DOUBLE_EQ(s.p90_ms, 90);
  EXPECT_DOUBLE_EQ(s.p99_ms, 99);
}

TEST(SummarizeTest, FewSamples) {
  Summary one = Summarize({absl::Milliseconds(3)}, 0);
  EXPECT_DOUBLE_EQ(one.p50_ms, 3);
  EXPECT_DOUBLE_EQ(one.p99_ms, 3);
  Summary two = Summarize({absl::Milliseconds(4), absl::Milliseconds(2)}, 1);
  EXPECT_DOUBLE_EQ(two.p50_ms, 2);
  EXPECT_DOUBLE_EQ(two.p90_ms, 4);
  Summary none = Summarize({}, 0);
  EXPECT_EQ(none.requests, 0);
  EXPECT_DOUBLE_EQ(none.p99_ms, 0);
}

TEST(SummaryJsonTest, OneLine) {
  Summary s;
  s.requests = 3;
  s.failures = 1;
  s.p50_ms = 1.5;
  s.p90_ms = 2;
  s.p99_ms = 2.25;
  EXPECT_EQ(SummaryJson(s),
            "{\"requests\":3,\"failures\":1,\"p50Ms\":1.500,\"p90Ms\":2.000,"
            "\"p99Ms\":2.250}");
}

TEST(ValidateOptionsTest, NamesTheBadField) {
  RunnerOptions ok;
  ok.host = "web";
  EXPECT_TRUE(ValidateOptions(ok).ok());

  RunnerOptions o = ok;
  o.method = "get";
  EXPECT_NE(ValidateOptions(o).message().find("method"), std::string::npos);
  o = ok;
  o.method = "GE T";
  EXPECT_FALSE(ValidateOptions(o).ok());
  o = ok;
  o.host = "";
  EXPECT_NE(ValidateOptions(o).message().find("service name"),
            std::string::npos);
  o = ok;
  o.port = 70000;
  EXPECT_NE(ValidateOptions(o).message().find("port"), std::string::npos);
  o = ok;
  o.path = "x";
  EXPECT_NE(ValidateOptions(o).message().find("path"), std::string::npos);
  o = ok;
  o.path = "/a b";
  EXPECT_FALSE(ValidateOptions(o).ok());
  o = ok;
  o.repeat = 0;
  EXPECT_NE(ValidateOptions(o).message().find("repeat"), std::string::npos);
}

}  // namespace
}  // namespace kcr::loadtest
