#include "test/fuzz/server_stack.h"

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "base/mutex.h"

namespace kcr {
namespace fuzz {
namespace {

// One long-lived thread with a given stack that runs the functions handed
// to it, one at a time. A fuzzer runs thousands of inputs a second; a new
// thread per input (whose stack AddressSanitizer maps and poisons each
// time) would cost more than most inputs.
class StackWorker {
 public:
  explicit StackWorker(size_t stack_bytes) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    int rc = pthread_attr_setstacksize(&attr, stack_bytes);
    pthread_t thread;
    if (rc == 0) rc = pthread_create(&thread, &attr, &StackWorker::Main, this);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
      std::fprintf(stderr, "RunWithStack: cannot start a thread: %s\n",
                   std::strerror(rc));
      std::abort();
    }
    pthread_detach(thread);
  }

  // Runs `fn` on the worker and returns when it has finished.
  void Run(const std::function<void()>& fn) {
    MutexLock caller(&run_mu_);
    MutexLock lock(&mu_);
    job_ = &fn;
    mu_.Await(absl::Condition(
        +[](const std::function<void()>** job) { return *job == nullptr; },
        &job_));
  }

 private:
  static void* Main(void* self) {
    static_cast<StackWorker*>(self)->Loop();
    return nullptr;
  }

  void Loop() {
    while (true) {
      const std::function<void()>* job;
      {
        MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](const std::function<void()>** j) { return *j != nullptr; },
            &job_));
        job = job_;
      }
      (*job)();
      MutexLock lock(&mu_);
      job_ = nullptr;
    }
  }

  // kcr::Mutex, not absl::Mutex: ThreadSanitizer sees its edges.
  Mutex run_mu_;  // one caller at a time
  Mutex mu_;
  const std::function<void()>* job_ ABSL_GUARDED_BY(mu_) = nullptr;
};

// Workers live for the whole process (a fuzzer ends with exit(), and a
// test's worker waits idle until then), so none of this is ever destroyed.
struct Workers {
  Mutex mu;
  std::map<size_t, StackWorker*> by_stack ABSL_GUARDED_BY(mu);
};

Workers& AllWorkers() {
  static Workers* const workers = new Workers();
  return *workers;
}

}  // namespace

void RunWithStack(size_t stack_bytes, const std::function<void()>& fn) {
  Workers& all = AllWorkers();
  StackWorker* worker;
  {
    MutexLock lock(&all.mu);
    StackWorker*& slot = all.by_stack[stack_bytes];
    if (slot == nullptr) slot = new StackWorker(stack_bytes);
    worker = slot;
  }
  worker->Run(fn);
}

}  // namespace fuzz
}  // namespace kcr
