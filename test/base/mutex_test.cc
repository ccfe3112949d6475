#include "base/mutex.h"

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kcr {
namespace {

// How long a test waits for a wake-up before it calls it lost: long enough
// never to run out on a loaded machine (or under TSan), short enough that a
// lost wake-up fails the test before Bazel's timeout kills it.
constexpr absl::Duration kHangGuard = absl::Seconds(10);

// A thread that a test can give up on. Its hang guard is a std::future,
// independent of the primitives under test. Join waits up to kHangGuard for
// the body to return and joins it; a body that does not return is detached
// (left blocked until the test binary exits), so it must own what it uses
// (capture a shared_ptr, not references to the test's locals).
class GuardedThread {
 public:
  explicit GuardedThread(std::function<void()> body) {
    std::promise<void> returned;
    returned_ = returned.get_future();
    thread_ = std::thread(
        [body = std::move(body), returned = std::move(returned)]() mutable {
          body();
          returned.set_value();
        });
  }
  ~GuardedThread() {
    if (thread_.joinable()) thread_.detach();
  }

  // True if the body returned by `deadline` (by default, within kHangGuard).
  bool Join(absl::Time deadline = absl::Now() + kHangGuard) {
    if (returned_.wait_until(absl::ToChronoTime(deadline)) !=
        std::future_status::ready) {
      thread_.detach();
      return false;
    }
    thread_.join();
    return true;
  }

 private:
  std::future<void> returned_;
  std::thread thread_;
};

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
// runs. A lost wake-up fails the test once the hang guard runs out.
TEST(CondVarTest, SignalWakesAWaiterThatIsAlreadyWaiting) {
  struct State {
    Mutex mu;
    CondVar cv;
    bool waiting = false;  // guarded by mu
    bool ready = false;    // guarded by mu
    int wakeups = 0;       // guarded by mu
  };
  auto s = std::make_shared<State>();
  GuardedThread waiter([s] {
    MutexLock lock(&s->mu);
    s->waiting = true;
    while (!s->ready) {
      s->cv.Wait(&s->mu);
      ++s->wakeups;
    }
  });
  while (true) {
    MutexLock lock(&s->mu);  // free only while the waiter is inside Wait
    if (s->waiting) {
      s->ready = true;
      s->cv.Signal();
      break;
    }
  }
  ASSERT_TRUE(waiter.Join()) << "the signal did not wake the waiter";
  MutexLock lock(&s->mu);
  EXPECT_GE(s->wakeups, 1);
}

TEST(CondVarTest, SignalAfterUnlockWakesAWaiterThatIsAlreadyWaiting) {
  struct State {
    Mutex mu;
    CondVar cv;
    bool waiting = false;
    bool ready = false;
  };
  auto s = std::make_shared<State>();
  GuardedThread waiter([s] {
    MutexLock lock(&s->mu);
    s->waiting = true;
    while (!s->ready) s->cv.Wait(&s->mu);
  });
  while (true) {
    {
      MutexLock lock(&s->mu);
      if (!s->waiting) continue;
      s->ready = true;
    }
    s->cv.Signal();
    break;
  }
  EXPECT_TRUE(waiter.Join()) << "the signal did not wake the waiter";
}

TEST(CondVarTest, SignalAllWakesEveryWaiterThatIsAlreadyWaiting) {
  constexpr int kWaiters = 4;
  struct State {
    Mutex mu;
    CondVar cv;
    int waiting = 0;
    bool ready = false;
  };
  auto s = std::make_shared<State>();
  std::vector<std::unique_ptr<GuardedThread>> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.push_back(std::make_unique<GuardedThread>([s] {
      MutexLock lock(&s->mu);
      ++s->waiting;
      while (!s->ready) s->cv.Wait(&s->mu);
    }));
  }
  while (true) {
    MutexLock lock(&s->mu);
    if (s->waiting == kWaiters) {  // every waiter has released mu inside Wait
      s->ready = true;
      s->cv.SignalAll();
      break;
    }
  }
  const absl::Time deadline = absl::Now() + kHangGuard;
  for (int i = 0; i < kWaiters; ++i) {
    EXPECT_TRUE(waiters[i]->Join(deadline))
        << "SignalAll did not wake waiter " << i;
  }
}

// As for CondVar: the waiter says under the mutex that it is about to
// Await; the setter can take the mutex only once Await has released it.
// Making the condition true and releasing the mutex must wake the waiter.
TEST(MutexTest, AwaitWakesAWaiterThatIsAlreadyWaiting) {
  struct State {
    Mutex mu;
    bool waiting = false;
    bool ready = false;
  };
  auto s = std::make_shared<State>();
  GuardedThread waiter([s] {
    MutexLock lock(&s->mu);
    s->waiting = true;
    s->mu.Await(absl::Condition(&s->ready));
    EXPECT_TRUE(s->ready);
  });
  while (true) {
    MutexLock lock(&s->mu);
    if (s->waiting) {
      s->ready = true;
      break;
    }
  }
  EXPECT_TRUE(waiter.Join()) << "the release did not wake the waiter";
}

// A thread leaving the mutex inside CondVar::Wait counts as a release for
// a thread inside Await on the same mutex. Both run on guarded threads: if
// the awaiter is not woken, neither returns.
TEST(MutexTest, AwaitWakesWhenAnotherThreadWaitsOnACondVar) {
  struct State {
    Mutex mu;
    CondVar cv;
    bool awaiting = false;
    bool flag = false;
    bool done = false;
  };
  auto s = std::make_shared<State>();
  GuardedThread awaiter([s] {
    MutexLock lock(&s->mu);
    s->awaiting = true;
    s->mu.Await(absl::Condition(&s->flag));
    s->done = true;
    s->cv.Signal();
  });
  GuardedThread waiter([s] {
    MutexLock lock(&s->mu);
    s->mu.Await(absl::Condition(&s->awaiting));  // the awaiter is inside Await
    s->flag = true;
    while (!s->done) s->cv.Wait(&s->mu);
  });
  const absl::Time deadline = absl::Now() + kHangGuard;
  EXPECT_TRUE(awaiter.Join(deadline))
      << "Wait's release did not wake the thread in Await";
  EXPECT_TRUE(waiter.Join(deadline));
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
  struct State {
    Notification done;
    // The waiter's thread id, published through a std::promise so that
    // nothing here but the notification itself relies on the primitives
    // under test.
    std::promise<pid_t> tid;
    std::atomic<bool> returned{false};
  };
  auto s = std::make_shared<State>();
  std::future<pid_t> tid = s->tid.get_future();
  GuardedThread waiter([s] {
    s->tid.set_value(static_cast<pid_t>(syscall(SYS_gettid)));
    s->done.WaitForNotification();
    s->returned = true;
  });
  ASSERT_EQ(tid.wait_for(absl::ToChronoSeconds(kHangGuard)),
            std::future_status::ready);
  AwaitAsleep(tid.get());
  EXPECT_FALSE(s->returned);
  s->done.Notify();
  ASSERT_TRUE(waiter.Join()) << "Notify did not wake the waiter";
  EXPECT_TRUE(s->returned);
}

TEST(NotificationTest, WaitWithTimeoutWakesWhenNotifiedWhileWaiting) {
  struct State {
    Notification done;
    std::promise<pid_t> tid;  // as above
    std::atomic<bool> notified_in_time{false};
  };
  auto s = std::make_shared<State>();
  std::future<pid_t> tid = s->tid.get_future();
  GuardedThread waiter([s] {
    s->tid.set_value(static_cast<pid_t>(syscall(SYS_gettid)));
    // Long enough never to expire first on any machine: the wake-up comes
    // from Notify.
    s->notified_in_time =
        s->done.WaitForNotificationWithTimeout(absl::Hours(1));
  });
  ASSERT_EQ(tid.wait_for(absl::ToChronoSeconds(kHangGuard)),
            std::future_status::ready);
  AwaitAsleep(tid.get());
  s->done.Notify();
  ASSERT_TRUE(waiter.Join()) << "Notify did not wake the waiter";
  EXPECT_TRUE(s->notified_in_time);
}

}  // namespace
}  // namespace kcr
