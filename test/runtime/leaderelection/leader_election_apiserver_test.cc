// Leader election against the local API server over HTTP, with the real
// REST client and the real clock: LeaseLock on the wire, then several
// candidates on one Lease — one leads, a release hands over at once, a
// killed leader is replaced once its lease runs out, and with the server
// failing and throttling requests no two candidates ever lead at once.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/errors/errors.h"
#include "api/types/lease.h"
#include "apiserver/api_server.h"
#include "base/context.h"
#include "base/mutex.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/client/rest_client.h"
#include "runtime/leaderelection/identity.h"
#include "runtime/leaderelection/leader_elector.h"
#include "runtime/leaderelection/lease_lock.h"
#include "test/apiserver/api_server_fixture.h"

namespace kcr::leaderelection {
namespace {

using ::testing::MatchesRegex;

const api::GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};

// Short durations so that every handover takes seconds, with a renew
// deadline that a loaded machine still meets.
constexpr absl::Duration kLease = absl::Seconds(3);
constexpr absl::Duration kRenew = absl::Seconds(2);
constexpr absl::Duration kRetry = absl::Milliseconds(250);

// A lock whose candidate can be killed: afterwards every call fails as if
// the process were gone, so it neither renews nor releases. It counts the
// candidate's reads of the record: a candidate that does not lead reads it
// once per retry, so the reads between two moments measure how long it
// waited in retry periods, whatever the machine's load.
class KillableLock final : public ResourceLock {
 public:
  explicit KillableLock(std::unique_ptr<LeaseLock> lock)
      : lock_(std::move(lock)) {}
  void Kill() {
    MutexLock lock(&mu_);
    killed_ = true;
  }
  int gets() {
    MutexLock lock(&mu_);
    return gets_;
  }
  absl::StatusOr<ObservedRecord> Get(const Context& ctx) override {
    KCR_RETURN_IF_ERROR(Dead());
    {
      MutexLock lock(&mu_);
      ++gets_;
    }
    return lock_->Get(ctx);
  }
  absl::Status Create(const Context& ctx,
                      const LeaderElectionRecord& record) override {
    KCR_RETURN_IF_ERROR(Dead());
    return lock_->Create(ctx, record);
  }
  absl::Status Update(const Context& ctx,
                      const LeaderElectionRecord& record) override {
    KCR_RETURN_IF_ERROR(Dead());
    return lock_->Update(ctx, record);
  }
  const std::string& Identity() const override { return lock_->Identity(); }
  std::string Describe() const override { return lock_->Describe(); }

 private:
  absl::Status Dead() {
    MutexLock lock(&mu_);
    return killed_ ? absl::UnavailableError("killed") : absl::OkStatus();
  }
  const std::unique_ptr<LeaseLock> lock_;
  Mutex mu_;
  bool killed_ ABSL_GUARDED_BY(mu_) = false;
  int gets_ ABSL_GUARDED_BY(mu_) = 0;
};

// When each candidate led: from entering on_started_leading to returning
// from it, on the real clock.
struct Interval {
  std::string id;
  absl::Time started;
  absl::Time stopped = absl::InfiniteFuture();
};

class Recorder {
 public:
  void Started(const std::string& id) {
    MutexLock lock(&mu_);
    intervals_.push_back({id, absl::Now()});
  }
  void Stopped(const std::string& id) {
    MutexLock lock(&mu_);
    for (auto it = intervals_.rbegin(); it != intervals_.rend(); ++it) {
      if (it->id == id) {
        it->stopped = absl::Now();
        return;
      }
    }
    ADD_FAILURE() << id << " stopped without starting";
  }
  std::vector<Interval> intervals() {
    MutexLock lock(&mu_);
    return intervals_;
  }
  // Blocks (up to a minute) until `n` intervals have started.
  bool AwaitStarts(size_t n) {
    MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return intervals_.size() >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Minutes(1));
  }

 private:
  Mutex mu_;
  std::vector<Interval> intervals_ ABSL_GUARDED_BY(mu_);
};

// Fails the test when two intervals overlap.
void ExpectNoOverlap(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) {
              return a.started < b.started;
            });
  for (size_t i = 1; i < intervals.size(); ++i) {
    EXPECT_LE(intervals[i - 1].stopped, intervals[i].started)
        << intervals[i - 1].id << " led until "
        << absl::FormatTime(intervals[i - 1].stopped) << " but "
        << intervals[i].id << " started at "
        << absl::FormatTime(intervals[i].started);
  }
}

class Candidate {
 public:
  Candidate(const std::string& url, std::string id, Recorder* recorder,
            bool release_on_cancel)
      : id_(std::move(id)) {
    client::Config config;
    config.host = url;
    config.qps = 1000;
    config.burst = 1000;
    client::ClientOptions options;
    // Quick retries, so that a throttled or failed request still fits in
    // a renew deadline of a second.
    options.initial_backoff = absl::Milliseconds(10);
    options.max_backoff = absl::Milliseconds(50);
    options.default_retry_after = absl::Milliseconds(50);
    auto client = client::NewRestClient(config, options);
    EXPECT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    lock_ = std::make_shared<KillableLock>(std::make_unique<LeaseLock>(
        client_.get(), "default", "controller", id_));
    LeaderElectionConfig le;
    le.lock = lock_;
    le.lease_duration = kLease;
    le.renew_deadline = kRenew;
    le.retry_period = kRetry;
    le.release_on_cancel = release_on_cancel;
    le.name = "controller";
    le.callbacks.on_started_leading = [this, recorder](const Context& ctx) {
      recorder->Started(id_);
      Mutex m;
      ContextCondVar cv;
      MutexLock lock(&m);
      const bool never = false;
      (void)cv.Await(&m, ctx, absl::Condition(&never));
      recorder->Stopped(id_);
    };
    le.callbacks.on_stopped_leading = [] {};
    auto elector = LeaderElector::Create(std::move(le));
    EXPECT_TRUE(elector.ok()) << elector.status();
    elector_ = *std::move(elector);
    std::tie(ctx_, cancel_) = WithCancel(Context::Background());
  }
  ~Candidate() { Stop(); }

  void Start() {
    thread_ = std::thread([this] {
      elector_->Run(ctx_);
      done_.Notify();
    });
  }
  // Cancels Run's context and waits for Run to return.
  void Stop() {
    cancel_();
    if (thread_.joinable()) thread_.join();
  }
  bool AwaitDone() {
    return done_.WaitForNotificationWithTimeout(absl::Minutes(1));
  }
  void Kill() { lock_->Kill(); }
  // How many times it has read the Lease.
  int gets() { return lock_->gets(); }
  const std::string& id() const { return id_; }
  LeaderElector& elector() { return *elector_; }

 private:
  const std::string id_;
  std::unique_ptr<client::RestClient> client_;
  std::shared_ptr<KillableLock> lock_;
  std::unique_ptr<LeaderElector> elector_;
  Context ctx_;
  CancelFunc cancel_;
  std::thread thread_;
  Notification done_;
};

class LeaderElectionApiServerTest : public kcr::testing::ApiServerFixture {
 protected:
  void SetUp() override {
    StartServer(NoSimulatedNode(), /*with_client=*/false);
  }

  std::vector<std::unique_ptr<Candidate>> StartCandidates(
      int n, bool release_on_cancel) {
    std::vector<std::unique_ptr<Candidate>> candidates;
    for (int i = 0; i < n; ++i) {
      candidates.push_back(std::make_unique<Candidate>(
          server_->url(), absl::StrCat("candidate-", i), &recorder_,
          release_on_cancel));
    }
    for (auto& c : candidates) c->Start();
    return candidates;
  }

  Candidate* Leader(const std::vector<std::unique_ptr<Candidate>>& all,
                    const std::string& id) {
    for (const auto& c : all) {
      if (c->id() == id) return c.get();
    }
    ADD_FAILURE() << "no candidate " << id;
    return nullptr;
  }

  Recorder recorder_;
};

TEST_F(LeaderElectionApiServerTest, LeaseLockOnTheWire) {
  client::Config config;
  config.host = server_->url();
  auto client = client::NewRestClient(config);
  ASSERT_TRUE(client.ok()) << client.status();
  LeaseLock a(client->get(), "default", "lock", "a");
  LeaseLock b(client->get(), "default", "lock", "b");
  const Context ctx;

  EXPECT_TRUE(api::IsNotFound(a.Get(ctx).status()));
  LeaderElectionRecord record;
  record.holder_identity = "a";
  record.lease_duration_seconds = 15;
  record.acquire_time = absl::FromUnixMicros(1700000000123456);
  record.renew_time = absl::FromUnixMicros(1700000001000001);
  record.leader_transitions = 2;
  ASSERT_TRUE(a.Create(ctx, record).ok());
  EXPECT_EQ(a.Describe(), "default/lock");

  // The wire form: MicroTime with six fractional digits.
  auto lease = (*client)->Get(
      ctx, client::Resource::Namespaced(kLeases, "default"), "lock");
  ASSERT_TRUE(lease.ok()) << lease.status();
  auto view = api::LeaseView::Create(*lease);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->renew_time_text(), "2023-11-14T22:13:21.000001Z");
  EXPECT_EQ(view->acquire_time_text(), "2023-11-14T22:13:20.123456Z");

  auto read = b.Get(ctx);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->record, record);
  EXPECT_FALSE(read->raw.empty());

  // b read the version a created; a's update moves it on, and b's update
  // from the stale version is a conflict.
  record.renew_time += absl::Seconds(2);
  ASSERT_TRUE(a.Update(ctx, record).ok());
  LeaderElectionRecord takeover = record;
  takeover.holder_identity = "b";
  EXPECT_TRUE(api::IsConflict(b.Update(ctx, takeover)));
  auto again = b.Get(ctx);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->record, record);
  EXPECT_NE(again->raw, read->raw);
  EXPECT_TRUE(b.Update(ctx, takeover).ok());

  LeaseLock fresh(client->get(), "default", "lock", "c");
  EXPECT_EQ(fresh.Update(ctx, record).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(LeaderElectionApiServerTest, OneLeadsReleaseHandsOverKillExpires) {
  auto candidates = StartCandidates(3, /*release_on_cancel=*/true);
  ASSERT_TRUE(recorder_.AwaitStarts(1));
  // Several lease durations: nobody else starts, the leader keeps it.
  absl::SleepFor(kLease * 2);
  std::vector<Interval> intervals = recorder_.intervals();
  ASSERT_EQ(intervals.size(), 1u);
  Candidate* first = Leader(candidates, intervals[0].id);
  int leaders = 0;
  for (const auto& c : candidates) leaders += c->elector().IsLeader();
  EXPECT_EQ(leaders, 1);
  EXPECT_TRUE(first->elector().IsLeader());
  for (const auto& c : candidates)
    EXPECT_EQ(c->elector().GetLeader(), first->id());

  // Cancelled with release: the next leader does not wait out the lease.
  // Counted in its reads of the Lease, not in wall-clock time: it takes a
  // released Lease at its first read after the release (a read already in
  // flight may see the old holder: two at most), where waiting out the
  // lease would take about kLease / kRetry (12) of them.
  first->Stop();
  const absl::Time released = absl::Now();
  std::vector<int> gets_at_release;
  for (const auto& c : candidates) gets_at_release.push_back(c->gets());
  ASSERT_TRUE(recorder_.AwaitStarts(2));
  intervals = recorder_.intervals();
  const absl::Duration handover = intervals[1].started - released;
  Candidate* second = Leader(candidates, intervals[1].id);
  ASSERT_NE(second, nullptr);
  ASSERT_NE(second, first);
  int handover_gets = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].get() == second) {
      handover_gets = second->gets() - gets_at_release[i];
    }
  }
  EXPECT_LE(handover_gets, 2) << "released lease taken over only after "
                              << handover_gets << " reads (" << handover << ")";

  // Killed: no renewal, no release; the last one waits the lease out.
  const absl::Time killed = absl::Now();
  Candidate* third = nullptr;
  for (const auto& c : candidates) {
    if (c.get() != first && c.get() != second) third = c.get();
  }
  ASSERT_NE(third, nullptr);
  const int third_gets_at_kill = third->gets();
  second->Kill();
  ASSERT_TRUE(recorder_.AwaitStarts(3));
  intervals = recorder_.intervals();
  const absl::Duration takeover = intervals[2].started - killed;
  const int takeover_gets = third->gets() - third_gets_at_kill;
  // At least the lease since its last renewal (less than a renew deadline
  // before the kill, as it still led). At most the lease (from the read
  // that saw the last renewal, just before the kill) at one read per retry
  // (at least kRetry apart), and the read that finds it expired: counted
  // in reads, which a loaded machine makes fewer, not more.
  EXPECT_GE(takeover, kLease - kRenew);
  EXPECT_LE(takeover_gets, kLease / kRetry + 2)
      << "killed leader replaced after " << takeover_gets << " reads ("
      << takeover << ")";
  ASSERT_TRUE(second->AwaitDone());
  for (auto& c : candidates) c->Stop();
  intervals = recorder_.intervals();
  ASSERT_EQ(intervals.size(), 3u);
  ExpectNoOverlap(intervals);
  std::cerr << "handover after release: " << handover << " (" << handover_gets
            << " reads), takeover after kill: " << takeover << " ("
            << takeover_gets << " reads)\n";

  // leaseTransitions counts the takeovers.
  client::Config config;
  config.host = server_->url();
  auto client = client::NewRestClient(config);
  ASSERT_TRUE(client.ok());
  LeaseLock reader(client->get(), "default", "controller", "reader");
  auto record = reader.Get(Context());
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->record.leader_transitions, 2);
  // The last leader released it when cancelled.
  EXPECT_EQ(record->record.holder_identity, "");
}

TEST_F(LeaderElectionApiServerTest, FaultsNeverMakeTwoLeaders) {
  apiserver::FaultOptions faults;
  faults.error_fraction = 0.2;
  faults.throttle_fraction = 0.1;
  faults.retry_after_seconds = 0;
  server_->faults()->set_options(faults);
  auto candidates = StartCandidates(3, /*release_on_cancel=*/true);
  ASSERT_TRUE(recorder_.AwaitStarts(1));
  // Churn: kill or cancel whoever leads, a few times over.
  for (int round = 0; round < 3; ++round) {
    absl::SleepFor(kLease);
    for (auto& c : candidates) {
      if (c->elector().IsLeader()) {
        if (round % 2 == 0) {
          c->Stop();
        } else {
          c->Kill();
        }
        break;
      }
    }
  }
  absl::SleepFor(kLease);
  for (auto& c : candidates) c->Stop();
  const std::vector<Interval> intervals = recorder_.intervals();
  EXPECT_GE(intervals.size(), 2u);
  ExpectNoOverlap(intervals);
  std::cerr << intervals.size() << " leadership intervals, "
            << server_->faults()->errors_injected() << " errors and "
            << server_->faults()->throttles_injected()
            << " throttles injected\n";
  EXPECT_GT(server_->faults()->errors_injected(), 0);
}

TEST(IdentityTest, HostnameAndUuid) {
  auto id = NewIdentity();
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_THAT(*id, MatchesRegex(".+_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-"
                                "[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  EXPECT_NE(NewUuid(), NewUuid());
}

}  // namespace
}  // namespace kcr::leaderelection
