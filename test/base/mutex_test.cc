#include "base/mutex.h"

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
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
  EXPECT_FALSE(
      mu.AwaitWithTimeout(absl::Condition(&never), absl::Milliseconds(5)));
}

// Blocks until the thread `tid` of this process is asleep in the kernel
// (state S in /proc): a thread that has just said it is about to wait
// is then inside that wait.
void AwaitAsleep(pid_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
  while (true) {
    std::ifstream in(path);
    std::string stat((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    // "tid (comm) S ...": the state follows the last ')'.
    const size_t paren = stat.rfind(')');
    ASSERT_NE(paren, std::string::npos) << path;
    if (stat.size() > paren + 2 && stat[paren + 2] == 'S') return;
    std::this_thread::yield();
  }
}

// The signaller takes the mutex only after the waiter has said, under it,
// that it is about to wait; since the waiter holds the mutex from then
// until Wait releases it, the waiter is blocked inside Wait when Signal
// runs. A lost wake-up would hang the test (Bazel's timeout fails it).
TEST(CondVarTest, SignalWakesAWaiterThatIsAlreadyWaiting) {
  Mutex mu;
  CondVar cv;
  bool waiting = false;  // guarded by mu
  bool ready = false;    // guarded by mu
  int wakeups = 0;       // guarded by mu
  std::thread waiter([&] {
    MutexLock lock(&mu);
    waiting = true;
    while (!ready) {
      cv.Wait(&mu);
      ++wakeups;
    }
  });
  while (true) {
    MutexLock lock(&mu);  // free only while the waiter is inside Wait
    if (waiting) {
      ready = true;
      cv.Signal();
      break;
    }
  }
  waiter.join();
  MutexLock lock(&mu);
  EXPECT_GE(wakeups, 1);
}

TEST(CondVarTest, SignalAfterUnlockWakesAWaiterThatIsAlreadyWaiting) {
  Mutex mu;
  CondVar cv;
  bool waiting = false;
  bool ready = false;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    waiting = true;
    while (!ready) cv.Wait(&mu);
  });
  while (true) {
    {
      MutexLock lock(&mu);
      if (!waiting) continue;
      ready = true;
    }
    cv.Signal();
    break;
  }
  waiter.join();
}

TEST(CondVarTest, SignalAllWakesEveryWaiterThatIsAlreadyWaiting) {
  constexpr int kWaiters = 4;
  Mutex mu;
  CondVar cv;
  int waiting = 0;
  bool ready = false;
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&] {
      MutexLock lock(&mu);
      ++waiting;
      while (!ready) cv.Wait(&mu);
    });
  }
  while (true) {
    MutexLock lock(&mu);
    if (waiting == kWaiters) {  // every waiter has released mu inside Wait
      ready = true;
      cv.SignalAll();
      break;
    }
  }
  for (auto& t : waiters) t.join();
}

// As for CondVar: the waiter says under the mutex that it is about to
// Await; the setter can take the mutex only once Await has released it.
// Making the condition true and releasing the mutex must wake the waiter.
TEST(MutexTest, AwaitWakesAWaiterThatIsAlreadyWaiting) {
  Mutex mu;
  bool waiting = false;
  bool ready = false;
  std::thread waiter([&] {
    MutexLock lock(&mu);
    waiting = true;
    mu.Await(absl::Condition(&ready));
    EXPECT_TRUE(ready);
  });
  while (true) {
    MutexLock lock(&mu);
    if (waiting) {
      ready = true;
      break;
    }
  }
  waiter.join();
}

// A thread leaving the mutex inside CondVar::Wait counts as a release for
// a thread inside Await on the same mutex.
TEST(MutexTest, AwaitWakesWhenAnotherThreadWaitsOnACondVar) {
  Mutex mu;
  CondVar cv;
  bool awaiting = false;
  bool flag = false;
  bool done = false;
  std::thread awaiter([&] {
    MutexLock lock(&mu);
    awaiting = true;
    mu.Await(absl::Condition(&flag));
    done = true;
    cv.Signal();
  });
  {
    MutexLock lock(&mu);
    mu.Await(absl::Condition(&awaiting));  // the awaiter is inside Await
    flag = true;
    while (!done) cv.Wait(&mu);
  }
  awaiter.join();
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

// Notification keeps its mutex private, so the test cannot take it to know
// that the waiter is inside WaitForNotification. It asks the kernel
// instead: once the waiter has published its thread id, the only thing it
// does is WaitForNotification, and nothing else holds the notification's
// mutex, so when the kernel reports the thread asleep it is blocked inside
// that wait.
TEST(NotificationTest, NotifyWakesAWaiterThatIsAlreadyWaiting) {
  Notification done;
  Mutex mu;
  pid_t tid = 0;  // guarded by mu
  bool returned = false;
  std::thread waiter([&] {
    {
      MutexLock lock(&mu);
      tid = static_cast<pid_t>(syscall(SYS_gettid));
    }
    done.WaitForNotification();
    MutexLock lock(&mu);
    returned = true;
  });
  pid_t waiter_tid = 0;
  {
    MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](pid_t* t) { return *t != 0; }, &tid));
    waiter_tid = tid;
  }
  AwaitAsleep(waiter_tid);
  {
    MutexLock lock(&mu);
    EXPECT_FALSE(returned);
  }
  done.Notify();
  waiter.join();
  MutexLock lock(&mu);
  EXPECT_TRUE(returned);
}

TEST(NotificationTest, WaitWithTimeoutWakesWhenNotifiedWhileWaiting) {
  Notification done;
  Mutex mu;
  pid_t tid = 0;
  bool notified_in_time = false;
  std::thread waiter([&] {
    {
      MutexLock lock(&mu);
      tid = static_cast<pid_t>(syscall(SYS_gettid));
    }
    // Long enough never to expire first on any machine: the wake-up comes
    // from Notify.
    const bool got = done.WaitForNotificationWithTimeout(absl::Hours(1));
    MutexLock lock(&mu);
    notified_in_time = got;
  });
  pid_t waiter_tid = 0;
  {
    MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](pid_t* t) { return *t != 0; }, &tid));
    waiter_tid = tid;
  }
  AwaitAsleep(waiter_tid);
  done.Notify();
  waiter.join();
  MutexLock lock(&mu);
  EXPECT_TRUE(notified_in_time);
}

}  // namespace
}  // namespace kcr
