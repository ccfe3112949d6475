#include "runtime/base/token_bucket.h"

#include <limits>

#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"

namespace kcr {
namespace {

TEST(TokenBucketTest, StartsFullThenGoesIntoDebt) {
  testing::FakeClock clock;
  TokenBucket bucket(5, 2, &clock);
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(200));
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(400));
  clock.Advance(absl::Milliseconds(400));
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(200));
}

TEST(TokenBucketTest, ZeroRateAllowsOnlyTheBurst) {
  testing::FakeClock clock;
  TokenBucket bucket(0, 1, &clock);
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  EXPECT_EQ(bucket.Reserve(), absl::InfiniteDuration());
  clock.Advance(absl::Hours(1));
  EXPECT_EQ(bucket.Reserve(), absl::InfiniteDuration());
}

TEST(TokenBucketTest, InfiniteRateNeverWaits) {
  TokenBucket bucket(std::numeric_limits<double>::infinity(), 0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
}

TEST(TokenBucketTest, ClockSteppingBackRefillsNothing) {
  testing::FakeClock clock;
  TokenBucket bucket(10, 1, &clock);
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  clock.Advance(absl::Seconds(-5));
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(100));
}

}  // namespace
}  // namespace kcr
