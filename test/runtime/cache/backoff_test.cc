#include "runtime/cache/backoff.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"

namespace kcr::cache {
namespace {

using ::testing::ElementsAre;

RandomFunc Constant(double value) {
  return [value] { return value; };
}

std::vector<absl::Duration> Take(BackoffManager& backoff, int n) {
  std::vector<absl::Duration> out;
  for (int i = 0; i < n; ++i) out.push_back(backoff.Next());
  return out;
}

TEST(BackoffManagerTest, DoublesFrom800msUpTo30s) {
  testing::FakeClock clock;
  BackoffManager backoff(BackoffOptions{}, &clock, Constant(0));
  EXPECT_THAT(Take(backoff, 8),
              ElementsAre(absl::Milliseconds(800), absl::Milliseconds(1600),
                          absl::Milliseconds(3200), absl::Milliseconds(6400),
                          absl::Milliseconds(12800), absl::Milliseconds(25600),
                          absl::Seconds(30), absl::Seconds(30)));
}

TEST(BackoffManagerTest, JitterStretchesEachDelayByUpToItsOwnLength) {
  testing::FakeClock clock;
  BackoffManager most(BackoffOptions{}, &clock, Constant(0.999));
  std::vector<absl::Duration> delays = Take(most, 8);
  EXPECT_GT(delays[0], absl::Milliseconds(1598));
  EXPECT_LT(delays[0], absl::Milliseconds(1600));
  // The cap bounds the base delay, not the jittered one (as client-go).
  EXPECT_GT(delays[7], absl::Seconds(59));
  EXPECT_LT(delays[7], absl::Seconds(60));

  BackoffManager seeded(BackoffOptions{}, &clock, SeededRandom(42));
  absl::Duration base = absl::Milliseconds(800);
  for (int i = 0; i < 50; ++i) {
    absl::Duration d = seeded.Next();
    EXPECT_GE(d, base) << i;
    EXPECT_LT(d, 2 * base) << i;
    base = std::min(2 * base, absl::Seconds(30));
  }
}

TEST(BackoffManagerTest, SameSeedSameDelays) {
  testing::FakeClock clock;
  BackoffManager a(BackoffOptions{}, &clock, SeededRandom(7));
  BackoffManager b(BackoffOptions{}, &clock, SeededRandom(7));
  EXPECT_EQ(Take(a, 10), Take(b, 10));
}

TEST(BackoffManagerTest, StartsOverAfterTwoMinutesWithoutBackoff) {
  testing::FakeClock clock;
  BackoffManager backoff(BackoffOptions{}, &clock, Constant(0));
  Take(backoff, 3);
  // Exactly two minutes later is not yet "more than" two minutes.
  clock.Advance(absl::Minutes(2));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(6400));
  clock.Advance(absl::Minutes(2) + absl::Milliseconds(1));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(800));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(1600));
}

TEST(BackoffManagerTest, WaitSleepsOnTheClockAndEndsWithTheContext) {
  testing::FakeClock clock;
  BackoffManager backoff(BackoffOptions{}, &clock, Constant(0));
  absl::Status waited = absl::UnknownError("not yet");
  std::thread sleeper([&] { waited = backoff.Wait(Context::Background()); });
  clock.BlockUntilTimers(1);
  clock.Advance(absl::Milliseconds(799));
  EXPECT_EQ(clock.ArmedTimers(), 1);
  clock.Advance(absl::Milliseconds(1));
  sleeper.join();
  EXPECT_TRUE(waited.ok()) << waited;

  auto [ctx, cancel] = WithCancel(Context::Background());
  std::thread cancelled([&, ctx = ctx] { waited = backoff.Wait(ctx); });
  clock.BlockUntilTimers(1);
  cancel();
  cancelled.join();
  EXPECT_EQ(waited.code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace kcr::cache
