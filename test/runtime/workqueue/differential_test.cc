// kcr's queues against client-go's algorithm (client_go_model.h): random
// sequences of Add, AddAfter, Get, Done and the passing of time, hundreds of
// seeds of thousands of steps, on a queue without metrics and on one with
// them (the two paths must agree with client-go and so with each other).
// After every step the two must hold the same items; every Get must hand
// out the item client-go hands out; a metered queue's adds and depth must
// equal client-go's.
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "runtime/workqueue/delaying_queue.h"
#include "runtime/workqueue/queue.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/workqueue/client_go_model.h"
#include "test/runtime/workqueue/fake_metrics.h"

namespace kcr::workqueue {
namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 7) {}
  uint64_t Below(uint64_t n) {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return (s_ * 0x2545F4914F6CDD1Dull) % n;
  }

 private:
  uint64_t s_;
};

// Seeds to run: `fallback`, or KCR_DIFF_SEEDS to run more by hand.
uint64_t Seeds(uint64_t fallback) {
  const char* env = std::getenv("KCR_DIFF_SEEDS");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : fallback;
}

QueueOptions Options(bool metered, FakeMetricsProvider* provider,
                     const Clock* clock) {
  QueueOptions options;
  options.clock = clock;
  if (metered) {
    options.name = "q";
    options.metrics_provider = provider;
  }
  return options;
}

// The item a Done should be called for: a random one being processed.
std::optional<std::string> AnyProcessing(
    const model::ClientGoModel<std::string>& m, Rng& rng) {
  const auto& processing = m.processing();
  if (processing.empty()) return std::nullopt;
  auto it = processing.begin();
  std::advance(it, rng.Below(processing.size()));
  return *it;
}

// One Get on both, when client-go has an item: Get blocks on an empty
// queue (a queue that wrongly had none would hang the test: its timeout).
// Returns the difference, or "".
template <typename Q>
std::string GetBoth(Q& q, model::ClientGoModel<std::string>& m, int step) {
  if (m.Len() == 0) return "";
  const std::optional<std::string> want = m.Get();
  const std::optional<std::string> got = q.Get();
  if (got == want) return "";
  return absl::StrCat("step ", step, ": Get gave ", got.value_or("-"),
                      ", client-go ", want.value_or("-"));
}

// Done on both for an item being processed, if any.
template <typename Q>
void DoneBoth(Q& q, model::ClientGoModel<std::string>& m, Rng& rng) {
  const std::optional<std::string> item = AnyProcessing(m, rng);
  if (!item.has_value()) return;
  q.Done(*item);
  m.Done(*item);
}

// Compares what both hold and, for a metered queue, client-go's counts.
// Len folds the inbox, which would hide what Adds still there do to a later
// Get or Done, so callers look only now and then.
template <typename Q>
std::string CompareBoth(const Q& q, const model::ClientGoModel<std::string>& m,
                        FakeMetricsProvider& provider, bool metered, int step) {
  if (q.Len() != m.Len()) {
    return absl::StrCat("step ", step, ": Len ", q.Len(), ", client-go ",
                        m.Len());
  }
  if (metered && (provider.Value("adds", "q") != m.adds() ||
                  provider.Value("depth", "q") != m.depth())) {
    return absl::StrCat(
        "step ", step, ": adds/depth ", provider.Value("adds", "q"), "/",
        provider.Value("depth", "q"), ", client-go ", m.adds(), "/", m.depth());
  }
  return "";
}

// Runs one random sequence on a Queue. Returns a description of the first
// difference from client-go, or "" when there is none.
std::string RunQueueSequence(uint64_t seed, bool metered, int steps) {
  Rng rng(seed);
  testing::FakeClock clock;
  FakeMetricsProvider provider;
  Queue<std::string> q(Options(metered, &provider, &clock));
  model::ClientGoModel<std::string> m;
  const int keys = 2 + rng.Below(10);
  for (int step = 0; step < steps; ++step) {
    const uint64_t op = rng.Below(100);
    if (op < 45) {
      const std::string key = absl::StrCat("k", rng.Below(keys));
      q.Add(key);
      m.Add(key);
    } else if (op < 72) {
      if (std::string diff = GetBoth(q, m, step); !diff.empty()) return diff;
    } else {
      DoneBoth(q, m, rng);
    }
    if (rng.Below(8) != 0) continue;
    if (std::string diff = CompareBoth(q, m, provider, metered, step);
        !diff.empty()) {
      return diff;
    }
  }
  return "";
}

TEST(DifferentialTest, QueueHandsOutWhatClientGoHandsOut) {
  for (uint64_t seed = 1; seed <= Seeds(300); ++seed) {
    ASSERT_EQ(RunQueueSequence(seed, /*metered=*/false, 3000), "")
        << "seed " << seed << ", without metrics";
  }
}

TEST(DifferentialTest, MeteredQueueHandsOutAndCountsWhatClientGoDoes) {
  for (uint64_t seed = 1; seed <= Seeds(300); ++seed) {
    ASSERT_EQ(RunQueueSequence(seed, /*metered=*/true, 3000), "")
        << "seed " << seed << ", with metrics";
  }
}

// Runs one random sequence on a DelayingQueue driven by a fake clock.
std::string RunDelayingSequence(uint64_t seed, bool metered, int steps) {
  Rng rng(seed);
  testing::FakeClock clock;
  FakeMetricsProvider provider;
  DelayingQueue<std::string> q(Options(metered, &provider, &clock));
  model::ClientGoModel<std::string> m;
  // Background loops that wait on the clock: the timer, and the metrics
  // updater of a metered queue.
  const int loops = metered ? 2 : 1;
  const int64_t start = absl::ToUnixNanos(clock.Now());
  int64_t now = start;
  const int keys = 2 + rng.Below(8);
  for (int step = 0; step < steps; ++step) {
    const uint64_t op = rng.Below(100);
    if (op < 20) {
      const std::string key = absl::StrCat("k", rng.Below(keys));
      q.Add(key);
      m.Add(key);
    } else if (op < 50) {
      const std::string key = absl::StrCat("k", rng.Below(keys));
      // Whole milliseconds, or none, plus the step number in nanoseconds:
      // no two items are ever due at the same instant, where client-go's
      // heap leaves the order open.
      const int64_t ms = static_cast<int64_t>(rng.Below(40)) - 5;
      const int64_t delay = ms <= 0 ? ms : ms * 1'000'000 + step;
      q.AddAfter(key, absl::Nanoseconds(delay));
      m.AddAfter(key, now, delay);
    } else if (op < 62) {
      const int64_t advance = (1 + rng.Below(15)) * 1'000'000;
      now += advance;
      clock.Advance(absl::Nanoseconds(advance));
      m.AdvanceTo(now);
      clock.BlockUntilWaiters(loops);  // the timer has added what is due
    } else if (op < 82) {
      if (std::string diff = GetBoth(q, m, step); !diff.empty()) return diff;
    } else {
      DoneBoth(q, m, rng);
    }
    if (rng.Below(8) != 0) continue;
    if (q.WaitingLen() != m.WaitingLen()) {
      return absl::StrCat("step ", step, ": WaitingLen ", q.WaitingLen(),
                          ", client-go ", m.WaitingLen());
    }
    if (std::string diff = CompareBoth(q, m, provider, metered, step);
        !diff.empty()) {
      return diff;
    }
  }
  return "";
}

TEST(DifferentialTest, DelayingQueueHandsOutWhatClientGoHandsOut) {
  for (uint64_t seed = 1; seed <= Seeds(100); ++seed) {
    ASSERT_EQ(RunDelayingSequence(seed, /*metered=*/false, 400), "")
        << "seed " << seed << ", without metrics";
  }
}

TEST(DifferentialTest, MeteredDelayingQueueHandsOutWhatClientGoHandsOut) {
  for (uint64_t seed = 1; seed <= Seeds(100); ++seed) {
    ASSERT_EQ(RunDelayingSequence(seed, /*metered=*/true, 400), "")
        << "seed " << seed << ", with metrics";
  }
}

}  // namespace
}  // namespace kcr::workqueue
