// Timers and tickers on the fake clock (fired by Advance, no sleeping) and
// on the real one (only that they fire and can be cancelled; no timing).
#include "base/clock.h"

#include <atomic>
#include <thread>
#include <vector>

#include "base/context.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"

namespace kcr {
namespace {

using ::kcr::testing::FakeClock;

// A context that is already done: Wait on it reports whether the timer or
// ticker has fired, without blocking.
Context Done() {
  auto [ctx, cancel] = WithCancel(Context::Background());
  cancel();
  return ctx;
}

bool Fired(Timer& t) { return t.Wait(Done()).ok(); }
bool Ticked(Ticker& t) { return t.Wait(Done()).ok(); }

TEST(FakeClockTimerTest, FiresWhenTimePassesIt) {
  FakeClock clock;
  std::unique_ptr<Timer> timer = clock.NewTimer(absl::Seconds(5));
  EXPECT_EQ(clock.ArmedTimers(), 1);
  clock.Advance(absl::Seconds(4));
  EXPECT_FALSE(Fired(*timer));
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(clock.ArmedTimers(), 0);
  EXPECT_TRUE(Fired(*timer));
  EXPECT_FALSE(Fired(*timer));  // a firing is seen once
}

TEST(FakeClockTimerTest, AfterFuncRunsInsideAdvanceInDueOrder) {
  FakeClock clock;
  std::vector<int> order;
  auto third = clock.AfterFunc(absl::Seconds(3), [&] { order.push_back(3); });
  auto first = clock.AfterFunc(absl::Seconds(1), [&] { order.push_back(1); });
  auto second = clock.AfterFunc(absl::Seconds(2), [&] { order.push_back(2); });
  clock.Advance(absl::Seconds(10));
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(FakeClockTimerTest, StopAndReset) {
  FakeClock clock;
  int runs = 0;
  auto timer = clock.AfterFunc(absl::Seconds(5), [&] { ++runs; });
  EXPECT_TRUE(timer->Stop());
  EXPECT_FALSE(timer->Stop());
  clock.Advance(absl::Seconds(10));
  EXPECT_EQ(runs, 0);

  EXPECT_FALSE(timer->Reset(absl::Seconds(2)));
  EXPECT_TRUE(timer->Reset(absl::Seconds(3)));  // re-armed, from now
  clock.Advance(absl::Seconds(2));
  EXPECT_EQ(runs, 0);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(Fired(*timer));  // an AfterFunc timer records its firing too

  // A firing nobody waited for is dropped by Reset and by Stop.
  timer->Reset(absl::Seconds(1));
  clock.Advance(absl::Seconds(1));
  timer->Reset(absl::Seconds(1));
  EXPECT_FALSE(Fired(*timer));
  clock.Advance(absl::Seconds(1));
  timer->Stop();
  EXPECT_FALSE(Fired(*timer));
}

TEST(FakeClockTimerTest, DestroyingStops) {
  FakeClock clock;
  int runs = 0;
  clock.AfterFunc(absl::Seconds(1), [&] { ++runs; }).reset();
  clock.Advance(absl::Seconds(2));
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(clock.ArmedTimers(), 0);
}

TEST(FakeClockTimerTest, ACallbackMayStopResetOrDestroyItsOwnTimer) {
  FakeClock clock;
  int runs = 0;
  std::unique_ptr<Timer> again;
  again = clock.AfterFunc(absl::Seconds(1), [&] {
    if (++runs < 3) again->Reset(absl::Seconds(1));
  });
  clock.Advance(absl::Seconds(1));
  clock.Advance(absl::Seconds(1));
  clock.Advance(absl::Seconds(1));
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(runs, 3);

  std::unique_ptr<Timer> self_destroying;
  self_destroying =
      clock.AfterFunc(absl::Seconds(1), [&] { self_destroying.reset(); });
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(self_destroying, nullptr);
}

TEST(FakeClockTimerTest, WaitBlocksUntilAnotherThreadAdvances) {
  FakeClock clock;
  const absl::Time due = clock.Now() + absl::Minutes(1);
  std::unique_ptr<Timer> timer = clock.NewTimer(absl::Minutes(1));
  // Cancelled only if Wait does not return after the firing, so that a
  // failure ends with the test instead of hanging it.
  auto [ctx, cancel] = WithCancel(Context::Background());
  Notification waiting, returned;
  absl::Status got = absl::UnknownError("not run");
  absl::Time returned_at;
  std::thread waiter([&, ctx = ctx] {
    waiting.Notify();
    got = timer->Wait(ctx);
    returned_at = clock.Now();
    returned.Notify();
  });
  waiting.WaitForNotification();
  clock.Advance(absl::Seconds(59));
  // Time has not reached the timer: a Wait that does not block returns
  // here (a correct one cannot, so this never fails wrongly).
  EXPECT_FALSE(returned.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  clock.Advance(absl::Seconds(1));
  const bool woke = returned.WaitForNotificationWithTimeout(absl::Seconds(30));
  if (!woke) cancel();
  waiter.join();
  EXPECT_TRUE(woke) << "Wait did not return once the timer fired";
  EXPECT_TRUE(got.ok()) << got;
  // It returned only once time had passed the timer.
  EXPECT_GE(returned_at, due);
  cancel();
}

TEST(FakeClockTimerTest, SleepWakesOnAdvanceOrCancel) {
  FakeClock clock;
  absl::Status slept = absl::UnknownError("not run");
  std::thread sleeper(
      [&] { slept = clock.Sleep(Context::Background(), absl::Seconds(30)); });
  clock.BlockUntilTimers(1);  // asleep
  clock.Advance(absl::Seconds(30));
  sleeper.join();
  EXPECT_TRUE(slept.ok());

  auto [ctx, cancel] = WithCancel(Context::Background());
  std::thread cancelled(
      [&, ctx = ctx] { slept = clock.Sleep(ctx, absl::Hours(1)); });
  clock.BlockUntilTimers(1);
  cancel();
  cancelled.join();
  EXPECT_EQ(slept.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(clock.ArmedTimers(), 0);

  EXPECT_TRUE(clock.Sleep(Context::Background(), absl::ZeroDuration()).ok());
  EXPECT_EQ(clock.Sleep(ctx, absl::ZeroDuration()).code(),
            absl::StatusCode::kCancelled);
}

TEST(FakeClockTickerTest, TicksEveryPeriodAndCoalescesMissedTicks) {
  FakeClock clock;
  std::unique_ptr<Ticker> ticker = clock.NewTicker(absl::Seconds(10));
  clock.Advance(absl::Seconds(9));
  EXPECT_FALSE(Ticked(*ticker));
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(Ticked(*ticker));
  EXPECT_FALSE(Ticked(*ticker));

  // Three periods at once: one tick kept, the next one still on the grid.
  clock.Advance(absl::Seconds(35));  // t = 45
  EXPECT_TRUE(Ticked(*ticker));
  EXPECT_FALSE(Ticked(*ticker));
  clock.Advance(absl::Seconds(4));  // t = 49
  EXPECT_FALSE(Ticked(*ticker));
  clock.Advance(absl::Seconds(1));  // t = 50
  EXPECT_TRUE(Ticked(*ticker));
}

TEST(FakeClockTickerTest, StopAndReset) {
  FakeClock clock;
  std::unique_ptr<Ticker> ticker = clock.NewTicker(absl::Seconds(10));
  clock.Advance(absl::Seconds(10));
  ticker->Stop();
  EXPECT_FALSE(Ticked(*ticker));  // the pending tick is dropped
  clock.Advance(absl::Seconds(100));
  EXPECT_FALSE(Ticked(*ticker));
  EXPECT_EQ(clock.ArmedTimers(), 0);

  ticker->Reset(absl::Seconds(3));
  clock.Advance(absl::Seconds(3));
  EXPECT_TRUE(Ticked(*ticker));
  clock.Advance(absl::Seconds(3));
  EXPECT_TRUE(Ticked(*ticker));
}

TEST(FakeClockTickerTest, WaitEndsWithTheContext) {
  FakeClock clock;
  std::unique_ptr<Ticker> ticker = clock.NewTicker(absl::Hours(1));
  auto [ctx, cancel] = WithCancel(Context::Background());
  absl::Status got;
  std::thread waiter([&, ctx = ctx] { got = ticker->Wait(ctx); });
  cancel();
  waiter.join();
  EXPECT_EQ(got.code(), absl::StatusCode::kCancelled);
}

TEST(RealClockTest, TimersAndTickersFire) {
  const Clock* clock = Clock::Real();
  EXPECT_TRUE(
      clock->NewTimer(absl::Milliseconds(1))->Wait(Context::Background()).ok());
  Notification called;
  auto timer =
      clock->AfterFunc(absl::Milliseconds(1), [&] { called.Notify(); });
  called.WaitForNotification();
  std::unique_ptr<Ticker> ticker = clock->NewTicker(absl::Milliseconds(1));
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(ticker->Wait(Context::Background()).ok());
  ticker->Stop();
  EXPECT_TRUE(clock->Sleep(Context::Background(), absl::Milliseconds(1)).ok());
}

TEST(RealClockTest, SleepEndsWithItsContext) {
  const Clock* clock = Clock::Real();
  auto [ctx, cancel] = WithCancel(Context::Background());
  absl::Status slept;
  std::thread sleeper(
      [&, ctx = ctx] { slept = clock->Sleep(ctx, absl::Hours(1)); });
  cancel();
  sleeper.join();
  EXPECT_EQ(slept.code(), absl::StatusCode::kCancelled);

  auto [timed, cancel_timed] =
      WithTimeout(Context::Background(), absl::Milliseconds(1));
  EXPECT_EQ(clock->Sleep(timed, absl::Hours(1)).code(),
            absl::StatusCode::kDeadlineExceeded);
  cancel_timed();
}

TEST(RealClockTest, ManyTimersFromManyThreads) {
  const Clock* clock = Clock::Real();
  std::atomic<int> fired{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < 50; ++j) {
        auto t = clock->AfterFunc(absl::Microseconds((i * 50 + j) % 7),
                                  [&] { ++fired; });
        if (j % 3 == 0) {
          t->Stop();
        } else {
          t->Wait(Context::Background()).IgnoreError();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  // Each thread waits for 33 of its 50 timers (those with j % 3 != 0), whose
  // callbacks have run by the time the timer is destroyed; the 17 it stops
  // may have fired before Stop.
  EXPECT_GE(fired.load(), 8 * 33);
  EXPECT_LE(fired.load(), 8 * 50);
}

}  // namespace
}  // namespace kcr
