#include "test/fuzz/server_stack.h"

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kcr {
namespace fuzz {
namespace {

void* Trampoline(void* arg) {
  (*static_cast<const std::function<void()>*>(arg))();
  return nullptr;
}

}  // namespace

void RunWithStack(size_t stack_bytes, const std::function<void()>& fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  if (rc == 0) {
    rc = pthread_create(&thread, &attr, &Trampoline,
                        const_cast<std::function<void()>*>(&fn));
  }
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    std::fprintf(stderr, "RunWithStack: cannot start a thread: %s\n",
                 std::strerror(rc));
    std::abort();
  }
  pthread_join(thread, nullptr);
}

}  // namespace fuzz
}  // namespace kcr
