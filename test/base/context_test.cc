#include "base/context.h"

#include <atomic>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"

namespace kcr {
namespace {

using ::kcr::testing::FakeClock;

TEST(ContextTest, BackgroundIsNeverDone) {
  const Context ctx = Context::Background();
  EXPECT_FALSE(ctx.done());
  EXPECT_TRUE(ctx.Err().ok());
  EXPECT_EQ(ctx.deadline(), absl::InfiniteFuture());
  EXPECT_EQ(ctx.clock(), Clock::Real());
  bool called = false;
  Context::DoneCallback never = ctx.OnDone([&] { called = true; });
  EXPECT_FALSE(called);
}

TEST(ContextTest, CancelEndsTheContextAndEveryCopy) {
  auto [ctx, cancel] = WithCancel(Context::Background());
  const Context copy = ctx;
  EXPECT_FALSE(copy.done());
  cancel();
  EXPECT_TRUE(ctx.done());
  EXPECT_TRUE(copy.done());
  EXPECT_EQ(copy.Err(), absl::CancelledError("context canceled"));
  cancel();  // idempotent
  EXPECT_EQ(ctx.Err().code(), absl::StatusCode::kCancelled);
}

TEST(ContextTest, ChildrenEndWithTheirParentNotTheOtherWayRound) {
  auto [parent, cancel_parent] = WithCancel(Context::Background());
  auto [child, cancel_child] = WithCancel(parent);
  auto [grandchild, cancel_grandchild] = WithCancel(child);
  auto [sibling, cancel_sibling] = WithCancel(parent);

  cancel_child();
  EXPECT_TRUE(child.done());
  EXPECT_TRUE(grandchild.done());
  EXPECT_FALSE(parent.done());
  EXPECT_FALSE(sibling.done());

  cancel_parent();
  EXPECT_TRUE(sibling.done());
  EXPECT_EQ(sibling.Err().code(), absl::StatusCode::kCancelled);

  // A child of a context that is already done is done at once.
  auto [late, cancel_late] = WithCancel(parent);
  EXPECT_TRUE(late.done());
  cancel_grandchild();
  cancel_sibling();
  cancel_late();
}

TEST(ContextTest, DeadlineOnAFakeClock) {
  FakeClock clock;
  auto [ctx, cancel] =
      WithTimeout(Context::Background(), absl::Seconds(10), &clock);
  EXPECT_EQ(ctx.deadline(), clock.Now() + absl::Seconds(10));
  EXPECT_EQ(ctx.clock(), &clock);
  auto [child, cancel_child] = WithCancel(ctx);
  EXPECT_EQ(child.deadline(), ctx.deadline());

  clock.Advance(absl::Seconds(9));
  EXPECT_FALSE(ctx.done());
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(ctx.done());
  EXPECT_EQ(ctx.Err(),
            absl::DeadlineExceededError("context deadline exceeded"));
  EXPECT_EQ(child.Err().code(), absl::StatusCode::kDeadlineExceeded);
  cancel();  // the first ending stays
  EXPECT_EQ(ctx.Err().code(), absl::StatusCode::kDeadlineExceeded);
  cancel_child();
}

TEST(ContextTest, CancelBeforeTheDeadlineDisarmsItsTimer) {
  FakeClock clock;
  auto [ctx, cancel] =
      WithTimeout(Context::Background(), absl::Seconds(10), &clock);
  EXPECT_EQ(clock.ArmedTimers(), 1);
  cancel();
  EXPECT_EQ(clock.ArmedTimers(), 0);
  clock.Advance(absl::Seconds(20));
  EXPECT_EQ(ctx.Err().code(), absl::StatusCode::kCancelled);
}

TEST(ContextTest, PassedDeadlineEndsAtOnce) {
  FakeClock clock;
  auto [ctx, cancel] = WithDeadline(Context::Background(),
                                    clock.Now() - absl::Seconds(1), &clock);
  EXPECT_EQ(ctx.Err().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(clock.ArmedTimers(), 0);
  cancel();
}

TEST(ContextTest, ALaterDeadlineThanTheParentsKeepsTheParents) {
  FakeClock clock;
  auto [parent, cancel_parent] =
      WithTimeout(Context::Background(), absl::Seconds(5), &clock);
  auto [child, cancel_child] = WithTimeout(parent, absl::Seconds(50));
  EXPECT_EQ(child.deadline(), parent.deadline());
  EXPECT_EQ(child.clock(), &clock);
  auto [shorter, cancel_shorter] = WithTimeout(parent, absl::Seconds(1));
  EXPECT_EQ(shorter.deadline(), clock.Now() + absl::Seconds(1));
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(shorter.done());
  EXPECT_FALSE(parent.done());
  clock.Advance(absl::Seconds(4));
  EXPECT_EQ(child.Err().code(), absl::StatusCode::kDeadlineExceeded);
  cancel_parent();
  cancel_child();
  cancel_shorter();
}

TEST(ContextTest, OnDoneRunsOnceAndCanBeWithdrawn) {
  auto [ctx, cancel] = WithCancel(Context::Background());
  int runs = 0;
  int withdrawn_runs = 0;
  Context::DoneCallback kept = ctx.OnDone([&] { ++runs; });
  Context::DoneCallback withdrawn = ctx.OnDone([&] { ++withdrawn_runs; });
  withdrawn.Reset();
  cancel();
  cancel();
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(withdrawn_runs, 0);
  // Registered after the end: runs at once, here.
  Context::DoneCallback late = ctx.OnDone([&] { ++runs; });
  EXPECT_EQ(runs, 2);
}

TEST(ContextTest, WithdrawingWaitsForItsRunningCallback) {
  auto [ctx, cancel] = WithCancel(Context::Background());
  Notification entered;
  Notification release;
  std::atomic<bool> finished{false};
  Context::DoneCallback slow = ctx.OnDone([&] {
    entered.Notify();
    release.WaitForNotification();
    finished = true;
  });
  std::thread canceller([&, cancel = cancel] { cancel(); });
  entered.WaitForNotification();
  std::thread withdrawer([&] {
    slow.Reset();
    // Reset returned: the callback is over, its captures may go.
    EXPECT_TRUE(finished.load());
  });
  release.Notify();
  withdrawer.join();
  canceller.join();
}

TEST(ContextTest, CondVarWaitEndsWithTheContext) {
  auto [ctx, cancel] = WithCancel(Context::Background());
  Mutex mu;
  ContextCondVar cv;
  bool ready = false;
  absl::Status got;
  std::thread waiter([&, ctx = ctx] {
    MutexLock lock(&mu);
    got = cv.Await(&mu, ctx, absl::Condition(&ready));
  });
  {
    // The canceller may hold the waiter's mutex: the wake-up does not need it.
    MutexLock lock(&mu);
    cancel();
  }
  waiter.join();
  EXPECT_EQ(got.code(), absl::StatusCode::kCancelled);
}

TEST(ContextTest, CondVarWaitEndsWithTheCondition) {
  const Context ctx = Context::Background();
  Mutex mu;
  ContextCondVar cv;
  bool ready = false;
  absl::Status got = absl::UnknownError("not run");
  std::thread waiter([&] {
    MutexLock lock(&mu);
    got = cv.Await(&mu, ctx, absl::Condition(&ready));
  });
  {
    MutexLock lock(&mu);
    ready = true;
  }
  cv.SignalAll();
  waiter.join();
  EXPECT_TRUE(got.ok());
}

TEST(ContextTest, CondVarDeadlineOnTheRealClock) {
  auto [ctx, cancel] =
      WithTimeout(Context::Background(), absl::Milliseconds(5));
  Mutex mu;
  ContextCondVar cv;
  bool never = false;
  MutexLock lock(&mu);
  EXPECT_EQ(cv.Await(&mu, ctx, absl::Condition(&never)).code(),
            absl::StatusCode::kDeadlineExceeded);
  cancel();
}

TEST(ContextTest, WaitUntilDoneReturnsAtOnceForAContextAlreadyDone) {
  auto [ctx, cancel] = WithCancel(Context::Background());
  cancel();
  WaitUntilDone(ctx);
  EXPECT_TRUE(WaitUntilDone(ctx, absl::Hours(1)));
}

TEST(ContextTest, WaitUntilDoneEndsWhenAnotherThreadCancels) {
  auto [ctx, cancel] = WithCancel(Context::Background());
  std::atomic<bool> returned{false};
  std::thread waiter([&returned, ctx = ctx] {
    WaitUntilDone(ctx);
    returned.store(true);
  });
  cancel();
  waiter.join();
  EXPECT_TRUE(returned.load());
}

TEST(ContextTest, WaitUntilDoneEndsWithTheDeadlineOnAFakeClock) {
  FakeClock clock;
  auto [ctx, cancel] =
      WithTimeout(Context::Background(), absl::Seconds(10), &clock);
  std::thread waiter([ctx = ctx] { WaitUntilDone(ctx); });
  clock.BlockUntilTimers(1);
  clock.Advance(absl::Seconds(10));
  waiter.join();
  EXPECT_EQ(ctx.Err().code(), absl::StatusCode::kDeadlineExceeded);
  cancel();
}

TEST(ContextTest, WaitUntilDoneWithATimeoutSaysWhetherTheContextEnded) {
  FakeClock clock;
  auto [ctx, cancel] = WithCancel(Context::Background());
  bool done = true;
  std::thread timed_out([&done, &clock, ctx = ctx] {
    done = WaitUntilDone(ctx, absl::Seconds(5), &clock);
  });
  // The wait has armed its timer on the fake clock.
  clock.BlockUntilTimers(1);
  clock.Advance(absl::Seconds(5));
  timed_out.join();
  EXPECT_FALSE(done);
  EXPECT_FALSE(ctx.done());

  std::thread cancelled([&done, &clock, ctx = ctx] {
    done = WaitUntilDone(ctx, absl::Seconds(5), &clock);
  });
  clock.BlockUntilTimers(1);
  cancel();
  cancelled.join();
  EXPECT_TRUE(done);
}

// Many threads making, cancelling and waiting on contexts of one tree while
// the root ends: for ThreadSanitizer, and for deadlocks.
TEST(ContextTest, ConcurrentTreesEndCleanly) {
  for (int round = 0; round < 20; ++round) {
    auto [root, cancel_root] = WithCancel(Context::Background());
    std::vector<std::thread> threads;
    std::atomic<int> ended{0};
    for (int i = 0; i < 8; ++i) {
      threads.emplace_back([&, root = root, i] {
        auto [child, cancel_child] = WithCancel(root);
        auto [timed, cancel_timed] = WithTimeout(child, absl::Milliseconds(i));
        if (i % 2 == 0) cancel_child();
        Mutex mu;
        ContextCondVar cv;
        bool never = false;
        MutexLock lock(&mu);
        if (!cv.Await(&mu, timed, absl::Condition(&never)).ok()) ++ended;
        cancel_timed();
      });
    }
    cancel_root();
    for (auto& t : threads) t.join();
    EXPECT_EQ(ended.load(), 8);
  }
}

}  // namespace
}  // namespace kcr
