// Runs code on a thread with the local API server's connection-thread stack
// (apiserver/request_limits.h), so a fuzz target or a test meets the
// stack a request body meets in the server: recursion that would overflow
// there overflows here too, instead of passing on the 8 MiB main thread.
#ifndef KCR_TEST_FUZZ_SERVER_STACK_H_
#define KCR_TEST_FUZZ_SERVER_STACK_H_

#include <cstddef>
#include <functional>

#include "apiserver/endpoints/request_limits.h"

namespace kcr {
namespace fuzz {

// Runs `fn` on a thread whose stack is `stack_bytes`, and waits for it. The
// thread is started on the first call for that size and reused after (so
// `fn` starts on an empty stack each time); calls are serialised. Aborts if
// the thread cannot be started (a fuzz target must not silently skip its
// input).
void RunWithStack(size_t stack_bytes, const std::function<void()>& fn);

// RunWithStack with the server's connection-thread stack.
inline void RunOnServerStack(const std::function<void()>& fn) {
  RunWithStack(apiserver::kConnectionThreadStackBytes, fn);
}

}  // namespace fuzz
}  // namespace kcr

#endif  // KCR_TEST_FUZZ_SERVER_STACK_H_
