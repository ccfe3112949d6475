// The operator's cleanup handlers run when the process gets SIGTERM, before
// RunOperator returns (kopf's on.cleanup). A binary of its own: the signal
// handler is installed once per process.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "base/context.h"
#include "base/signal_handler.h"
#include "gtest/gtest.h"
#include "runtime/handlers/registry.h"
#include "test/controllers/manager_test_fixture.h"
#include "test/runtime/handlers/handlers_test_util.h"

namespace kcr::handlers {
namespace {

const api::GroupVersionResource kGvr = testing::kKopfExampleGvr;

class SigtermTest : public testing::ManagerTestFixture {};

TEST_F(SigtermTest, CleanupHandlersRunOnSigtermBeforeTheOperatorReturns) {
  StartServer();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_NO_FATAL_FAILURE(InstallCrd(testing::kKopfExampleCrdYaml));

  Registry registry;
  std::atomic<int> created{0};
  std::atomic<int> cleanups{0};
  std::atomic<bool> returned{false};
  registry.For(kGvr).OnCreate("create", [&](HandlerContext&) {
    ++created;
    return Outcome::Success();
  });
  registry.OnCleanup("bye", [&](ActivityContext&) {
    // The operator has not returned yet when its cleanup runs.
    EXPECT_FALSE(returned.load());
    ++cleanups;
    return Outcome::Success();
  });
  RunOptions options;
  options.config = config_;

  const Context ctx = SetupSignalHandler();
  absl::Status status;
  std::thread run([&] {
    status = RunOperator(registry, options, ctx);
    returned = true;
  });

  auto obj = testing::KopfExample("a");
  ASSERT_TRUE(obj.ok()) << obj.status();
  ASSERT_TRUE(client_
                  ->Create(Context::Background(),
                           client::Resource::Namespaced(kGvr, "default"), **obj)
                  .ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (created.load() == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(created.load(), 1);
  EXPECT_EQ(cleanups.load(), 0);

  ASSERT_EQ(kill(getpid(), SIGTERM), 0);
  run.join();
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(cleanups.load(), 1);
}

}  // namespace
}  // namespace kcr::handlers
