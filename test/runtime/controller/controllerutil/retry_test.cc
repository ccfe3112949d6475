#include "runtime/controller/controllerutil/retry.h"

#include <atomic>
#include <thread>
#include <vector>

#include "api/errors/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"

namespace kcr::controller::controllerutil {
namespace {

using ::testing::ElementsAre;

const api::GroupResource kConfigMaps{"", "configmaps"};

absl::Status Conflict() {
  return api::StatusError::StaleConflict(kConfigMaps, "x").ToStatus();
}

class RetryOnConflictTest : public ::testing::Test {
 protected:
  RetryOptions Options() {
    RetryOptions options;
    options.sleep = [this](absl::Duration d) { sleeps_.push_back(d); };
    options.random = [] { return 0.5; };
    return options;
  }
  std::vector<absl::Duration> sleeps_;
};

TEST_F(RetryOnConflictTest, SucceedsAtOnce) {
  int calls = 0;
  EXPECT_TRUE(RetryOnConflict(Context::Background(), Options(), [&] {
                ++calls;
                return absl::OkStatus();
              }).ok());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(RetryOnConflictTest, RetriesConflictsWithDefaultRetry) {
  int calls = 0;
  absl::Status s = RetryOnConflict(Context::Background(), Options(), [&] {
    return ++calls < 3 ? Conflict() : absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(calls, 3);
  // 10 ms plus half of the 10% jitter.
  EXPECT_THAT(sleeps_, ElementsAre(absl::Microseconds(10500),
                                   absl::Microseconds(10500)));
}

TEST_F(RetryOnConflictTest, GivesUpAfterFiveAttempts) {
  int calls = 0;
  absl::Status s = RetryOnConflict(Context::Background(), Options(), [&] {
    ++calls;
    return Conflict();
  });
  EXPECT_TRUE(api::IsConflict(s)) << s;
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(sleeps_.size(), 4u);
}

TEST_F(RetryOnConflictTest, OtherErrorsAreNotRetried) {
  int calls = 0;
  absl::Status s = RetryOnConflict(Context::Background(), Options(), [&] {
    ++calls;
    return api::StatusError::NotFound(kConfigMaps, "x").ToStatus();
  });
  EXPECT_TRUE(api::IsNotFound(s));
  EXPECT_EQ(calls, 1);
}

TEST_F(RetryOnConflictTest, BackoffGrowsByFactorUpToCap) {
  RetryOptions options = Options();
  options.backoff =
      Backoff{5, absl::Milliseconds(10), 2.0, 0.0, absl::Milliseconds(30)};
  (void)RetryOnConflict(Context::Background(), options,
                        [] { return Conflict(); });
  EXPECT_THAT(sleeps_,
              ElementsAre(absl::Milliseconds(10), absl::Milliseconds(20),
                          absl::Milliseconds(30), absl::Milliseconds(30)));
}

TEST_F(RetryOnConflictTest, WaitsOnTheClockAndStopsWithTheContext) {
  testing::FakeClock clock;
  RetryOptions options;
  options.clock = &clock;
  auto [ctx_, cancel_] = WithCancel(Context::Background());
  const Context ctx = ctx_;
  const CancelFunc cancel = cancel_;
  std::atomic<int> calls{0};
  absl::Status s;
  std::thread retrier([&] {
    s = RetryOnConflict(ctx, options, [&] {
      if (++calls == 2) cancel();
      return Conflict();
    });
  });
  // The first wait ends only when the clock passes it.
  clock.BlockUntilTimers(1);
  EXPECT_EQ(calls.load(), 1);
  clock.Advance(absl::Milliseconds(11));
  retrier.join();
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
  EXPECT_EQ(calls.load(), 2);
}

}  // namespace
}  // namespace kcr::controller::controllerutil
