#include "test/fakes/fake_clock.h"

#include <utility>

#include "base/internal/queue_timer.h"

namespace kcr::testing {
namespace {
// How long a waiter sleeps in real time before it looks at fake time again.
constexpr absl::Duration kPollInterval = absl::Milliseconds(1);
}  // namespace

FakeClock::FakeClock(absl::Time start) : now_(start) {}

absl::Time FakeClock::Now() const {
  MutexLock lock(&mu_);
  return now_;
}

void FakeClock::WaitUntil(Mutex* mu, CondVar* cv, absl::Time deadline) const {
  {
    MutexLock lock(&mu_);
    if (now_ >= deadline) return;
    sleeping_[cv] = epoch_;
  }
  cv->WaitWithTimeout(mu, kPollInterval);
}

std::unique_ptr<Timer> FakeClock::AfterFunc(absl::Duration d,
                                            std::function<void()> fn) const {
  return internal::NewQueueTimer(this, &timers_, d, std::move(fn));
}

void FakeClock::SetTime(absl::Time t) {
  {
    MutexLock lock(&mu_);
    now_ = t;
    ++epoch_;
  }
  timers_.RunDue(t);
}

void FakeClock::Advance(absl::Duration d) {
  absl::Time now;
  {
    MutexLock lock(&mu_);
    now_ += d;
    now = now_;
    ++epoch_;
  }
  timers_.RunDue(now);
}

void FakeClock::BlockUntilTimers(int n) const { timers_.AwaitArmed(n); }

int FakeClock::ArmedTimers() const { return timers_.armed(); }

bool FakeClock::EnoughWaitersLocked(int n) const {
  int count = 0;
  for (const auto& [cv, epoch] : sleeping_) {
    if (epoch == epoch_) ++count;
  }
  return count >= n;
}

void FakeClock::BlockUntilWaiters(int n) const {
  std::pair<const FakeClock*, int> arg(this, n);
  MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](std::pair<const FakeClock*, int>* a) {
        a->first->mu_.AssertHeld();
        return a->first->EnoughWaitersLocked(a->second);
      },
      &arg));
}

}  // namespace kcr::testing
