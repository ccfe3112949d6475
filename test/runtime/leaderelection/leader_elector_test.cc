#include "runtime/leaderelection/leader_elector.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "api/errors/errors.h"
#include "base/context.h"
#include "base/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/leaderelection/fake_resource_lock.h"
#include "test/runtime/leaderelection/sleep_tracking_clock.h"

namespace kcr::leaderelection {

void PrintTo(const LeaderElectionRecord& r, std::ostream* os) {
  *os << "{holder=\"" << r.holder_identity
      << "\" lease=" << r.lease_duration_seconds
      << "s acquire=" << absl::FormatTime(r.acquire_time)
      << " renew=" << absl::FormatTime(r.renew_time)
      << " transitions=" << r.leader_transitions << "}";
}

namespace {

using ::kcr::leaderelection::testing::FakeLockStore;
using ::kcr::leaderelection::testing::FakeResourceLock;
using ::kcr::leaderelection::testing::SleepTrackingClock;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

// Polls `cond` for up to a minute of real time: a barrier for what another
// thread does, never a measure of time.
template <typename F>
bool Eventually(F cond) {
  const absl::Time give_up = absl::Now() + absl::Minutes(1);
  while (!cond()) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

class FakeMetrics final : public MetricsProvider {
 public:
  std::unique_ptr<SwitchMetric> NewLeaderMetric(std::string_view) override {
    return std::make_unique<Switch>(&status);
  }
  std::unique_ptr<CounterMetric> NewSlowpathMetric(std::string_view) override {
    return std::make_unique<Counter>(&slowpath);
  }
  std::atomic<int> status{-1};
  std::atomic<int> slowpath{0};

 private:
  class Switch final : public SwitchMetric {
   public:
    explicit Switch(std::atomic<int>* v) : v_(v) {}
    void On() override { *v_ = 1; }
    void Off() override { *v_ = 0; }

   private:
    std::atomic<int>* v_;
  };
  class Counter final : public CounterMetric {
   public:
    explicit Counter(std::atomic<int>* v) : v_(v) {}
    void Inc() override { ++*v_; }

   private:
    std::atomic<int>* v_;
  };
};

// One candidate: an elector on its own FakeResourceLock, run on a thread,
// recording its callbacks (also into the store's log, to order them
// against the lock's calls).
class Candidate {
 public:
  Candidate(FakeLockStore* store, const Clock* clock, std::string id,
            bool release_on_cancel = false)
      : store_(store), id_(std::move(id)) {
    LeaderElectionConfig config;
    config.lock = std::make_shared<FakeResourceLock>(store, id_);
    config.name = "test";
    config.clock = clock;
    config.metrics = &metrics;
    config.release_on_cancel = release_on_cancel;
    config.callbacks.on_started_leading = [this](const Context& ctx) {
      // Logged first: once AwaitStarted returns, the line is in the log.
      store_->Log("started " + id_);
      {
        MutexLock lock(&mu_);
        ++started_;
        leading_ = ctx;
      }
      Mutex m;
      ContextCondVar cv;
      MutexLock lock(&m);
      const bool never = false;
      (void)cv.Await(&m, ctx, absl::Condition(&never));
      store_->Log("leader returned " + id_);
    };
    config.callbacks.on_stopped_leading = [this] {
      store_->Log("stopped " + id_);
      MutexLock lock(&mu_);
      ++stopped_;
    };
    config.callbacks.on_new_leader = [this](const std::string& leader) {
      MutexLock lock(&mu_);
      new_leaders_.push_back(leader);
    };
    auto elector = LeaderElector::Create(std::move(config));
    EXPECT_TRUE(elector.ok()) << elector.status();
    elector_ = *std::move(elector);
    std::tie(ctx_, cancel_) = WithCancel(Context::Background());
  }

  ~Candidate() {
    Cancel();
    Join();
  }

  void Start() {
    thread_ = std::thread([this] {
      elector_->Run(ctx_);
      finished_.Notify();
    });
  }
  void Cancel() { cancel_(); }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  bool AwaitFinished() {
    return finished_.WaitForNotificationWithTimeout(absl::Minutes(1));
  }
  bool AwaitStarted() {
    return Eventually([this] {
      MutexLock lock(&mu_);
      return started_ > 0;
    });
  }
  // Whether the leading context is done (false before leading).
  bool LeadingDone() {
    MutexLock lock(&mu_);
    return started_ > 0 && leading_.done();
  }
  int stopped() {
    MutexLock lock(&mu_);
    return stopped_;
  }
  std::vector<std::string> new_leaders() {
    MutexLock lock(&mu_);
    return new_leaders_;
  }
  LeaderElector& elector() { return *elector_; }

  FakeMetrics metrics;

 private:
  FakeLockStore* const store_;
  const std::string id_;
  std::unique_ptr<LeaderElector> elector_;
  Context ctx_;
  CancelFunc cancel_;
  std::thread thread_;
  Notification finished_;

  Mutex mu_;
  int started_ ABSL_GUARDED_BY(mu_) = 0;
  int stopped_ ABSL_GUARDED_BY(mu_) = 0;
  Context leading_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> new_leaders_ ABSL_GUARDED_BY(mu_);
};

class LeaderElectorTest : public ::testing::Test {
 protected:
  std::unique_ptr<Candidate> NewCandidate(std::string id,
                                          bool release_on_cancel = false) {
    auto c = std::make_unique<Candidate>(&store_, &clock_, std::move(id),
                                         release_on_cancel);
    return c;
  }

  LeaderElectionRecord Held(std::string holder, absl::Time renew,
                            int transitions = 0) {
    LeaderElectionRecord r;
    r.holder_identity = std::move(holder);
    r.lease_duration_seconds = 15;
    r.acquire_time = renew;
    r.renew_time = renew;
    r.leader_transitions = transitions;
    return r;
  }

  // Moves time from wake-up to wake-up until `holder` holds the lock;
  // returns when (InfiniteFuture if it never does within `limit`).
  absl::Time AdvanceUntilHeldBy(const std::string& holder, absl::Time limit) {
    while (clock_.NextWake() <= limit) {
      const absl::Time t = clock_.AdvanceToNextWake();
      EXPECT_TRUE(clock_.Settle(1));
      if (store_.record().has_value() &&
          store_.record()->holder_identity == holder) {
        return t;
      }
    }
    return absl::InfiniteFuture();
  }

  std::vector<std::string> LogSince(size_t from) {
    std::vector<std::string> log = store_.log();
    return std::vector<std::string>(log.begin() + from, log.end());
  }

  kcr::testing::FakeClock fake_;
  SleepTrackingClock clock_{&fake_};
  const absl::Time t0_ = fake_.Now();
  FakeLockStore store_;
};

TEST_F(LeaderElectorTest, CreatesTheLockAndLeads) {
  auto a = NewCandidate("a");
  a->Start();
  ASSERT_TRUE(a->AwaitStarted());
  ASSERT_TRUE(clock_.Settle(1));

  ASSERT_TRUE(store_.record().has_value());
  EXPECT_EQ(*store_.record(), Held("a", t0_));
  EXPECT_TRUE(a->elector().IsLeader());
  EXPECT_EQ(a->elector().GetLeader(), "a");
  EXPECT_THAT(a->new_leaders(), ElementsAre("a"));
  EXPECT_EQ(a->metrics.status, 1);
  EXPECT_TRUE(a->elector().Check(absl::ZeroDuration()).ok());

  // Without release_on_cancel the lock stays held.
  a->Cancel();
  ASSERT_TRUE(a->AwaitFinished());
  EXPECT_TRUE(a->LeadingDone());
  EXPECT_EQ(a->stopped(), 1);
  EXPECT_EQ(a->metrics.status, 0);
  EXPECT_EQ(store_.record()->holder_identity, "a");
}

TEST_F(LeaderElectorTest, RenewsEveryRetryPeriodWithoutReading) {
  auto a = NewCandidate("a");
  a->Start();
  ASSERT_TRUE(a->AwaitStarted());
  ASSERT_TRUE(clock_.Settle(1));
  for (int i = 1; i <= 3; ++i) {
    const size_t before = store_.log().size();
    EXPECT_EQ(clock_.AdvanceToNextWake(), t0_ + absl::Seconds(2 * i));
    ASSERT_TRUE(clock_.Settle(1));
    EXPECT_THAT(LogSince(before), ElementsAre("update a: a"));
    LeaderElectionRecord want = Held("a", t0_);
    want.renew_time = t0_ + absl::Seconds(2 * i);
    EXPECT_EQ(*store_.record(), want);
  }
  EXPECT_EQ(a->metrics.slowpath, 0);
  EXPECT_FALSE(a->LeadingDone());
}

TEST_F(LeaderElectorTest, FailedOptimisticRenewalReadsAndKeepsAcquireTime) {
  auto a = NewCandidate("a");
  a->Start();
  ASSERT_TRUE(a->AwaitStarted());
  ASSERT_TRUE(clock_.Settle(1));
  store_.ConflictNextUpdate();
  const size_t before = store_.log().size();
  clock_.AdvanceToNextWake();
  ASSERT_TRUE(clock_.Settle(1));
  EXPECT_THAT(LogSince(before),
              ElementsAre("update a: a failed", "get a", "update a: a"));
  EXPECT_EQ(store_.record()->acquire_time, t0_);
  EXPECT_EQ(store_.record()->renew_time, t0_ + absl::Seconds(2));
  EXPECT_EQ(store_.record()->leader_transitions, 0);
  EXPECT_EQ(a->metrics.slowpath, 1);
  EXPECT_TRUE(a->elector().IsLeader());
}

// The holder is judged alive by when this candidate saw the record change,
// on its own clock: the renewTime written in the record, however far in
// the past or the future, does not matter.
class ExpiryTest : public LeaderElectorTest,
                   public ::testing::WithParamInterface<absl::Duration> {};

INSTANTIATE_TEST_SUITE_P(RenewTimeOffsets, ExpiryTest,
                         ::testing::Values(-absl::Hours(1),
                                           absl::ZeroDuration(),
                                           absl::Hours(1)));

TEST_P(ExpiryTest, TakesOverAfterLeaseDurationOfLocalObservation) {
  store_.Put(Held("other", t0_ + GetParam(), 3));
  auto a = NewCandidate("a");
  a->Start();
  ASSERT_TRUE(clock_.Settle(1));
  EXPECT_THAT(store_.log(), ElementsAre("get a"));
  EXPECT_EQ(a->elector().GetLeader(), "other");
  EXPECT_FALSE(a->elector().IsLeader());

  // The acquire loop waits retry_period to retry_period * 2.2.
  absl::Time last = t0_;
  absl::Time acquired = absl::InfiniteFuture();
  while (acquired == absl::InfiniteFuture() &&
         clock_.NextWake() < t0_ + absl::Minutes(1)) {
    const absl::Time t = clock_.AdvanceToNextWake();
    EXPECT_GE(t - last, absl::Seconds(2));
    EXPECT_LE(t - last, absl::Seconds(2) * 2.2);
    last = t;
    ASSERT_TRUE(clock_.Settle(1));
    if (store_.record()->holder_identity == "a") acquired = t;
  }
  EXPECT_GE(acquired, t0_ + absl::Seconds(15));
  EXPECT_LE(acquired, t0_ + absl::Seconds(15) + absl::Seconds(2) * 2.2);
  // Lock times are kept to the microsecond (metav1.MicroTime).
  const absl::Time acquired_micros =
      absl::UnixEpoch() +
      absl::Floor(acquired - absl::UnixEpoch(), absl::Microseconds(1));
  LeaderElectionRecord want = Held("a", acquired_micros, 4);
  EXPECT_EQ(*store_.record(), want);
  ASSERT_TRUE(a->AwaitStarted());
  EXPECT_THAT(a->new_leaders(), ElementsAre("other", "a"));
}

TEST_F(LeaderElectorTest, ObservedTimeRestartsWhenTheRecordChanges) {
  store_.Put(Held("other", t0_));
  auto a = NewCandidate("a");
  a->Start();
  ASSERT_TRUE(clock_.Settle(1));
  while (fake_.Now() < t0_ + absl::Seconds(10)) {
    clock_.AdvanceToNextWake();
    ASSERT_TRUE(clock_.Settle(1));
  }
  // The holder renews once more, with the same renewTime: any change of
  // the raw record counts.
  const absl::Time changed = fake_.Now();
  LeaderElectionRecord renewed = Held("other", t0_);
  renewed.lease_duration_seconds = 16;
  store_.Put(renewed);
  const absl::Time acquired = AdvanceUntilHeldBy("a", t0_ + absl::Minutes(2));
  EXPECT_GE(acquired, changed + absl::Seconds(16));
  ASSERT_TRUE(a->AwaitStarted());
}

TEST_F(LeaderElectorTest, TakesAReleasedLockAtOnce) {
  LeaderElectionRecord released = Held("", t0_ - absl::Seconds(1), 2);
  released.lease_duration_seconds = 1;
  store_.Put(released);
  auto a = NewCandidate("a");
  a->Start();
  ASSERT_TRUE(a->AwaitStarted());
  EXPECT_THAT(store_.log(), ElementsAre("get a", "update a: a", "started a"));
  EXPECT_EQ(*store_.record(), Held("a", t0_, 3));
}

TEST_F(LeaderElectorTest, AConflictWhileAcquiringIsAnsweredByReading) {
  store_.Put(Held("", t0_));
  store_.ConflictNextUpdate();
  auto a = NewCandidate("a");
  a->Start();
  ASSERT_TRUE(clock_.Settle(1));
  EXPECT_THAT(store_.log(), ElementsAre("get a", "update a: a failed"));
  EXPECT_FALSE(a->elector().IsLeader());
  const size_t before = store_.log().size();
  clock_.AdvanceToNextWake();
  ASSERT_TRUE(a->AwaitStarted());
  EXPECT_THAT(LogSince(before),
              ElementsAre("get a", "update a: a", "started a"));
  EXPECT_EQ(store_.record()->leader_transitions, 1);
}

TEST_F(LeaderElectorTest, ReleaseOnCancelAfterTheLeaderReturned) {
  auto a = NewCandidate("a", /*release_on_cancel=*/true);
  a->Start();
  ASSERT_TRUE(a->AwaitStarted());
  ASSERT_TRUE(clock_.Settle(1));
  clock_.AdvanceToNextWake();  // one renewal
  ASSERT_TRUE(clock_.Settle(1));
  a->Cancel();
  ASSERT_TRUE(a->AwaitFinished());

  LeaderElectionRecord want;
  want.holder_identity = "";
  want.lease_duration_seconds = 1;
  want.acquire_time = t0_ + absl::Seconds(2);
  want.renew_time = t0_ + absl::Seconds(2);
  want.leader_transitions = 0;
  EXPECT_EQ(*store_.record(), want);
  const std::vector<std::string> log = store_.log();
  auto at = [&log](const std::string& line) {
    return std::find(log.begin(), log.end(), line) - log.begin();
  };
  ASSERT_LT(at("update a: "), static_cast<long>(log.size()));
  EXPECT_LT(at("leader returned a"), at("update a: "));
  EXPECT_LT(at("stopped a"), at("update a: "));
  EXPECT_THAT(a->new_leaders(), ElementsAre("a", ""));
  EXPECT_FALSE(a->elector().IsLeader());
  EXPECT_EQ(a->stopped(), 1);
}

TEST_F(LeaderElectorTest, ReleaseAfterARenewalWhoseAnswerWasLost) {
  auto a = NewCandidate("a", /*release_on_cancel=*/true);
  a->Start();
  ASSERT_TRUE(a->AwaitStarted());
  ASSERT_TRUE(clock_.Settle(1));
  // A renewal stored by the server whose answer never came back: the
  // record still names "a", at a version "a" has not seen.
  LeaderElectionRecord stored = *store_.record();
  stored.renew_time += absl::Seconds(1);
  store_.Put(stored);
  const size_t before = store_.log().size();
  a->Cancel();
  ASSERT_TRUE(a->AwaitFinished());
  // The leader's code returns and on_stopped_leading runs in either order;
  // the release comes after both.
  const std::vector<std::string> log = LogSince(before);
  ASSERT_EQ(log.size(), 5u);
  EXPECT_THAT(std::vector<std::string>(log.begin(), log.begin() + 2),
              UnorderedElementsAre("leader returned a", "stopped a"));
  EXPECT_THAT(std::vector<std::string>(log.begin() + 2, log.end()),
              ElementsAre("update a:  failed", "get a", "update a: "));
  EXPECT_EQ(store_.record()->holder_identity, "");
}

TEST_F(LeaderElectorTest, NoReleaseWhenAnotherTookTheLock) {
  auto a = NewCandidate("a", /*release_on_cancel=*/true);
  a->Start();
  ASSERT_TRUE(a->AwaitStarted());
  ASSERT_TRUE(clock_.Settle(1));
  store_.Put(Held("b", t0_, 1));
  a->Cancel();
  ASSERT_TRUE(a->AwaitFinished());
  EXPECT_EQ(*store_.record(), Held("b", t0_, 1));
}

TEST_F(LeaderElectorTest, StopsLeadingRenewDeadlineAfterTheLastRenewal) {
  auto a = NewCandidate("a");
  a->Start();
  ASSERT_TRUE(a->AwaitStarted());
  ASSERT_TRUE(clock_.Settle(1));
  clock_.AdvanceToNextWake();  // renewed at t0 + 2s
  ASSERT_TRUE(clock_.Settle(1));
  const absl::Time renewed = t0_ + absl::Seconds(2);
  ASSERT_EQ(store_.record()->renew_time, renewed);

  store_.FailAll(api::StatusError::InternalError("etcd is unhappy").ToStatus());
  while (clock_.NextWake() < renewed + absl::Seconds(10)) {
    clock_.AdvanceToNextWake();
    ASSERT_TRUE(clock_.Settle(1));
    EXPECT_FALSE(a->LeadingDone());
  }
  fake_.SetTime(renewed + absl::Seconds(10) - absl::Microseconds(1));
  EXPECT_FALSE(a->LeadingDone());
  fake_.SetTime(renewed + absl::Seconds(10));
  // Cancelled by the time moving past the deadline, not by a later poll.
  EXPECT_TRUE(a->LeadingDone());
  ASSERT_TRUE(a->AwaitFinished());
  EXPECT_EQ(a->stopped(), 1);
  EXPECT_EQ(a->metrics.status, 0);
  // Well before anyone else could take over.
  EXPECT_LT(fake_.Now(), renewed + absl::Seconds(15));
}

TEST_F(LeaderElectorTest, AHungRenewalIsCutOffAtTheDeadline) {
  auto a = NewCandidate("a");
  a->Start();
  ASSERT_TRUE(a->AwaitStarted());
  ASSERT_TRUE(clock_.Settle(1));
  store_.SetHang(true);
  clock_.AdvanceToNextWake();
  ASSERT_TRUE(Eventually([this] { return store_.hung_calls() == 1; }));
  fake_.SetTime(t0_ + absl::Seconds(10) - absl::Microseconds(1));
  EXPECT_FALSE(a->LeadingDone());
  fake_.SetTime(t0_ + absl::Seconds(10));
  EXPECT_TRUE(a->LeadingDone());
  ASSERT_TRUE(a->AwaitFinished());
  EXPECT_EQ(a->stopped(), 1);

  // Believes it leads (the record it last saw is its own) but has not
  // renewed: the liveness check fails once the lease is over.
  fake_.SetTime(t0_ + absl::Seconds(16));
  EXPECT_FALSE(a->elector().Check(absl::ZeroDuration()).ok());
  EXPECT_TRUE(a->elector().Check(absl::Seconds(5)).ok());
}

TEST_F(LeaderElectorTest, AConflictOnRenewalMeansAnotherTookOver) {
  auto a = NewCandidate("a");
  a->Start();
  ASSERT_TRUE(a->AwaitStarted());
  ASSERT_TRUE(clock_.Settle(1));
  store_.Put(Held("b", t0_, 1));
  const size_t before = store_.log().size();
  clock_.AdvanceToNextWake();
  ASSERT_TRUE(clock_.Settle(1));
  // No blind retry of the update: read, and see the new holder.
  EXPECT_THAT(LogSince(before), ElementsAre("update a: a failed", "get a"));
  EXPECT_FALSE(a->elector().IsLeader());
  EXPECT_EQ(a->elector().GetLeader(), "b");
  EXPECT_THAT(a->new_leaders(), ElementsAre("a", "b"));
  EXPECT_EQ(store_.record()->holder_identity, "b");
  // The leader steps down at the deadline without ever writing again.
  while (clock_.NextWake() < t0_ + absl::Seconds(10)) {
    clock_.AdvanceToNextWake();
    ASSERT_TRUE(clock_.Settle(1));
    EXPECT_FALSE(a->LeadingDone());
  }
  fake_.SetTime(t0_ + absl::Seconds(10));
  EXPECT_TRUE(a->LeadingDone());
  ASSERT_TRUE(a->AwaitFinished());
  EXPECT_EQ(store_.record()->holder_identity, "b");
}

TEST_F(LeaderElectorTest, RunReturnsWhenCancelledBeforeAcquiring) {
  store_.Put(Held("b", t0_));
  auto a = NewCandidate("a", /*release_on_cancel=*/true);
  a->Start();
  ASSERT_TRUE(clock_.Settle(1));
  a->Cancel();
  ASSERT_TRUE(a->AwaitFinished());
  // As client-go, on_stopped_leading runs whenever Run ends.
  EXPECT_EQ(a->stopped(), 1);
  EXPECT_FALSE(a->LeadingDone());
  EXPECT_EQ(store_.record()->holder_identity, "b");
  EXPECT_THAT(store_.log(), ElementsAre("get a", "stopped a"));
}

TEST(LeaderElectionConfigTest, ValidatesAsClientGo) {
  FakeLockStore store;
  auto valid = [&store] {
    LeaderElectionConfig c;
    c.lock = std::make_shared<FakeResourceLock>(&store, "a");
    c.callbacks.on_started_leading = [](const Context&) {};
    c.callbacks.on_stopped_leading = [] {};
    return c;
  };
  EXPECT_TRUE(ValidateConfig(valid()).ok());
  EXPECT_EQ(valid().lease_duration, absl::Seconds(15));
  EXPECT_EQ(valid().renew_deadline, absl::Seconds(10));
  EXPECT_EQ(valid().retry_period, absl::Seconds(2));

  struct Case {
    std::function<void(LeaderElectionConfig&)> edit;
    std::string error;
  };
  const std::vector<Case> cases = {
      {[](auto& c) { c.lease_duration = absl::Seconds(10); },
       "leaseDuration must be greater than renewDeadline"},
      {[](auto& c) { c.renew_deadline = absl::Milliseconds(2400); },
       "renewDeadline must be greater than retryPeriod*JitterFactor"},
      {[](auto& c) {
         c.lease_duration = absl::ZeroDuration();
         c.renew_deadline = -absl::Seconds(2);
         c.retry_period = -absl::Seconds(2);
       },
       "leaseDuration must be greater than zero"},
      {[](auto& c) {
         c.renew_deadline = absl::ZeroDuration();
         c.retry_period = -absl::Seconds(1);
       },
       "renewDeadline must be greater than zero"},
      {[](auto& c) { c.retry_period = absl::ZeroDuration(); },
       "retryPeriod must be greater than zero"},
      {[](auto& c) { c.callbacks.on_started_leading = nullptr; },
       "OnStartedLeading callback must not be nil"},
      {[](auto& c) { c.callbacks.on_stopped_leading = nullptr; },
       "OnStoppedLeading callback must not be nil"},
      {[](auto& c) { c.lock = nullptr; }, "Lock must not be nil"},
      {[&store](auto& c) {
         c.lock = std::make_shared<FakeResourceLock>(&store, "");
       },
       "Lock identity is empty"},
  };
  for (const Case& c : cases) {
    LeaderElectionConfig config = valid();
    c.edit(config);
    absl::Status s = ValidateConfig(config);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.error;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.error));
    EXPECT_EQ(LeaderElector::Create(std::move(config)).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace kcr::leaderelection
