#include "base/mutex.h"

#include <errno.h>
#include <time.h>

#include "glog/logging.h"

namespace kcr {
namespace {

// pthread condition variables here wait on CLOCK_MONOTONIC, so a wall-clock
// step does not stretch or cut a wait. Deadlines arrive as wall-clock
// absl::Time and are converted through the remaining duration.
timespec MonotonicDeadline(absl::Time deadline) {
  absl::Duration remaining = deadline - absl::Now();
  if (remaining < absl::ZeroDuration()) remaining = absl::ZeroDuration();
  if (remaining > absl::Hours(24 * 365)) remaining = absl::Hours(24 * 365);
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return absl::ToTimespec(absl::DurationFromTimespec(now) + remaining);
}

void InitCond(pthread_cond_t* cv) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  CHECK_EQ(pthread_cond_init(cv, &attr), 0);
  pthread_condattr_destroy(&attr);
}

}  // namespace

Mutex::Mutex() {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
  CHECK_EQ(pthread_mutex_init(&mu_, &attr), 0);
  pthread_mutexattr_destroy(&attr);
  InitCond(&awaiters_cv_);
}

Mutex::~Mutex() {
  pthread_cond_destroy(&awaiters_cv_);
  pthread_mutex_destroy(&mu_);
}

void Mutex::Lock() { pthread_mutex_lock(&mu_); }

bool Mutex::TryLock() { return pthread_mutex_trylock(&mu_) == 0; }

void Mutex::Unlock() {
  // Every release may make some awaited condition true.
  if (awaiters_ > 0) pthread_cond_broadcast(&awaiters_cv_);
  pthread_mutex_unlock(&mu_);
}

void Mutex::Await(const absl::Condition& cond) {
  if (cond.Eval()) return;
  ++awaiters_;
  // Wake other awaiters too: the caller may have changed state before
  // deciding to wait, and nobody else will release the mutex for them.
  pthread_cond_broadcast(&awaiters_cv_);
  while (!cond.Eval()) pthread_cond_wait(&awaiters_cv_, &mu_);
  --awaiters_;
}

bool Mutex::AwaitWithDeadline(const absl::Condition& cond,
                              absl::Time deadline) {
  if (cond.Eval()) return true;
  ++awaiters_;
  pthread_cond_broadcast(&awaiters_cv_);
  const timespec ts = MonotonicDeadline(deadline);
  bool result = cond.Eval();
  while (!result) {
    if (pthread_cond_timedwait(&awaiters_cv_, &mu_, &ts) == ETIMEDOUT) {
      result = cond.Eval();
      break;
    }
    result = cond.Eval();
  }
  --awaiters_;
  return result;
}

bool Mutex::AwaitWithTimeout(const absl::Condition& cond,
                             absl::Duration timeout) {
  return AwaitWithDeadline(cond, absl::Now() + timeout);
}

CondVar::CondVar() { InitCond(&cv_); }

CondVar::~CondVar() { pthread_cond_destroy(&cv_); }

void CondVar::Wait(Mutex* mu) {
  // A thread leaving the mutex to wait counts as a release for awaiters.
  if (mu->awaiters_ > 0) pthread_cond_broadcast(&mu->awaiters_cv_);
  pthread_cond_wait(&cv_, &mu->mu_);
}

bool CondVar::WaitWithDeadline(Mutex* mu, absl::Time deadline) {
  if (mu->awaiters_ > 0) pthread_cond_broadcast(&mu->awaiters_cv_);
  const timespec ts = MonotonicDeadline(deadline);
  return pthread_cond_timedwait(&cv_, &mu->mu_, &ts) == ETIMEDOUT;
}

bool CondVar::WaitWithTimeout(Mutex* mu, absl::Duration timeout) {
  return WaitWithDeadline(mu, absl::Now() + timeout);
}

void CondVar::Signal() { pthread_cond_signal(&cv_); }

void CondVar::SignalAll() { pthread_cond_broadcast(&cv_); }

void Notification::Notify() {
  MutexLock lock(&mu_);
  CHECK(!notified_) << "Notification::Notify called twice";
  notified_ = true;
}

bool Notification::HasBeenNotified() const {
  MutexLock lock(&mu_);
  return notified_;
}

void Notification::WaitForNotification() const {
  MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &Notification::NotifiedLocked));
}

bool Notification::WaitForNotificationWithTimeout(
    absl::Duration timeout) const {
  MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(
      absl::Condition(this, &Notification::NotifiedLocked), timeout);
}

}  // namespace kcr
