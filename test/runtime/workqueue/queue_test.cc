#include "runtime/workqueue/queue.h"

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/workqueue/fake_metrics.h"

namespace kcr::workqueue {
namespace {

TEST(QueueTest, HandsItemsOutInTheOrderAdded) {
  Queue<std::string> q;
  q.Add("a");
  q.Add("b");
  q.Add("c");
  EXPECT_EQ(q.Len(), 3u);
  EXPECT_EQ(*q.Get(), "a");
  EXPECT_EQ(*q.Get(), "b");
  EXPECT_EQ(*q.Get(), "c");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(QueueTest, RepeatedAddsBeforeProcessingCollapse) {
  Queue<std::string> q;
  q.Add("a");
  q.Add("b");
  q.Add("a");
  q.Add("a");
  EXPECT_EQ(q.Len(), 2u);
  EXPECT_EQ(*q.Get(), "a");
  EXPECT_EQ(*q.Get(), "b");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(QueueTest, ItemBeingProcessedIsNotHandedOutAgainUntilDone) {
  Queue<std::string> q;
  q.Add("a");
  ASSERT_EQ(*q.Get(), "a");
  q.Add("a");  // re-added while processing
  EXPECT_EQ(q.Len(), 0u) << "must not be queued while processing";
  q.Add("a");  // still collapses
  q.Done("a");
  EXPECT_EQ(q.Len(), 1u) << "queued again on Done";
  EXPECT_EQ(*q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(QueueTest, DoneWithoutReAddForgetsTheItem) {
  Queue<std::string> q;
  q.Add("a");
  ASSERT_EQ(*q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.Len(), 0u);
  q.Add("a");  // a fresh add after Done is a new item
  EXPECT_EQ(q.Len(), 1u);
}

TEST(QueueTest, DoneForAnItemNotBeingProcessedIsIgnored) {
  Queue<std::string> q;
  q.Done("never-added");
  q.Add("a");
  q.Done("a");  // queued, not processing
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(*q.Get(), "a");
}

TEST(QueueTest, WorksWithNonStringKeys) {
  Queue<int> q;
  for (int i = 0; i < 1000; ++i) q.Add(i % 100);
  EXPECT_EQ(q.Len(), 100u);
  for (int i = 0; i < 100; ++i) {
    auto item = q.Get();
    ASSERT_TRUE(item.has_value());
    EXPECT_EQ(*item, i);
    q.Done(*item);
  }
}

TEST(QueueTest, ReusesSlotsAcrossManyGenerations) {
  Queue<std::string> q;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 200; ++i) q.Add(absl::StrCat("k", i));
    for (int i = 0; i < 200; ++i) {
      auto item = q.Get();
      ASSERT_TRUE(item.has_value());
      EXPECT_EQ(*item, absl::StrCat("k", i));
      q.Done(*item);
    }
  }
  EXPECT_EQ(q.Len(), 0u);
}

TEST(QueueTest, ShutDownHandsOutQueuedItemsThenReportsShutdown) {
  Queue<std::string> q;
  q.Add("a");
  q.Add("b");
  q.ShutDown();
  EXPECT_TRUE(q.ShuttingDown());
  q.Add("c");  // ignored after shutdown
  EXPECT_EQ(*q.Get(), "a");
  EXPECT_EQ(*q.Get(), "b");
  EXPECT_FALSE(q.Get().has_value());
  EXPECT_FALSE(q.Get().has_value());
}

TEST(QueueTest, ShutDownWakesABlockedGet) {
  Queue<std::string> q;
  std::atomic<bool> returned{false};
  std::thread consumer([&] {
    EXPECT_FALSE(q.Get().has_value());
    returned = true;
  });
  q.ShutDown();
  consumer.join();
  EXPECT_TRUE(returned);
}

TEST(QueueTest, GetBlocksUntilAnItemIsAdded) {
  Queue<std::string> q;
  std::thread consumer([&] {
    auto item = q.Get();
    ASSERT_TRUE(item.has_value());
    EXPECT_EQ(*item, "late");
    q.Done(*item);
  });
  q.Add("late");
  consumer.join();
}

TEST(QueueTest, ShutDownWithDrainWaitsForItemsInFlight) {
  Queue<std::string> q;
  q.Add("a");
  q.Add("b");
  ASSERT_EQ(*q.Get(), "a");
  ASSERT_EQ(*q.Get(), "b");
  Notification drained;
  std::thread drainer([&] {
    q.ShutDownWithDrain();
    drained.Notify();
  });
  // The drainer cannot finish while two items are in flight.
  while (!q.ShuttingDown()) std::this_thread::yield();
  EXPECT_FALSE(drained.WaitForNotificationWithTimeout(absl::Milliseconds(20)));
  q.Done("a");
  EXPECT_FALSE(drained.WaitForNotificationWithTimeout(absl::Milliseconds(20)));
  q.Done("b");
  drained.WaitForNotification();
  drainer.join();
}

TEST(QueueTest, ShutDownWithDrainReturnsAtOnceWhenNothingIsInFlight) {
  Queue<std::string> q;
  q.Add("waiting");  // queued but not taken: not waited for
  q.ShutDownWithDrain();
  EXPECT_TRUE(q.ShuttingDown());
}

TEST(QueueTest, ShutDownReleasesAShutDownWithDrain) {
  Queue<std::string> q;
  q.Add("a");
  ASSERT_EQ(*q.Get(), "a");
  Notification released;
  std::thread drainer([&] {
    q.ShutDownWithDrain();
    released.Notify();
  });
  // The worker never calls Done. A ShutDown issued before the drainer starts
  // waiting cannot release it, so keep shutting down until it returns.
  do {
    q.ShutDown();
  } while (!released.WaitForNotificationWithTimeout(absl::Milliseconds(5)));
  drainer.join();
}

TEST(QueueTest, ConcurrentAddsWhileProcessingAreNeverHandedOutTwiceAtOnce) {
  Queue<std::string> q;
  constexpr int kKeys = 16;
  constexpr int kAddsPerProducer = 20000;
  Mutex mu;
  std::set<std::string> in_flight;
  std::atomic<bool> violation{false};
  std::atomic<int> processed{0};

  std::vector<std::thread> consumers;
  for (int c = 0; c < 4; ++c) {
    consumers.emplace_back([&] {
      while (auto item = q.Get()) {
        {
          MutexLock lock(&mu);
          if (!in_flight.insert(*item).second) violation = true;
        }
        ++processed;
        {
          MutexLock lock(&mu);
          in_flight.erase(*item);
        }
        q.Done(*item);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < 3; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kAddsPerProducer; ++i) {
        q.Add(absl::StrCat("key-", (i + p) % kKeys));
      }
    });
  }
  for (auto& t : producers) t.join();
  // Every key added must be processed at least once after its last Add:
  // drain with ShutDownWithDrain only after the queue is empty.
  q.ShutDown();
  for (auto& t : consumers) t.join();
  EXPECT_FALSE(violation) << "an item was handed to two workers at once";
  EXPECT_GE(processed.load(), kKeys);
  EXPECT_LE(processed.load(), 3 * kAddsPerProducer);
}

TEST(QueueTest, ManyProducersAndConsumersLoseNothing) {
  Queue<std::string> q;
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 25000;
  std::atomic<int> processed{0};
  std::vector<std::thread> consumers;
  for (int c = 0; c < 4; ++c) {
    consumers.emplace_back([&] {
      while (auto item = q.Get()) {
        ++processed;
        q.Done(*item);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) q.Add(absl::StrCat(p, "/", i));
    });
  }
  for (auto& t : producers) t.join();
  q.ShutDown();
  for (auto& t : consumers) t.join();
  EXPECT_EQ(processed.load(), kProducers * kPerProducer);
}

TEST(QueueTest, ItemReAddedDuringProcessingIsProcessedAgainExactlyOnce) {
  Queue<std::string> q;
  q.Add("a");
  std::atomic<int> gets{0};
  Notification first_taken;
  Notification re_added;
  std::thread worker([&] {
    while (auto item = q.Get()) {
      if (++gets == 1) {
        first_taken.Notify();
        re_added.WaitForNotification();
      }
      q.Done(*item);
      if (gets == 2) break;
    }
  });
  first_taken.WaitForNotification();
  q.Add("a");
  q.Add("a");
  re_added.Notify();
  worker.join();
  EXPECT_EQ(gets.load(), 2);
  EXPECT_EQ(q.Len(), 0u);
}

TEST(QueueTest, DoneOutOfOrderAndFromAnotherThread) {
  Queue<std::string> q;
  q.Add("a");
  q.Add("b");
  q.Add("c");
  ASSERT_EQ(*q.Get(), "a");
  ASSERT_EQ(*q.Get(), "b");
  q.Add("a");   // re-added while processing
  q.Done("a");  // not this thread's last Get
  EXPECT_EQ(q.Len(), 2u) << "c, then a again";
  std::thread other([&] { q.Done("b"); });  // b was taken by this thread
  other.join();
  q.Add("b");
  EXPECT_EQ(q.Len(), 3u) << "b is a new item after its Done";
  EXPECT_EQ(*q.Get(), "c");
  EXPECT_EQ(*q.Get(), "a");
  EXPECT_EQ(*q.Get(), "b");
  q.Done("c");
  q.Done("a");
  q.Done("b");
  q.Done("b");  // a second Done is ignored
  EXPECT_EQ(q.Len(), 0u);
}

// Producers re-add a small set of keys while workers process them, with
// Done sometimes out of order: no key is ever processed by two workers at
// once, and every key added after its last Get is processed again.
TEST(QueueTest, ReAddsUnderContentionKeepEveryGuarantee) {
  Queue<int> q;
  constexpr int kKeys = 64;
  constexpr int kRounds = 20000;
  std::vector<std::atomic<int>> in_flight(kKeys);
  std::vector<std::atomic<int64_t>> last_add(kKeys);
  std::vector<std::atomic<int64_t>> last_start(kKeys);
  std::atomic<int64_t> clock{0};
  std::atomic<bool> overlap{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < 3; ++w) {
    workers.emplace_back([&, w] {
      std::vector<int> held;
      for (;;) {
        auto item = q.Get();
        if (!item) break;
        if (in_flight[*item].fetch_add(1) != 0) overlap = true;
        last_start[*item] = ++clock;
        held.push_back(*item);
        // Hold two items at times, and finish the older one first.
        if (held.size() == 2 || (w + *item) % 3 != 0) {
          for (int key : held) {
            in_flight[key].fetch_sub(1);
            q.Done(key);
          }
          held.clear();
        }
      }
      for (int key : held) {
        in_flight[key].fetch_sub(1);
        q.Done(key);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < 2; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kRounds; ++i) {
        const int key = (i * 7 + p) % kKeys;
        last_add[key] = ++clock;
        q.Add(key);
      }
    });
  }
  for (auto& t : producers) t.join();
  q.ShutDown();
  for (auto& t : workers) t.join();
  // A worker's Done may have queued a key again after the others had seen
  // the queue empty; ShutDown still hands such keys out.
  while (auto item = q.Get()) {
    last_start[*item] = ++clock;
    q.Done(*item);
  }
  EXPECT_FALSE(overlap.load());
  for (int key = 0; key < kKeys; ++key) {
    EXPECT_GT(last_start[key].load(), last_add[key].load()) << key;
  }
}

// Add A; Get -> A; Add A; Add B; Done A; Get: client-go hands out B (A,
// added while processed, is queued again at Done, behind B), with metrics
// or without.
TEST(QueueOrderTest, AnItemAddedWhileProcessedIsQueuedBehindEarlierAdds) {
  FakeMetricsProvider provider;
  for (const bool metered : {false, true}) {
    QueueOptions options;
    if (metered) {
      options.name = "order";
      options.metrics_provider = &provider;
    }
    Queue<std::string> q(options);
    q.Add("A");
    ASSERT_EQ(*q.Get(), "A");
    q.Add("A");
    q.Add("B");
    q.Done("A");
    EXPECT_EQ(*q.Get(), "B") << (metered ? "metered" : "unmetered");
    q.Done("B");
    EXPECT_EQ(*q.Get(), "A") << (metered ? "metered" : "unmetered");
    q.Done("A");
    EXPECT_EQ(q.Len(), 0u);
  }
}

// Add A; Add B; Add A; Get -> A: the second Add found A queued and
// collapsed, so A is not processed again after Done.
TEST(QueueOrderTest, AnAddThatFoundTheItemQueuedDoesNotQueueItAgain) {
  Queue<std::string> q;
  q.Add("A");
  EXPECT_EQ(q.Len(), 1u);  // A is queued, past the inbox
  q.Add("B");
  q.Add("A");  // collapses into the queued A
  ASSERT_EQ(*q.Get(), "A");
  q.Done("A");
  ASSERT_EQ(*q.Get(), "B");
  q.Done("B");
  EXPECT_EQ(q.Len(), 0u);
}

// Options of a queue named `name` that records into `provider`, on `clock`
// (null: the real clock).
QueueOptions Metered(std::string name, FakeMetricsProvider* provider,
                     const Clock* clock = nullptr) {
  QueueOptions options;
  options.name = std::move(name);
  options.metrics_provider = provider;
  options.clock = clock;
  return options;
}

TEST(QueueMetricsTest, RecordsClientGoInstrumentsWhenNamed) {
  testing::FakeClock clock;
  FakeMetricsProvider provider;
  {
    Queue<std::string> q(Metered("pods", &provider, &clock));
    q.Add("a");
    q.Add("a");  // collapsed: not an add
    q.Add("b");
    // Adds reach the instruments when they are folded in: on Len here.
    EXPECT_EQ(q.Len(), 2u);
    EXPECT_EQ(provider.Value("adds", "pods"), 2);
    EXPECT_EQ(provider.Value("depth", "pods"), 2);
    clock.Advance(absl::Seconds(3));
    ASSERT_EQ(*q.Get(), "a");
    // A worker's Get and Done reach the instruments in batches: on Len here.
    EXPECT_EQ(q.Len(), 1u);
    EXPECT_EQ(provider.Value("depth", "pods"), 1);
    EXPECT_EQ(provider.Observations("latency", "pods"),
              std::vector<double>{3.0});
    clock.Advance(absl::Seconds(2));
    // The updater refreshes the unfinished-work gauges every 500 ms.
    clock.BlockUntilWaiters(1);
    clock.Advance(absl::Milliseconds(500));
    clock.BlockUntilWaiters(1);
    EXPECT_DOUBLE_EQ(provider.Value("unfinished", "pods"), 2.5);
    EXPECT_DOUBLE_EQ(provider.Value("longest", "pods"), 2.5);
    q.Done("a");
    EXPECT_EQ(q.Len(), 1u);
    EXPECT_EQ(provider.Observations("work", "pods"), std::vector<double>{2.5});
  }
}

TEST(QueueMetricsTest, AddsReachTheInstrumentsWithinOneUpdatePeriod) {
  testing::FakeClock clock;
  FakeMetricsProvider provider;
  Queue<std::string> q(Metered("idle", &provider, &clock));
  clock.BlockUntilWaiters(1);  // the updater's first tick is behind it
  q.Add("a");
  q.Add("b");
  q.Add("a");
  // No worker calls Get or Len: the updater's next tick folds the adds in.
  clock.Advance(internal::kUnfinishedWorkUpdatePeriod);
  clock.BlockUntilWaiters(1);
  EXPECT_EQ(provider.Value("adds", "idle"), 2);
  EXPECT_EQ(provider.Value("depth", "idle"), 2);
}

TEST(QueueMetricsTest,
     WorkersObservationsReachTheInstrumentsWithinOneUpdatePeriod) {
  testing::FakeClock clock;
  FakeMetricsProvider provider;
  Queue<std::string> q(Metered("working", &provider, &clock));
  clock.BlockUntilWaiters(1);  // the updater's first tick is behind it
  q.Add("a");
  q.Add("b");
  ASSERT_EQ(q.Len(), 2u);  // folds the adds in: they count from now
  clock.Advance(absl::Milliseconds(100));
  ASSERT_EQ(*q.Get(), "a");  // "b" is still queued: the worker is not idle
  clock.Advance(absl::Milliseconds(300));
  q.Done("a");
  // No Len, no idle worker: the updater's next tick hands the batch over.
  clock.Advance(absl::Milliseconds(100));
  clock.BlockUntilWaiters(1);
  EXPECT_EQ(provider.Value("depth", "working"), 1);
  EXPECT_EQ(provider.Observations("latency", "working"),
            std::vector<double>{0.1});
  EXPECT_EQ(provider.Observations("work", "working"), std::vector<double>{0.3});
}

TEST(QueueMetricsTest, CountsStayConsistentUnderConcurrentUse) {
  FakeMetricsProvider provider;
  Queue<std::string> q(
      Metered("busy", &provider));  // real clock: the updater runs for real
  std::atomic<int> processed{0};
  std::vector<std::thread> consumers;
  for (int c = 0; c < 3; ++c) {
    consumers.emplace_back([&] {
      while (auto item = q.Get()) {
        ++processed;
        q.Done(*item);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < 2; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < 5000; ++i) q.Add(absl::StrCat(p, "/", i));
    });
  }
  for (auto& t : producers) t.join();
  q.ShutDown();
  for (auto& t : consumers) t.join();
  EXPECT_EQ(processed.load(), 10000);
  EXPECT_EQ(provider.Value("adds", "busy"), 10000);
  EXPECT_EQ(provider.Value("depth", "busy"), 0);
  EXPECT_EQ(provider.Observations("latency", "busy").size(), 10000u);
  EXPECT_EQ(provider.Observations("work", "busy").size(), 10000u);
}

TEST(QueueMetricsTest, UnnamedQueueCreatesNoInstruments) {
  FakeMetricsProvider provider;
  QueueOptions options;
  options.metrics_provider = &provider;
  Queue<std::string> q(options);
  q.Add("a");
  EXPECT_EQ(provider.Created(), 0);
}

}  // namespace
}  // namespace kcr::workqueue
