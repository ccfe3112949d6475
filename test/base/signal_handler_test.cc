#include "base/signal_handler.h"

#include <signal.h>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace kcr {
namespace {

bool WaitDone(const Context& ctx) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!ctx.done() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  return ctx.done();
}

// Each case runs in a process of its own (death tests re-run the binary
// for the one case), since the handler is process-wide and once only.
class SignalHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(SignalHandlerTest, FirstSigtermEndsTheContextSecondExits) {
  EXPECT_EXIT(
      {
        Context ctx = SetupSignalHandler();
        if (ctx.done()) _exit(3);
        raise(SIGTERM);
        if (!WaitDone(ctx)) _exit(4);
        if (ctx.Err().code() != absl::StatusCode::kCancelled) _exit(5);
        raise(SIGTERM);
        absl::SleepFor(absl::Seconds(30));
        _exit(6);
      },
      ::testing::ExitedWithCode(1), "received signal Terminated");
}

TEST_F(SignalHandlerTest, SigintEndsTheContext) {
  EXPECT_EXIT(
      {
        Context ctx = SetupSignalHandler();
        raise(SIGINT);
        _exit(WaitDone(ctx) ? 0 : 4);
      },
      ::testing::ExitedWithCode(0), "received signal Interrupt");
}

TEST_F(SignalHandlerTest, SecondSetupIsAProgrammerError) {
  EXPECT_DEATH(
      {
        SetupSignalHandler();
        SetupSignalHandler();
      },
      "SetupSignalHandler called twice");
}

}  // namespace
}  // namespace kcr
