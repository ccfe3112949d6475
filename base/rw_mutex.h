// RwMutex: a reader-writer lock with the same thread-safety annotations as
// kcr::Mutex (base/mutex.h), built on pthread_rwlock so that
// ThreadSanitizer sees its happens-before edges.
//
// Any number of readers hold it together; a writer holds it alone. It
// prefers writers: once a writer waits, new readers queue behind it, so a
// steady stream of readers cannot starve a writer. The price is that a
// thread must never take the read lock twice (the second attempt can block
// behind a waiting writer and deadlock); RwMutex is not reentrant in either
// mode.
#ifndef KCR_BASE_RW_MUTEX_H_
#define KCR_BASE_RW_MUTEX_H_

#include <pthread.h>

#include "absl/base/thread_annotations.h"

namespace kcr {

class ABSL_LOCKABLE RwMutex {
 public:
  RwMutex();
  ~RwMutex();
  RwMutex(const RwMutex&) = delete;
  RwMutex& operator=(const RwMutex&) = delete;

  // Exclusive (writer) mode.
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION();
  void Unlock() ABSL_UNLOCK_FUNCTION();

  // Shared (reader) mode.
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION();
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION();

  // Tell the analysis what the caller holds; no run-time check.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}
  void AssertReaderHeld() const ABSL_ASSERT_SHARED_LOCK() {}

 private:
  pthread_rwlock_t rw_;
};

// Holds an RwMutex in shared mode for the lifetime of the scope.
class ABSL_SCOPED_LOCKABLE ReaderMutexLock {
 public:
  explicit ReaderMutexLock(RwMutex* mu) ABSL_SHARED_LOCK_FUNCTION(mu)
      : mu_(mu) {
    mu_->ReaderLock();
  }
  ~ReaderMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->ReaderUnlock(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  RwMutex* const mu_;
};

// Holds an RwMutex in exclusive mode for the lifetime of the scope.
class ABSL_SCOPED_LOCKABLE WriterMutexLock {
 public:
  explicit WriterMutexLock(RwMutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(mu) {
    mu_->Lock();
  }
  ~WriterMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  RwMutex* const mu_;
};

}  // namespace kcr

#endif  // KCR_BASE_RW_MUTEX_H_
