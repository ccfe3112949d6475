#include "runtime/workqueue/delaying_queue.h"

#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/workqueue/fake_metrics.h"

namespace kcr::workqueue {
namespace {

QueueOptions WithClock(const Clock* clock) {
  QueueOptions options;
  options.clock = clock;
  return options;
}

TEST(DelayingQueueTest, AddsAfterTheDelayOnTheInjectedClock) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  q.AddAfter("a", absl::Milliseconds(50));
  EXPECT_EQ(q.WaitingLen(), 1u);
  clock.BlockUntilWaiters(1);
  EXPECT_EQ(q.Len(), 0u);

  clock.Advance(absl::Milliseconds(49));
  clock.BlockUntilWaiters(1);  // the timer thread saw 49 ms and slept again
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_EQ(q.WaitingLen(), 1u);

  clock.Advance(absl::Milliseconds(1));
  auto item = q.Get();  // blocks until the timer thread adds it
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(*item, "a");
  EXPECT_EQ(q.WaitingLen(), 0u);
}

TEST(DelayingQueueTest, NonPositiveDelayAddsAtOnce) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  q.AddAfter("zero", absl::ZeroDuration());
  q.AddAfter("negative", absl::Seconds(-1));
  EXPECT_EQ(q.Len(), 2u);
  EXPECT_EQ(q.WaitingLen(), 0u);
}

TEST(DelayingQueueTest, SecondAddAfterKeepsTheEarlierTime) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  q.AddAfter("a", absl::Seconds(10));
  q.AddAfter("a", absl::Seconds(5));   // earlier: wins
  q.AddAfter("a", absl::Seconds(20));  // later: ignored
  EXPECT_EQ(q.WaitingLen(), 1u);

  clock.Advance(absl::Seconds(5));
  ASSERT_EQ(*q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.WaitingLen(), 0u);

  // The superseded 10 s and 20 s entries add nothing.
  clock.Advance(absl::Seconds(20));
  clock.BlockUntilWaiters(1);
  EXPECT_EQ(q.Len(), 0u);
}

TEST(DelayingQueueTest, AnEarlierItemWakesTheSleepingTimer) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  q.AddAfter("late", absl::Hours(1));
  clock.Advance(absl::Milliseconds(1));
  clock.BlockUntilWaiters(1);  // asleep until "late" is due
  q.AddAfter("soon", absl::Seconds(1));
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(*q.Get(), "soon");
  EXPECT_EQ(q.WaitingLen(), 1u);
}

// A later AddAfter of an item waiting for an earlier time is dropped, even
// when the earlier time comes before the timer looks at the later AddAfter:
// the item is added once, not kept waiting a second time.
TEST(DelayingQueueTest, ALaterAddAfterOfAWaitingItemIsDroppedForGood) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  q.AddAfter("a", absl::Milliseconds(5));
  EXPECT_EQ(q.WaitingLen(), 1u);            // folded: "a" waits until 5 ms
  q.AddAfter("a", absl::Milliseconds(30));  // later: to be dropped
  clock.Advance(absl::Milliseconds(5));
  clock.BlockUntilWaiters(1);
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(q.WaitingLen(), 0u);
}

// An Add made before an item came due is ahead of it.
TEST(DelayingQueueTest, AddsMadeBeforeAnItemCameDueAreAheadOfIt) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  q.AddAfter("due", absl::Milliseconds(5));
  EXPECT_EQ(q.WaitingLen(), 1u);
  q.Add("first");
  clock.Advance(absl::Milliseconds(5));
  clock.BlockUntilWaiters(1);
  EXPECT_EQ(*q.Get(), "first");
  EXPECT_EQ(*q.Get(), "due");
}

TEST(DelayingQueueTest, RepeatedAddAftersOfOneItemWaitOnce) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  for (int i = 0; i < 3 * static_cast<int>(internal::kInboxLimit); ++i) {
    q.AddAfter("same", absl::Minutes(1) + absl::Milliseconds(i % 5));
  }
  EXPECT_EQ(q.WaitingLen(), 1u);
  clock.Advance(absl::Minutes(1));
  EXPECT_EQ(*q.Get(), "same");
  clock.Advance(absl::Seconds(1));
  clock.BlockUntilWaiters(1);
  EXPECT_EQ(q.Len(), 0u) << "the later times were superseded";
  EXPECT_EQ(q.WaitingLen(), 0u);
}

TEST(DelayingQueueTest, WaitingAndQueuedAreIndependent) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  q.AddAfter("x", absl::Seconds(1));
  q.Add("x");  // queued now, and still waiting
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(q.WaitingLen(), 1u);
  ASSERT_EQ(*q.Get(), "x");
  q.Done("x");  // finished, but its delay has not passed
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_EQ(q.WaitingLen(), 1u);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(*q.Get(), "x") << "added again when its delay passed";
  q.Done("x");
  EXPECT_EQ(q.WaitingLen(), 0u);
}

TEST(DelayingQueueTest, ADueItemBeingProcessedIsQueuedAgainOnDone) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  q.Add("x");
  ASSERT_EQ(*q.Get(), "x");
  q.AddAfter("x", absl::Seconds(1));
  clock.Advance(absl::Seconds(1));
  while (q.WaitingLen() != 0) clock.BlockUntilWaiters(1);
  EXPECT_EQ(q.Len(), 0u) << "being processed: not queued twice";
  q.Done("x");
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(*q.Get(), "x");
}

TEST(DelayingQueueTest, ReadyItemsComeOutInReadyOrder) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  q.AddAfter("third", absl::Seconds(3));
  q.AddAfter("first", absl::Seconds(1));
  q.AddAfter("second", absl::Seconds(2));
  q.AddAfter("fourth", absl::Seconds(4));
  clock.Advance(absl::Seconds(10));
  EXPECT_EQ(*q.Get(), "first");
  EXPECT_EQ(*q.Get(), "second");
  EXPECT_EQ(*q.Get(), "third");
  EXPECT_EQ(*q.Get(), "fourth");
}

TEST(DelayingQueueTest, ItemsBecomeReadyOneByOne) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  for (int i = 1; i <= 5; ++i) q.AddAfter(std::to_string(i), absl::Seconds(i));
  for (int i = 1; i <= 5; ++i) {
    clock.Advance(absl::Seconds(1));
    EXPECT_EQ(*q.Get(), std::to_string(i));
    clock.BlockUntilWaiters(1);
    EXPECT_EQ(q.Len(), 0u);
    EXPECT_EQ(q.WaitingLen(), static_cast<size_t>(5 - i));
  }
}

TEST(DelayingQueueTest, AddAfterCollapsesWithAQueuedItem) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  q.Add("a");
  q.AddAfter("a", absl::Seconds(1));
  clock.Advance(absl::Seconds(1));
  clock.BlockUntilWaiters(1);
  EXPECT_EQ(q.Len(), 1u);
}

TEST(DelayingQueueTest, ShutDownStopsTheTimerPromptlyAndIgnoresNewItems) {
  DelayingQueue<std::string> q;  // real clock
  q.AddAfter("far", absl::Hours(1));
  q.ShutDown();
  q.AddAfter("late", absl::Milliseconds(1));
  EXPECT_TRUE(q.ShuttingDown());
  EXPECT_FALSE(q.Get().has_value());
  // The destructor joins the timer thread; with an hour-long wait pending it
  // returns only because ShutDown woke it.
}

TEST(DelayingQueueTest, CountsRetriesForEveryAddAfter) {
  testing::FakeClock clock;
  FakeMetricsProvider provider;
  QueueOptions options;
  options.name = "retrying";
  options.metrics_provider = &provider;
  options.clock = &clock;
  DelayingQueue<std::string> q(options);
  q.AddAfter("a", absl::ZeroDuration());
  q.AddAfter("b", absl::Seconds(1));
  EXPECT_EQ(provider.Value("retries", "retrying"), 2);
}

TEST(DelayingQueueTest, ManyConcurrentAddAftersAllArrive) {
  testing::FakeClock clock;
  DelayingQueue<std::string> q(WithClock(&clock));
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < 500; ++i) {
        q.AddAfter(std::to_string(p) + "/" + std::to_string(i),
                   absl::Milliseconds(1 + i % 7));
      }
    });
  }
  for (auto& t : producers) t.join();
  clock.Advance(absl::Milliseconds(10));
  for (int n = 0; n < 2000; ++n) {
    auto item = q.Get();
    ASSERT_TRUE(item.has_value());
    q.Done(*item);
  }
  EXPECT_EQ(q.WaitingLen(), 0u);
}

}  // namespace
}  // namespace kcr::workqueue
