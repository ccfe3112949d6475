// Eventually: waits in real time for something another thread does (a
// dispatcher, a controller, a server) to become true.
#ifndef KCR_TEST_UTIL_EVENTUALLY_H_
#define KCR_TEST_UTIL_EVENTUALLY_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kcr::testing {

// Polls `done` until it returns true or `timeout` of real time passes;
// returns its last answer. The timeout is generous: it only matters when
// the test fails, and sanitizer builds are slow.
template <typename F>
bool Eventually(F done, absl::Duration timeout = absl::Seconds(20)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return done();
}

}  // namespace kcr::testing

#endif  // KCR_TEST_UTIL_EVENTUALLY_H_
