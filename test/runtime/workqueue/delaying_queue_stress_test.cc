// The delaying queue under stalls injected between the steps of its
// handshakes (AddAfter's inbox, the timer's fold and due batch, the
// workers' sleep and wake-up) while every core is kept busy: every item
// AddAfter or Add hands in comes out, no earlier than its delay, never to
// two workers at once, and a worker always sees the newest version of what
// it was woken for. Thousands of rounds; a round that does not drain fails
// with the queue's state instead of hanging.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "runtime/workqueue/delaying_queue.h"
#include "test/runtime/workqueue/stress.h"

namespace kcr::workqueue {
namespace {

using stress::CpuHogs;
using stress::Rng;
using stress::StallAtEveryStep;

using stress::WaitFor;

// The benchmark's scenario (e): one producer AddAfters distinct keys, one
// worker drains them. Each item must come out exactly once, and not before
// its delay has passed.
void DistinctAddAftersRounds(int first, int last) {
  StallAtEveryStep stalls;
  CpuHogs hogs;
  constexpr int kItems = 100;
  for (int round = first; round < last; ++round) {
    Rng rng(round);
    DelayingQueue<int> queue;
    std::vector<absl::Time> earliest(kItems);
    std::vector<std::atomic<int>> seen(kItems);
    std::atomic<int> got{0};
    std::atomic<int> early{0};
    std::thread worker([&] {
      while (auto item = queue.Get()) {
        const absl::Time now = absl::Now();
        if (now < earliest[*item]) early.fetch_add(1);
        seen[*item].fetch_add(1);
        got.fetch_add(1);
        queue.Done(*item);
      }
    });
    for (int i = 0; i < kItems; ++i) {
      const absl::Duration delay = absl::Microseconds(rng.Below(1500));
      earliest[i] = absl::Now() + delay;
      queue.AddAfter(i, delay);
    }
    const bool drained = WaitFor([&] { return got.load() == kItems; });
    const size_t len = queue.Len();
    const size_t waiting = queue.WaitingLen();
    queue.ShutDown();
    worker.join();
    ASSERT_TRUE(drained) << "round " << round << ": " << got.load() << " of "
                         << kItems << " items came out; Len=" << len
                         << " WaitingLen=" << waiting;
    EXPECT_EQ(early.load(), 0) << "round " << round;
    for (int i = 0; i < kItems; ++i) {
      ASSERT_EQ(seen[i].load(), 1) << "round " << round << " item " << i;
    }
  }
}

// Half the rounds each, so that the two halves run as shards of their own.
TEST(DelayingQueueStressTest, DistinctAddAftersAllComeOutOnceAndNotEarly) {
  DistinctAddAftersRounds(0, stress::Rounds(1000) / 2);
}

TEST(DelayingQueueStressTest,
     DistinctAddAftersAllComeOutOnceAndNotEarlyLaterRounds) {
  DistinctAddAftersRounds(stress::Rounds(1000) / 2, stress::Rounds(1000));
}

// Several producers Add and AddAfter a small set of keys (so that adds
// collapse, wait twice, and arrive while the key is being processed);
// several workers process them, some adding their key again. Each add
// first bumps the key's version, and a worker reads the version after Get:
// when everything has drained, every key's newest version has been seen by
// a worker that took the key after it (client-go's guarantee that an add is
// never lost), and no key was ever held by two workers at once.
TEST(DelayingQueueStressTest, MixedAddsAreNeverLostNorProcessedTwiceAtOnce) {
  StallAtEveryStep stalls;
  CpuHogs hogs;
  const int kRounds = stress::Rounds(200);
  constexpr int kKeys = 16;
  constexpr int kProducers = 3;
  constexpr int kWorkers = 3;
  constexpr int kOpsPerProducer = 100;
  for (int round = 0; round < kRounds; ++round) {
    DelayingQueue<std::string> queue;
    std::vector<std::string> keys;
    for (int k = 0; k < kKeys; ++k) keys.push_back(absl::StrCat("ns/key-", k));
    stress::KeyVersions versions(kKeys);
    std::atomic<bool> producing{true};

    auto key_index = [&](const std::string& key) {
      return std::stoi(key.substr(key.rfind('-') + 1));
    };
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.emplace_back([&, w] {
        Rng rng(round * 100 + w);
        while (auto key = queue.Get()) {
          const int k = key_index(*key);
          versions.Take(k);
          stress::RandomStall();
          if (producing.load() && rng.Below(8) == 0) {
            versions.Bump(k);  // a reconcile that asks for another
            if (rng.Below(2) == 0) {
              queue.Add(*key);
            } else {
              queue.AddAfter(*key, absl::Microseconds(rng.Below(300)));
            }
          }
          versions.Release(k);
          queue.Done(*key);
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
          if (rng.Below(4) == 0) {
            queue.Add(keys[k]);
          } else {
            // Short delays, zero and negative ones too.
            const int64_t us = static_cast<int64_t>(rng.Below(600)) - 100;
            queue.AddAfter(keys[k], absl::Microseconds(us));
          }
          if (rng.Below(16) == 0) stress::RandomStall();
        }
      });
    }
    for (auto& t : producers) t.join();
    producing.store(false);
    const bool drained = WaitFor([&] { return versions.AllSeen(); });
    const size_t len = queue.Len();
    const size_t waiting = queue.WaitingLen();
    queue.ShutDown();
    for (auto& t : workers) t.join();
    ASSERT_TRUE(drained) << "round " << round << ": adds lost; Len=" << len
                         << " WaitingLen=" << waiting
                         << " behind:" << versions.Behind();
    ASSERT_EQ(versions.overlaps(), 0) << "round " << round;
  }
}

}  // namespace
}  // namespace kcr::workqueue
