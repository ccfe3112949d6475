#include "runtime/workqueue/default_rate_limiters.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"

namespace kcr::workqueue {
namespace {

TEST(ItemExponentialFailureRateLimiterTest, DoublesPerFailureUpToTheCap) {
  ItemExponentialFailureRateLimiter<std::string> limiter(absl::Milliseconds(1),
                                                         absl::Seconds(1));
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(1));
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(2));
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(4));
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(8));
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(16));
  EXPECT_EQ(limiter.NumRequeues("one"), 5);
  // Items are independent.
  EXPECT_EQ(limiter.When("two"), absl::Milliseconds(1));
  EXPECT_EQ(limiter.NumRequeues("two"), 1);

  limiter.Forget("one");
  EXPECT_EQ(limiter.NumRequeues("one"), 0);
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(1));
}

TEST(ItemExponentialFailureRateLimiterTest,
     ClientGoDefaultsReachTheCapAtTheNineteenthCall) {
  ItemExponentialFailureRateLimiter<std::string> limiter(absl::Milliseconds(5),
                                                         absl::Seconds(1000));
  absl::Duration last;
  for (int i = 0; i < 18; ++i) last = limiter.When("x");
  EXPECT_EQ(last, absl::Milliseconds(655360));  // 5 ms * 2^17
  EXPECT_EQ(limiter.When("x"), absl::Seconds(1000));
}

TEST(ItemExponentialFailureRateLimiterTest, NeverOverflowsWhateverTheCount) {
  ItemExponentialFailureRateLimiter<std::string> limiter(absl::Milliseconds(5),
                                                         absl::Seconds(1000));
  for (int i = 0; i < 5000; ++i) {
    const absl::Duration d = limiter.When("x");
    ASSERT_GE(d, absl::ZeroDuration());
    ASSERT_LE(d, absl::Seconds(1000));
  }
  EXPECT_EQ(limiter.When("x"), absl::Seconds(1000));

  ItemExponentialFailureRateLimiter<std::string> zero(absl::ZeroDuration(),
                                                      absl::Seconds(1));
  for (int i = 0; i < 2000; ++i)
    ASSERT_EQ(zero.When("x"), absl::ZeroDuration());

  ItemExponentialFailureRateLimiter<std::string> uncapped(
      absl::Seconds(1), absl::InfiniteDuration());
  for (int i = 0; i < 200; ++i)
    ASSERT_GT(uncapped.When("x"), absl::ZeroDuration());
}

TEST(BucketRateLimiterTest, AllowsTheBurstThenPacesAtQps) {
  testing::FakeClock clock;
  BucketRateLimiter<std::string> limiter(10, 3, &clock);
  EXPECT_EQ(limiter.When("a"), absl::ZeroDuration());
  EXPECT_EQ(limiter.When("b"), absl::ZeroDuration());
  EXPECT_EQ(limiter.When("c"), absl::ZeroDuration());
  // Shared by all items: the fourth waits one token (100 ms), the fifth two.
  EXPECT_EQ(limiter.When("d"), absl::Milliseconds(100));
  EXPECT_EQ(limiter.When("e"), absl::Milliseconds(200));
  EXPECT_EQ(limiter.NumRequeues("a"), 0);
  limiter.Forget("a");
  // After the debt is paid and a second more, one token is back.
  clock.Advance(absl::Milliseconds(300));
  EXPECT_EQ(limiter.When("f"), absl::ZeroDuration());
  EXPECT_EQ(limiter.When("g"), absl::Milliseconds(100));
}

TEST(BucketRateLimiterTest, RefillNeverExceedsTheBurst) {
  testing::FakeClock clock;
  BucketRateLimiter<std::string> limiter(100, 2, &clock);
  clock.Advance(absl::Hours(1));
  EXPECT_EQ(limiter.When("a"), absl::ZeroDuration());
  EXPECT_EQ(limiter.When("a"), absl::ZeroDuration());
  EXPECT_EQ(limiter.When("a"), absl::Milliseconds(10));
}

TEST(ItemFastSlowRateLimiterTest, FastForTheFirstAttemptsThenSlow) {
  ItemFastSlowRateLimiter<std::string> limiter(absl::Milliseconds(5),
                                               absl::Seconds(10), 3);
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(5));
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(5));
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(5));
  EXPECT_EQ(limiter.When("one"), absl::Seconds(10));
  EXPECT_EQ(limiter.When("one"), absl::Seconds(10));
  EXPECT_EQ(limiter.NumRequeues("one"), 5);
  EXPECT_EQ(limiter.When("two"), absl::Milliseconds(5));
  limiter.Forget("one");
  EXPECT_EQ(limiter.NumRequeues("one"), 0);
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(5));
}

TEST(MaxOfRateLimiterTest, AsksEveryLimiterAndReturnsTheLongest) {
  std::vector<std::unique_ptr<RateLimiter<std::string>>> limiters;
  limiters.push_back(
      std::make_unique<ItemExponentialFailureRateLimiter<std::string>>(
          absl::Milliseconds(1), absl::Seconds(1)));
  limiters.push_back(std::make_unique<ItemFastSlowRateLimiter<std::string>>(
      absl::Milliseconds(5), absl::Seconds(3), 3));
  MaxOfRateLimiter<std::string> limiter(std::move(limiters));
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(5));
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(5));
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(5));
  EXPECT_EQ(limiter.When("one"), absl::Seconds(3));
  EXPECT_EQ(limiter.NumRequeues("one"), 4);
  limiter.Forget("one");
  EXPECT_EQ(limiter.NumRequeues("one"), 0);
  EXPECT_EQ(limiter.When("one"), absl::Milliseconds(5));
}

TEST(WithMaxWaitRateLimiterTest, CapsTheDelay) {
  WithMaxWaitRateLimiter<std::string> limiter(
      std::make_unique<ItemExponentialFailureRateLimiter<std::string>>(
          absl::Seconds(1), absl::Hours(1)),
      absl::Seconds(3));
  EXPECT_EQ(limiter.When("a"), absl::Seconds(1));
  EXPECT_EQ(limiter.When("a"), absl::Seconds(2));
  EXPECT_EQ(limiter.When("a"), absl::Seconds(3));
  EXPECT_EQ(limiter.When("a"), absl::Seconds(3));
  EXPECT_EQ(limiter.NumRequeues("a"), 4);
  limiter.Forget("a");
  EXPECT_EQ(limiter.NumRequeues("a"), 0);
}

TEST(DefaultControllerRateLimiterTest,
     IsExponentialFrom5msWithA10QpsBurst100Bucket) {
  testing::FakeClock clock;
  auto limiter = DefaultControllerRateLimiter<std::string>(&clock);
  EXPECT_EQ(limiter->When("a"), absl::Milliseconds(5));
  EXPECT_EQ(limiter->When("a"), absl::Milliseconds(10));
  // Spend the rest of the burst of 100 on other items.
  for (int i = 0; i < 98; ++i) limiter->When("other" + std::to_string(i));
  // The bucket is now empty: 10 qps means 100 ms, longer than a's 20 ms.
  EXPECT_EQ(limiter->When("a"), absl::Milliseconds(100));
}

}  // namespace
}  // namespace kcr::workqueue
