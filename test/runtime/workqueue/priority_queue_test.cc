#include "runtime/workqueue/priority_queue.h"

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/workqueue/fake_metrics.h"

namespace kcr::workqueue {
namespace {

using Keys = std::vector<std::string>;

AddOpts At(int priority) {
  AddOpts o;
  o.priority = priority;
  return o;
}

AddOpts After(absl::Duration d, std::optional<int> priority = std::nullopt) {
  AddOpts o;
  o.after = d;
  o.priority = priority;
  return o;
}

// Takes every ready item (Get, Done), in order.
Keys Drain(PriorityQueue<std::string>& q) {
  Keys out;
  while (q.Len() > 0) {
    std::optional<std::string> item = q.Get();
    out.push_back(*item);
    q.Done(*item);
  }
  return out;
}

class PriorityQueueTest : public ::testing::Test {
 protected:
  QueueOptions Options() {
    QueueOptions o;
    o.clock = &clock_;
    return o;
  }
  std::unique_ptr<PriorityQueue<std::string>> Make(
      std::unique_ptr<RateLimiter<std::string>> limiter = nullptr) {
    return std::make_unique<PriorityQueue<std::string>>(std::move(limiter),
                                                        Options());
  }

  kcr::testing::FakeClock clock_;
};

TEST_F(PriorityQueueTest, HigherPriorityFirstFifoWithinAPriority) {
  auto q = Make();
  q->AddWithOpts(At(-100), "low-1");
  q->Add("default-1");
  q->AddWithOpts(At(10), "high-1");
  q->AddWithOpts(At(-100), "low-2");
  q->AddWithOpts(At(0), "default-2");
  q->AddWithOpts(At(10), std::vector<std::string>{"high-2", "high-3"});
  EXPECT_EQ(q->Len(), 7u);
  EXPECT_EQ(Drain(*q), (Keys{"high-1", "high-2", "high-3", "default-1",
                             "default-2", "low-1", "low-2"}));
}

TEST_F(PriorityQueueTest, GetWithPriorityReportsThePriority) {
  auto q = Make();
  q->AddWithOpts(At(-100), "a");
  q->Add("b");
  auto b = q->GetWithPriority();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->item, "b");
  EXPECT_EQ(b->priority, 0);
  auto a = q->GetWithPriority();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->item, "a");
  EXPECT_EQ(a->priority, -100);
}

TEST_F(PriorityQueueTest, ReAddDeduplicatesAndRaisesToTheHigherPriority) {
  auto q = Make();
  q->AddWithOpts(At(-100), "a");
  q->AddWithOpts(At(-100), "b");
  q->AddWithOpts(At(-100), "c");
  q->Add("x");
  // Raised: a moves to the back of priority 0's line.
  q->AddWithOpts(At(0), "a");
  // Not lowered: x stays at 0, in its place.
  q->AddWithOpts(At(-100), "x");
  // Same priority: b keeps its place.
  q->AddWithOpts(At(-100), "b");
  EXPECT_EQ(q->Len(), 4u);
  EXPECT_EQ(Drain(*q), (Keys{"x", "a", "b", "c"}));
}

TEST_F(PriorityQueueTest, AnItemBeingProcessedIsNotHandedOutTwice) {
  auto q = Make();
  q->Add("a");
  ASSERT_EQ(*q->Get(), "a");
  q->Add("a");  // while processed: queued again at Done
  q->AddWithOpts(At(5), "a");
  q->Add("b");
  EXPECT_EQ(q->Len(), 1u);
  auto b = q->GetWithPriority();
  EXPECT_EQ(b->item, "b");
  EXPECT_EQ(q->Len(), 0u);
  q->Done("a");
  EXPECT_EQ(q->Len(), 1u);
  auto a = q->GetWithPriority();
  EXPECT_EQ(a->item, "a");
  EXPECT_EQ(a->priority, 5);  // the highest of the adds made meanwhile
  q->Done("a");
  q->Done("b");
  EXPECT_EQ(q->Len(), 0u);
  // Done for an item not being processed is ignored.
  q->Done("nothing");
  q->Add("c");
  q->Done("c");
  EXPECT_EQ(Drain(*q), Keys{"c"});
}

TEST_F(PriorityQueueTest, DoneRequeuesBehindItsPrioritysLine) {
  auto q = Make();
  q->Add("a");
  ASSERT_EQ(*q->Get(), "a");
  q->Add("a");
  q->Add("b");
  q->Done("a");
  EXPECT_EQ(Drain(*q), (Keys{"b", "a"}));
}

TEST_F(PriorityQueueTest, AddAfterWaitsForItsDelay) {
  auto q = Make();
  q->AddAfter("a", absl::Seconds(2));
  q->AddWithOpts(After(absl::Seconds(1)), "b");
  EXPECT_EQ(q->Len(), 0u);
  EXPECT_EQ(q->WaitingLen(), 2u);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(q->Len(), 1u);
  EXPECT_EQ(q->WaitingLen(), 1u);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(Drain(*q), (Keys{"b", "a"}));
  // A zero delay is an Add.
  q->AddAfter("c", absl::ZeroDuration());
  EXPECT_EQ(q->Len(), 1u);
}

TEST_F(PriorityQueueTest, TheTimerMovesDueItemsToAWaitingWorker) {
  auto q = Make();
  std::thread worker([&] {
    auto got = q->GetWithPriority();
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->item, "a");
    EXPECT_EQ(got->priority, 3);
    q->Done(got->item);
  });
  q->AddWithOpts(After(absl::Milliseconds(10), 3), "a");
  clock_.BlockUntilWaiters(1);  // the timer sleeps until a is due
  clock_.Advance(absl::Milliseconds(10));
  worker.join();
}

TEST_F(PriorityQueueTest, ReAddKeepsTheEarliestReadyTime) {
  auto q = Make();
  q->AddAfter("a", absl::Seconds(5));
  q->AddAfter("a", absl::Seconds(1));   // earlier: wins
  q->AddAfter("a", absl::Seconds(10));  // later: ignored
  EXPECT_EQ(q->WaitingLen(), 1u);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(Drain(*q), Keys{"a"});
  EXPECT_EQ(q->WaitingLen(), 0u);

  // A ready item stays ready when added with a delay.
  q->Add("b");
  q->AddAfter("b", absl::Seconds(1));
  EXPECT_EQ(q->Len(), 1u);
  EXPECT_EQ(q->WaitingLen(), 0u);

  // A waiting item added without delay is ready at once.
  q->AddAfter("c", absl::Seconds(1));
  q->Add("c");
  EXPECT_EQ(q->WaitingLen(), 0u);
  EXPECT_EQ(Drain(*q), (Keys{"b", "c"}));
}

TEST_F(PriorityQueueTest, WaitingItemsTakeTheHigherPriorityToo) {
  auto q = Make();
  q->AddWithOpts(After(absl::Seconds(1), -100), "a");
  q->AddWithOpts(After(absl::Seconds(2), 7), "a");  // later, but higher
  q->AddWithOpts(At(0), "b");
  clock_.Advance(absl::Seconds(1));
  auto first = q->GetWithPriority();
  EXPECT_EQ(first->item, "a");
  EXPECT_EQ(first->priority, 7);
}

TEST_F(PriorityQueueTest, DueItemsQueueInTheOrderTheyBecameReady) {
  auto q = Make();
  q->Add("first");
  q->AddAfter("late", absl::Seconds(2));
  q->AddAfter("early", absl::Seconds(1));
  q->Add("second");
  clock_.Advance(absl::Seconds(2));
  EXPECT_EQ(Drain(*q), (Keys{"first", "second", "early", "late"}));
}

TEST_F(PriorityQueueTest, AddRateLimitedUsesTheLimiterAndForgetResets) {
  auto q =
      Make(std::make_unique<ItemExponentialFailureRateLimiter<std::string>>(
          absl::Milliseconds(1), absl::Seconds(1)));
  q->AddRateLimited("a");  // 1 ms
  q->AddRateLimited("a");  // 2 ms; the 1 ms one is earlier and wins
  EXPECT_EQ(q->NumRequeues("a"), 2);
  EXPECT_EQ(q->WaitingLen(), 1u);
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_EQ(Drain(*q), Keys{"a"});

  // With a priority, through AddWithOpts; `after` caps the limiter's delay.
  AddOpts opts = At(4);
  opts.rate_limited = true;
  q->AddWithOpts(opts, "b");  // 1 ms
  q->AddWithOpts(opts, "a");  // third failure: 4 ms
  opts.after = absl::Milliseconds(2);
  q->AddWithOpts(opts, "c");  // min(1 ms, 2 ms)
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_EQ(Drain(*q), (Keys{"b", "c"}));
  clock_.Advance(absl::Milliseconds(3));
  auto a = q->GetWithPriority();
  EXPECT_EQ(a->item, "a");
  EXPECT_EQ(a->priority, 4);
  q->Done("a");

  q->Forget("a");
  EXPECT_EQ(q->NumRequeues("a"), 0);
}

TEST_F(PriorityQueueTest, DefaultsToTheControllerRateLimiter) {
  auto q = Make();
  q->AddRateLimited("a");  // 5 ms per item
  EXPECT_EQ(q->NumRequeues("a"), 1);
  clock_.Advance(absl::Milliseconds(4));
  EXPECT_EQ(q->Len(), 0u);
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_EQ(Drain(*q), Keys{"a"});
}

TEST_F(PriorityQueueTest, ShutDownHandsOutWhatIsReadyThenNothing) {
  auto q = Make();
  q->AddWithOpts(At(-1), "low");
  q->Add("a");
  q->AddAfter("later", absl::Seconds(1));
  q->ShutDown();
  EXPECT_TRUE(q->ShuttingDown());
  q->Add("ignored");
  q->AddWithOpts(At(9), "ignored-too");
  clock_.Advance(absl::Seconds(1));  // waiting items are dropped
  EXPECT_EQ(*q->Get(), "a");
  EXPECT_EQ(*q->Get(), "low");
  EXPECT_FALSE(q->Get().has_value());
  EXPECT_FALSE(q->GetWithPriority().has_value());
}

TEST_F(PriorityQueueTest, ShutDownWakesBlockedWorkers) {
  auto q = Make();
  std::vector<std::thread> workers;
  std::atomic<int> returned{0};
  for (int i = 0; i < 3; ++i) {
    workers.emplace_back([&] {
      EXPECT_FALSE(q->Get().has_value());
      returned.fetch_add(1);
    });
  }
  q->ShutDown();
  for (std::thread& t : workers) t.join();
  EXPECT_EQ(returned.load(), 3);
}

TEST_F(PriorityQueueTest, ShutDownWithDrainWaitsForDone) {
  auto q = Make();
  q->Add("a");
  ASSERT_EQ(*q->Get(), "a");
  Notification drained;
  std::thread drainer([&] {
    q->ShutDownWithDrain();
    drained.Notify();
  });
  // The drain cannot end while a is processed.
  EXPECT_FALSE(drained.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  EXPECT_TRUE(q->ShuttingDown());
  q->Done("a");
  drained.WaitForNotification();
  drainer.join();
}

TEST_F(PriorityQueueTest, ShutDownReleasesADrain) {
  auto q = Make();
  q->Add("a");
  ASSERT_EQ(*q->Get(), "a");
  std::thread drainer([&] { q->ShutDownWithDrain(); });
  while (!q->ShuttingDown()) std::this_thread::yield();
  q->ShutDown();
  drainer.join();  // returns although a was never Done
}

// A provider that also records the depth per priority.
class FakePriorityMetricsProvider final : public PriorityMetricsProvider {
 public:
  class Gauge final : public PriorityGaugeMetric {
   public:
    explicit Gauge(FakePriorityMetricsProvider* p) : p_(p) {}
    void Inc(int priority) override { p_->Bump(priority, 1); }
    void Dec(int priority) override { p_->Bump(priority, -1); }

   private:
    FakePriorityMetricsProvider* p_;
  };
  std::unique_ptr<PriorityGaugeMetric> NewDepthWithPriorityMetric(
      std::string_view name) override {
    return std::make_unique<Gauge>(this);
  }
  std::map<int, int> depth() {
    MutexLock lock(&mu_);
    std::map<int, int> out;
    for (const auto& [p, n] : depth_) {
      if (n != 0) out[p] = n;
    }
    return out;
  }

 private:
  void Bump(int priority, int delta) {
    MutexLock lock(&mu_);
    depth_[priority] += delta;
  }
  Mutex mu_;
  std::map<int, int> depth_ ABSL_GUARDED_BY(mu_);
};

TEST_F(PriorityQueueTest, RecordsTheQueueMetricsUnderTheirNames) {
  FakeMetricsProvider metrics;
  QueueOptions options = Options();
  options.name = "pq";
  options.metrics_provider = &metrics;
  PriorityQueue<std::string> q(nullptr, options);
  q.AddWithOpts(At(-100), "a");
  q.Add("b");
  q.Add("b");  // collapsed: not an add
  q.AddAfter("c", absl::Seconds(1));
  EXPECT_EQ(metrics.Value("adds", "pq"), 2);
  EXPECT_EQ(metrics.Value("depth", "pq"), 2);
  EXPECT_EQ(metrics.Value("retries", "pq"), 1);
  clock_.Advance(absl::Seconds(1));  // c becomes ready
  EXPECT_EQ(q.Len(), 3u);
  EXPECT_EQ(metrics.Value("adds", "pq"), 3);
  EXPECT_EQ(metrics.Value("depth", "pq"), 3);

  ASSERT_EQ(*q.Get(), "b");
  EXPECT_EQ(metrics.Value("depth", "pq"), 2);
  ASSERT_EQ(metrics.Observations("latency", "pq").size(), 1u);
  EXPECT_DOUBLE_EQ(metrics.Observations("latency", "pq")[0], 1.0);
  clock_.Advance(absl::Seconds(2));
  q.Done("b");
  ASSERT_EQ(metrics.Observations("work", "pq").size(), 1u);
  EXPECT_DOUBLE_EQ(metrics.Observations("work", "pq")[0], 2.0);

  // The unfinished-work gauges, refreshed by the timer every 500 ms.
  ASSERT_EQ(*q.Get(), "c");
  clock_.BlockUntilWaiters(1);
  clock_.Advance(absl::Seconds(3));
  clock_.BlockUntilWaiters(1);
  EXPECT_DOUBLE_EQ(metrics.Value("unfinished", "pq"), 3.0);
  EXPECT_DOUBLE_EQ(metrics.Value("longest", "pq"), 3.0);
  q.Done("c");
  q.AddRateLimited("d");
  EXPECT_EQ(metrics.Value("retries", "pq"), 2);
}

// A provider of both kinds of instrument.
class PriorityAwareProvider final : public MetricsProvider,
                                    public PriorityMetricsProvider {
 public:
  std::unique_ptr<GaugeMetric> NewDepthMetric(std::string_view n) override {
    return plain.NewDepthMetric(n);
  }
  std::unique_ptr<CounterMetric> NewAddsMetric(std::string_view n) override {
    return plain.NewAddsMetric(n);
  }
  std::unique_ptr<HistogramMetric> NewLatencyMetric(
      std::string_view n) override {
    return plain.NewLatencyMetric(n);
  }
  std::unique_ptr<HistogramMetric> NewWorkDurationMetric(
      std::string_view n) override {
    return plain.NewWorkDurationMetric(n);
  }
  std::unique_ptr<SettableGaugeMetric> NewUnfinishedWorkSecondsMetric(
      std::string_view n) override {
    return plain.NewUnfinishedWorkSecondsMetric(n);
  }
  std::unique_ptr<SettableGaugeMetric> NewLongestRunningProcessorSecondsMetric(
      std::string_view n) override {
    return plain.NewLongestRunningProcessorSecondsMetric(n);
  }
  std::unique_ptr<CounterMetric> NewRetriesMetric(std::string_view n) override {
    return plain.NewRetriesMetric(n);
  }
  std::unique_ptr<PriorityGaugeMetric> NewDepthWithPriorityMetric(
      std::string_view n) override {
    return by_priority.NewDepthWithPriorityMetric(n);
  }

  FakeMetricsProvider plain;
  FakePriorityMetricsProvider by_priority;
};

TEST_F(PriorityQueueTest, RecordsTheDepthPerPriorityWhenTheProviderCan) {
  PriorityAwareProvider metrics;
  QueueOptions options = Options();
  options.name = "pq";
  options.metrics_provider = &metrics;
  PriorityQueue<std::string> q(nullptr, options);
  q.AddWithOpts(At(-100), std::vector<std::string>{"a", "b", "c"});
  q.Add("d");
  EXPECT_EQ(metrics.by_priority.depth(),
            (std::map<int, int>{{-100, 3}, {0, 1}}));
  q.Add("a");  // raised
  EXPECT_EQ(metrics.by_priority.depth(),
            (std::map<int, int>{{-100, 2}, {0, 2}}));
  ASSERT_EQ(*q.Get(), "d");
  EXPECT_EQ(metrics.by_priority.depth(),
            (std::map<int, int>{{-100, 2}, {0, 1}}));
  EXPECT_EQ(metrics.plain.Value("depth", "pq"), 3);
}

// Producers add with random priorities and delays while workers take and
// finish items; checks that no item is ever handed to two workers at once
// and that every item added is processed after its last add. Small enough
// for ThreadSanitizer.
TEST(PriorityQueueStressTest, ConcurrentAddsAndWorkersKeepTheContract) {
  constexpr int kProducers = 3;
  constexpr int kWorkers = 4;
  constexpr int kAddsPerProducer = 3000;
  constexpr int kKeys = 200;
  PriorityQueue<std::string> q(
      std::make_unique<ItemExponentialFailureRateLimiter<std::string>>(
          absl::Microseconds(10), absl::Microseconds(200)));

  // Guards the three maps below (locals: the analysis cannot follow them).
  Mutex mu;
  absl::flat_hash_set<std::string> in_flight;
  // Per key: adds made, and adds made before the start of its latest Get.
  absl::flat_hash_map<std::string, int64_t> added;
  absl::flat_hash_map<std::string, int64_t> covered;
  std::atomic<bool> twice{false};

  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&] {
      while (auto got = q.GetWithPriority()) {
        {
          MutexLock lock(&mu);
          if (!in_flight.insert(got->item).second) twice.store(true);
          covered[got->item] = added[got->item];
        }
        std::this_thread::yield();
        {
          MutexLock lock(&mu);
          in_flight.erase(got->item);
        }
        q.Done(got->item);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      uint64_t r = 88172645463325252ull + p;
      for (int i = 0; i < kAddsPerProducer; ++i) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        const std::string key = absl::StrCat("k", r % kKeys);
        {
          MutexLock lock(&mu);
          ++added[key];
        }
        AddOpts opts;
        opts.priority = static_cast<int>(r % 5) - 2;
        switch ((r >> 8) % 4) {
          case 0:
            opts.after = absl::Microseconds(static_cast<int64_t>(r % 300));
            break;
          case 1:
            opts.rate_limited = true;
            break;
          default:
            break;
        }
        q.AddWithOpts(opts, key);
        if (r % 7 == 0) q.Forget(key);
      }
    });
  }
  for (std::thread& t : producers) t.join();
  // Every add is eventually covered by a Get that started after it.
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  for (;;) {
    bool all = true;
    {
      MutexLock lock(&mu);
      for (const auto& [key, n] : added) {
        if (covered[key] != n) all = false;
      }
    }
    if (all || absl::Now() > give_up) break;
    absl::SleepFor(absl::Milliseconds(1));
  }
  q.ShutDownWithDrain();
  for (std::thread& t : workers) t.join();
  EXPECT_FALSE(twice.load());
  MutexLock lock(&mu);
  for (const auto& [key, n] : added) {
    EXPECT_EQ(covered[key], n) << key;
  }
  EXPECT_TRUE(in_flight.empty());
}

}  // namespace
}  // namespace kcr::workqueue
