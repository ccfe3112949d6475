#include "base/rw_mutex.h"

#include "glog/logging.h"

namespace kcr {

RwMutex::RwMutex() {
  pthread_rwlockattr_t attr;
  pthread_rwlockattr_init(&attr);
  // glibc's default prefers readers, which lets overlapping readers hold a
  // writer out indefinitely.
  pthread_rwlockattr_setkind_np(&attr,
                                PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  CHECK_EQ(pthread_rwlock_init(&rw_, &attr), 0);
  pthread_rwlockattr_destroy(&attr);
}

RwMutex::~RwMutex() { pthread_rwlock_destroy(&rw_); }

void RwMutex::Lock() { CHECK_EQ(pthread_rwlock_wrlock(&rw_), 0); }

void RwMutex::Unlock() { pthread_rwlock_unlock(&rw_); }

void RwMutex::ReaderLock() { CHECK_EQ(pthread_rwlock_rdlock(&rw_), 0); }

void RwMutex::ReaderUnlock() { pthread_rwlock_unlock(&rw_); }

}  // namespace kcr
