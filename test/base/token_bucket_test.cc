#include "base/token_bucket.h"

#include <limits>
#include <thread>

#include "base/context.h"
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
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
}

TEST(TokenBucketTest, ClockSteppingBackRefillsNothing) {
  testing::FakeClock clock;
  TokenBucket bucket(10, 1, &clock);
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  clock.Advance(absl::Seconds(-5));
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(100));
}

TEST(TokenBucketTest, WaitTakesATokenWhenItIsDue) {
  testing::FakeClock clock;
  TokenBucket bucket(5, 1, &clock);
  EXPECT_TRUE(bucket.Wait(Context::Background()).ok());  // from the burst
  EXPECT_EQ(clock.ArmedTimers(), 0);
  absl::Status got = absl::UnknownError("not run");
  std::thread waiter([&] { got = bucket.Wait(Context::Background()); });
  clock.BlockUntilTimers(1);
  clock.Advance(absl::Milliseconds(200));
  waiter.join();
  EXPECT_TRUE(got.ok());
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(200));
}

TEST(TokenBucketTest, CancelledWaitGivesItsTokenBack) {
  testing::FakeClock clock;
  TokenBucket bucket(5, 1, &clock);
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  auto [ctx, cancel] = WithCancel(Context::Background());
  absl::Status got;
  std::thread waiter([&, ctx = ctx] { got = bucket.Wait(ctx); });
  clock.BlockUntilTimers(1);
  cancel();
  waiter.join();
  EXPECT_EQ(got.code(), absl::StatusCode::kCancelled);
  // The next caller waits as if the cancelled one had never asked.
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(200));
  EXPECT_EQ(bucket.Wait(ctx).code(), absl::StatusCode::kCancelled);
}

TEST(TokenBucketTest, WaitBeyondTheDeadlineFailsAtOnce) {
  testing::FakeClock clock;
  TokenBucket bucket(1, 1, &clock);
  EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
  auto [ctx, cancel] =
      WithTimeout(Context::Background(), absl::Milliseconds(500), &clock);
  EXPECT_EQ(bucket.Wait(ctx).code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(ctx.done());
  EXPECT_EQ(bucket.Reserve(), absl::Seconds(1));  // the token came back
  cancel();
}

TEST(TokenBucketTest, ZeroRateWaitsOnlyForTheContext) {
  testing::FakeClock clock;
  TokenBucket bucket(0, 0, &clock);
  auto [ctx, cancel] = WithCancel(Context::Background());
  absl::Status got;
  std::thread waiter([&, ctx = ctx] { got = bucket.Wait(ctx); });
  clock.BlockUntilTimers(1);
  clock.Advance(absl::Hours(24));
  cancel();
  waiter.join();
  EXPECT_EQ(got.code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace kcr
