#include "runtime/base/mutex.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace kcr {
namespace {

TEST(MutexTest, GuardsACounterAcrossThreads) {
  Mutex mu;
  int counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        MutexLock lock(&mu);
        ++counter;
      }
    });
  }
  for (auto& t : threads) t.join();
  MutexLock lock(&mu);
  EXPECT_EQ(counter, 40000);
}

TEST(MutexTest, AwaitWakesWhenAnotherThreadMakesTheConditionTrue) {
  Mutex mu;
  bool ready = false;
  std::thread setter([&] {
    MutexLock lock(&mu);
    ready = true;
  });
  {
    MutexLock lock(&mu);
    mu.Await(absl::Condition(&ready));
    EXPECT_TRUE(ready);
  }
  setter.join();
}

TEST(MutexTest, AwaitWithTimeoutReturnsFalseWhenNothingHappens) {
  Mutex mu;
  bool never = false;
  MutexLock lock(&mu);
  EXPECT_FALSE(mu.AwaitWithTimeout(absl::Condition(&never),
                                   absl::Milliseconds(5)));
}

TEST(CondVarTest, SignalWakesAWaiter) {
  Mutex mu;
  CondVar cv;
  bool ready = false;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    while (!ready) cv.Wait(&mu);
  });
  {
    MutexLock lock(&mu);
    ready = true;
  }
  cv.Signal();
  waiter.join();
}

TEST(NotificationTest, NotifyReleasesEveryWaiter) {
  Notification done;
  std::vector<std::thread> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.emplace_back([&] { done.WaitForNotification(); });
  }
  EXPECT_FALSE(done.HasBeenNotified());
  EXPECT_FALSE(done.WaitForNotificationWithTimeout(absl::Milliseconds(1)));
  done.Notify();
  for (auto& t : waiters) t.join();
  EXPECT_TRUE(done.HasBeenNotified());
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::ZeroDuration()));
}

}  // namespace
}  // namespace kcr
