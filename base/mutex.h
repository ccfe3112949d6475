// Mutex, CondVar and Notification: kcr's synchronisation primitives.
//
// Why not absl::Mutex: Debian's abseil is a prebuilt shared library that is
// not compiled with ThreadSanitizer, so TSan cannot see the happens-before
// edges absl::Mutex creates and reports false races on everything it guards.
// These types are built on pthreads, which TSan intercepts, and carry the
// same Clang thread-safety annotations, so `-Wthread-safety` checks every
// ABSL_GUARDED_BY field exactly as it would with absl::Mutex.
//
// The mutex is glibc's adaptive mutex: it spins briefly before sleeping,
// which suits the short critical sections of queues and caches.
#ifndef KCR_BASE_MUTEX_H_
#define KCR_BASE_MUTEX_H_

#include <pthread.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"  // absl::Condition
#include "absl/time/time.h"

namespace kcr {

class CondVar;

// A non-reentrant exclusive lock.
//
// Await() blocks until a condition holds; as with absl::Mutex the condition
// is re-evaluated whenever another thread releases the mutex, so callers
// never signal explicitly. Code on a hot path that knows exactly whom to
// wake uses a CondVar instead.
class ABSL_LOCKABLE Mutex {
 public:
  Mutex();
  ~Mutex();
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION();
  void Unlock() ABSL_UNLOCK_FUNCTION();
  bool TryLock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true);
  // Documents (and tells the analysis) that the caller holds the lock.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

  // Blocks until `cond` is true. The mutex is held on entry and on return;
  // it is released while waiting.
  void Await(const absl::Condition& cond) ABSL_EXCLUSIVE_LOCKS_REQUIRED(this);

  // As Await, but gives up at `deadline` (wall clock). Returns cond's value.
  bool AwaitWithDeadline(const absl::Condition& cond, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this);
  bool AwaitWithTimeout(const absl::Condition& cond, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(this);

 private:
  friend class CondVar;

  pthread_mutex_t mu_;
  // Signalled on Unlock while any thread is inside Await.
  pthread_cond_t awaiters_cv_;
  int awaiters_ ABSL_GUARDED_BY(this) = 0;
};

// Holds a Mutex for the lifetime of the scope.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable over kcr::Mutex, for code that wakes waiters one at
// a time. Spurious wake-ups are possible: wait in a loop.
class CondVar {
 public:
  CondVar();
  ~CondVar();
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases `mu` while waiting; holds it again on return.
  void Wait(Mutex* mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Returns true if the deadline (wall clock) passed.
  bool WaitWithDeadline(Mutex* mu, absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  bool WaitWithTimeout(Mutex* mu, absl::Duration timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  void Signal();
  void SignalAll();

 private:
  pthread_cond_t cv_;
};

// A one-shot event: Notify() once, any number of threads wait for it.
class Notification {
 public:
  Notification() = default;
  Notification(const Notification&) = delete;
  Notification& operator=(const Notification&) = delete;

  // Must be called at most once.
  void Notify();
  bool HasBeenNotified() const;
  void WaitForNotification() const;
  // Returns whether the notification happened within `timeout`.
  bool WaitForNotificationWithTimeout(absl::Duration timeout) const;

 private:
  bool NotifiedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return notified_;
  }

  mutable Mutex mu_;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kcr

#endif  // KCR_BASE_MUTEX_H_
