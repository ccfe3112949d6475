#include "runtime/workqueue/rate_limiting_queue.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"

namespace kcr::workqueue {
namespace {

TEST(RateLimitingQueueTest, AddRateLimitedBacksOffPerItemAndForgetResets) {
  testing::FakeClock clock;
  QueueOptions options;
  options.clock = &clock;
  RateLimitingQueue<std::string> q(
      std::make_unique<ItemExponentialFailureRateLimiter<std::string>>(
          absl::Milliseconds(1), absl::Seconds(1)),
      options);

  q.AddRateLimited("a");  // 1 ms
  q.AddRateLimited("a");  // 2 ms, but the 1 ms entry is earlier and wins
  EXPECT_EQ(q.NumRequeues("a"), 2);
  EXPECT_EQ(q.WaitingLen(), 1u);
  clock.Advance(absl::Milliseconds(1));
  ASSERT_EQ(*q.Get(), "a");
  q.Done("a");

  q.AddRateLimited("a");  // third failure: 4 ms
  clock.BlockUntilWaiters(1);
  clock.Advance(absl::Milliseconds(3));
  clock.BlockUntilWaiters(1);
  EXPECT_EQ(q.Len(), 0u);
  clock.Advance(absl::Milliseconds(1));
  ASSERT_EQ(*q.Get(), "a");
  q.Done("a");

  q.Forget("a");
  EXPECT_EQ(q.NumRequeues("a"), 0);
}

TEST(RateLimitingQueueTest, DefaultsToTheControllerRateLimiter) {
  testing::FakeClock clock;
  QueueOptions options;
  options.clock = &clock;
  RateLimitingQueue<std::string> q(nullptr, options);
  q.AddRateLimited("a");  // 5 ms per-item; the bucket has burst to spare
  EXPECT_EQ(q.NumRequeues("a"), 1);
  clock.Advance(absl::Milliseconds(5));
  ASSERT_EQ(*q.Get(), "a");
  q.Done("a");
  q.Forget("a");
  EXPECT_EQ(q.NumRequeues("a"), 0);
}

}  // namespace
}  // namespace kcr::workqueue
