// The work queue under stalls injected between the steps of its handshakes
// (the inbox, the fold, the publish of a batch, the workers' sleep and
// wake-up) while every core is kept busy. Thousands of rounds; a round that
// stalls fails with the queue's state instead of hanging.
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "runtime/workqueue/queue.h"
#include "test/runtime/workqueue/fake_metrics.h"
#include "test/runtime/workqueue/stress.h"

namespace kcr::workqueue {
namespace {

using stress::CpuHogs;
using stress::Rng;
using stress::StallAtEveryStep;

using stress::WaitFor;

// Each worker holds item i until another worker has taken item i + 1, so
// the round only finishes if every item that is queued while a worker is
// idle wakes that worker: an idle worker left asleep beside a queued item
// (a lost wake-up) stalls the chain for good.
void IdleWorkerWakeRounds(int first, int last) {
  StallAtEveryStep stalls;
  CpuHogs hogs;
  constexpr int kItems = 64;
  constexpr int kWorkers = 2;
  for (int round = first; round < last; ++round) {
    Queue<int> queue;
    std::vector<std::atomic<int>> taken(kItems);
    std::atomic<int> stalled{-1};
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.emplace_back([&] {
        while (auto item = queue.Get()) {
          const int i = *item;
          taken[i].fetch_add(1);
          if (i + 1 < kItems &&
              !WaitFor([&] { return taken[i + 1].load() != 0; })) {
            stalled.store(i);
          }
          queue.Done(i);
        }
      });
    }
    Rng rng(round);
    for (int i = 0; i < kItems; ++i) {
      queue.Add(i);
      if (rng.Below(4) == 0) stress::RandomStall();
    }
    const bool finished =
        WaitFor([&] { return taken[kItems - 1].load() != 0; });
    queue.ShutDown();
    for (auto& t : workers) t.join();
    ASSERT_TRUE(finished) << "round " << round;
    ASSERT_EQ(stalled.load(), -1)
        << "round " << round << ": item " << stalled.load() + 1
        << " stayed queued beside an idle worker";
    for (int i = 0; i < kItems; ++i) {
      ASSERT_EQ(taken[i].load(), 1) << "round " << round << " item " << i;
    }
  }
}

// Half the rounds each, so that the two halves run as shards of their own.
TEST(QueueStressTest, AnIdleWorkerIsWokenForEveryQueuedItem) {
  IdleWorkerWakeRounds(0, stress::Rounds(400) / 2);
}

TEST(QueueStressTest, AnIdleWorkerIsWokenForEveryQueuedItemLaterRounds) {
  IdleWorkerWakeRounds(stress::Rounds(400) / 2, stress::Rounds(400));
}

// Producers add a small set of keys (adds collapse, and arrive while the
// key is being processed); workers process them, some adding their key
// again. Every other round the queue records metrics (the metered path). Each
// add first bumps the key's version, and a worker reads the version after Get:
// once everything has drained, every key's newest version has been seen by a
// worker (no add lost), and no key was ever held by two workers at once.
TEST(QueueStressTest, AddsAreNeverLostNorProcessedTwiceAtOnce) {
  StallAtEveryStep stalls;
  CpuHogs hogs;
  const int rounds = stress::Rounds(200);
  constexpr int kKeys = 16;
  constexpr int kProducers = 3;
  constexpr int kWorkers = 3;
  constexpr int kOpsPerProducer = 100;
  FakeMetricsProvider provider;
  for (int round = 0; round < rounds; ++round) {
    QueueOptions options;
    if (round % 2 == 1) {
      options.name = "stress";
      options.metrics_provider = &provider;
    }
    Queue<int> queue(options);
    stress::KeyVersions versions(kKeys);
    std::atomic<bool> producing{true};
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.emplace_back([&, w] {
        Rng rng(round * 100 + w);
        while (auto key = queue.Get()) {
          const int k = *key;
          versions.Take(k);
          stress::RandomStall();
          if (producing.load() && rng.Below(8) == 0) {
            versions.Bump(k);
            queue.Add(k);
          }
          versions.Release(k);
          queue.Done(k);
        }
      });
    }
    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; ++p) {
      producers.emplace_back([&, p] {
        Rng rng(round * 100 + 50 + p);
        for (int i = 0; i < kOpsPerProducer; ++i) {
          const int k = rng.Below(kKeys);
          versions.Bump(k);
          queue.Add(k);
          if (rng.Below(16) == 0) stress::RandomStall();
        }
      });
    }
    for (auto& t : producers) t.join();
    producing.store(false);
    const bool drained = WaitFor([&] { return versions.AllSeen(); });
    const size_t len = queue.Len();
    queue.ShutDown();
    for (auto& t : workers) t.join();
    ASSERT_TRUE(drained) << "round " << round << ": adds lost; Len=" << len
                         << " behind:" << versions.Behind();
    ASSERT_EQ(versions.overlaps(), 0) << "round " << round;
  }
}

}  // namespace
}  // namespace kcr::workqueue
