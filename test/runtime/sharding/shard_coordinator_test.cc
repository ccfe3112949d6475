// LeaseShardCoordinator against the local API server in this process (real
// Leases over HTTP) with a fake clock: every test drives the replicas'
// rounds one at a time, moves time itself, and checks after every step
// that no shard is active in two replicas at once.
#include "runtime/sharding/shard_coordinator.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "api/object.h"
#include "api/types/lease.h"
#include "base/context.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "runtime/client/rest_client.h"
#include "runtime/sharding/assignment.h"
#include "runtime/sharding/lease_client.h"
#include "runtime/sharding/metrics.h"
#include "test/apiserver/api_server_fixture.h"
#include "test/fakes/fake_clock.h"

namespace kcr::sharding {
namespace {

constexpr char kNamespace[] = "kube-system";
constexpr char kController[] = "nginx";
const api::GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};

// What every replica's listener saw, in one order for all replicas.
class Journal {
 public:
  explicit Journal(const Clock* clock) : clock_(clock) {}

  struct Entry {
    std::string replica;
    std::string what;  // "acquired", "releasing", "released"
    int shard;
    absl::Time at;
  };

  // Called inside OnAcquired: fails if another replica is active on the
  // shard (acquired and not yet back from OnReleasing).
  void Acquired(const std::string& replica, int shard) {
    MutexLock lock(&mu_);
    auto it = active_.find(shard);
    if (it != active_.end()) {
      ADD_FAILURE() << replica << " acquired shard " << shard << " while "
                    << it->second << " is active on it";
    }
    active_[shard] = replica;
    entries_.push_back({replica, "acquired", shard, clock_->Now()});
  }
  void Releasing(const std::string& replica, int shard) {
    MutexLock lock(&mu_);
    entries_.push_back({replica, "releasing", shard, clock_->Now()});
  }
  void Released(const std::string& replica, int shard) {
    MutexLock lock(&mu_);
    auto it = active_.find(shard);
    if (it == active_.end() || it->second != replica) {
      ADD_FAILURE() << replica << " released shard " << shard
                    << " it was not active on";
    } else {
      active_.erase(it);
    }
    entries_.push_back({replica, "released", shard, clock_->Now()});
  }
  // The replica active on `shard` when a process dies without telling its
  // listener: it is gone, so nothing of it is active any more.
  void Forget(const std::string& replica) {
    MutexLock lock(&mu_);
    for (auto it = active_.begin(); it != active_.end();) {
      it = it->second == replica ? active_.erase(it) : std::next(it);
    }
  }
  std::vector<Entry> entries() {
    MutexLock lock(&mu_);
    return entries_;
  }
  int Count(const std::string& what) {
    MutexLock lock(&mu_);
    return static_cast<int>(
        std::count_if(entries_.begin(), entries_.end(),
                      [&](const Entry& e) { return e.what == what; }));
  }

 private:
  const Clock* const clock_;
  Mutex mu_;
  std::map<int, std::string> active_ ABSL_GUARDED_BY(mu_);
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

class JournalListener final : public ShardListener {
 public:
  JournalListener(std::string replica, Journal* journal)
      : replica_(std::move(replica)), journal_(journal) {}
  void OnAcquired(int shard) override { journal_->Acquired(replica_, shard); }
  void OnReleasing(int shard, absl::Time deadline) override {
    journal_->Releasing(replica_, shard);
    if (on_releasing) on_releasing(shard, deadline);
    journal_->Released(replica_, shard);
  }
  std::function<void(int, absl::Time)> on_releasing;

 private:
  const std::string replica_;
  Journal* const journal_;
};

// A LeaseClient that can be cut off (every call fails, as a partition or
// a dead process would make it), or cut off for membership Leases only.
class FaultyLeaseClient final : public LeaseClient {
 public:
  explicit FaultyLeaseClient(std::unique_ptr<LeaseClient> inner)
      : inner_(std::move(inner)) {}
  void SetDown(bool down) {
    MutexLock lock(&mu_);
    down_ = down;
  }
  void SetMembershipDown(bool down) {
    MutexLock lock(&mu_);
    membership_down_ = down;
  }
  absl::StatusOr<std::vector<ObservedLease>> List(
      const Context& ctx, std::string_view prefix) override {
    if (Down(false)) return absl::UnavailableError("down");
    return inner_->List(ctx, prefix);
  }
  absl::StatusOr<ObservedLease> Create(
      const Context& ctx, std::string_view name, std::string_view role,
      const leaderelection::LeaderElectionRecord& record) override {
    if (Down(role == "member")) return absl::UnavailableError("down");
    return inner_->Create(ctx, name, role, record);
  }
  absl::StatusOr<ObservedLease> Update(
      const Context& ctx, const ObservedLease& base,
      const leaderelection::LeaderElectionRecord& record) override {
    if (Down(base.name.find("-member-") != std::string::npos)) {
      return absl::UnavailableError("down");
    }
    return inner_->Update(ctx, base, record);
  }

 private:
  bool Down(bool membership) {
    MutexLock lock(&mu_);
    return down_ || (membership && membership_down_);
  }
  const std::unique_ptr<LeaseClient> inner_;
  Mutex mu_;
  bool down_ ABSL_GUARDED_BY(mu_) = false;
  bool membership_down_ ABSL_GUARDED_BY(mu_) = false;
};

class CountingMetrics final : public MetricsProvider {
 public:
  struct Values {
    double held = 0;
    int acquisitions = 0;
    std::map<std::string, int> releases;
    std::vector<double> handovers;
  };
  Values values() {
    MutexLock lock(&mu_);
    return v_;
  }
  std::unique_ptr<GaugeMetric> NewShardsHeldMetric(std::string_view) override {
    return std::make_unique<Gauge>(this);
  }
  std::unique_ptr<CounterMetric> NewAcquisitionsMetric(
      std::string_view) override {
    return std::make_unique<Counter>(this, "");
  }
  std::unique_ptr<CounterMetric> NewReleasesMetric(
      std::string_view, std::string_view reason) override {
    return std::make_unique<Counter>(this, std::string(reason));
  }
  std::unique_ptr<HistogramMetric> NewHandoverMetric(
      std::string_view) override {
    return std::make_unique<Histogram>(this);
  }

 private:
  struct Gauge final : GaugeMetric {
    explicit Gauge(CountingMetrics* m) : m(m) {}
    void Set(double value) override {
      MutexLock lock(&m->mu_);
      m->v_.held = value;
    }
    CountingMetrics* m;
  };
  struct Counter final : CounterMetric {
    Counter(CountingMetrics* m, std::string reason)
        : m(m), reason(std::move(reason)) {}
    void Inc() override {
      MutexLock lock(&m->mu_);
      if (reason.empty()) {
        ++m->v_.acquisitions;
      } else {
        ++m->v_.releases[reason];
      }
    }
    CountingMetrics* m;
    std::string reason;
  };
  struct Histogram final : HistogramMetric {
    explicit Histogram(CountingMetrics* m) : m(m) {}
    void Observe(double value) override {
      MutexLock lock(&m->mu_);
      m->v_.handovers.push_back(value);
    }
    CountingMetrics* m;
  };
  Mutex mu_;
  Values v_ ABSL_GUARDED_BY(mu_);
};

struct Replica {
  std::string id;
  FaultyLeaseClient* client;  // owned by the coordinator
  std::unique_ptr<JournalListener> listener;
  std::unique_ptr<LeaseShardCoordinator> coordinator;
  bool dead = false;
};

class ShardCoordinatorTest : public testing::ApiServerFixture {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartServer()); }

  ShardCoordinatorOptions Options(const std::string& id) {
    ShardCoordinatorOptions o;
    o.controller = kController;
    o.lease_namespace = kNamespace;
    o.identity = id;
    o.shards = shards_;
    o.clock = &clock_;
    return o;
  }

  Replica* AddReplica(const std::string& id,
                      MetricsProvider* metrics = nullptr) {
    auto r = std::make_unique<Replica>();
    r->id = id;
    auto client = std::make_unique<FaultyLeaseClient>(
        NewRestLeaseClient(client_.get(), kNamespace, kController));
    r->client = client.get();
    ShardCoordinatorOptions o = Options(id);
    o.metrics = metrics;
    auto c = LeaseShardCoordinator::Create(o, std::move(client));
    EXPECT_TRUE(c.ok()) << c.status();
    r->coordinator = *std::move(c);
    r->listener = std::make_unique<JournalListener>(id, &journal_);
    r->coordinator->AddListener(r->listener.get());
    replicas_.push_back(std::move(r));
    return replicas_.back().get();
  }

  // Every shard held by at most one live replica.
  void CheckNoShardHeldTwice() {
    for (int s = 0; s < shards_; ++s) {
      std::vector<std::string> holders;
      for (const auto& r : replicas_) {
        if (!r->dead && r->coordinator->Holds(s)) holders.push_back(r->id);
      }
      ASSERT_LE(holders.size(), 1u) << "shard " << s << " held by "
                                    << holders[0] << " and " << holders[1];
    }
  }

  // One round of every live replica, checking after each, then time moves
  // on by a retry period.
  void Round() {
    for (const auto& r : replicas_) {
      if (r->dead) continue;
      r->coordinator->RunOnce(Context::Background());
      ASSERT_NO_FATAL_FAILURE(CheckNoShardHeldTwice());
    }
    clock_.Advance(absl::Seconds(2));
  }

  void Rounds(int n) {
    for (int i = 0; i < n; ++i) ASSERT_NO_FATAL_FAILURE(Round());
  }

  std::map<std::string, int> Counts() {
    std::map<std::string, int> counts;
    for (const auto& r : replicas_) {
      if (!r->dead)
        counts[r->id] = static_cast<int>(r->coordinator->Held().size());
    }
    return counts;
  }

  // Each live replica holds its fair share among the live ones, and every
  // shard is held.
  bool Balanced() {
    std::vector<std::string> live;
    for (const auto& r : replicas_) {
      if (!r->dead) live.push_back(r->id);
    }
    std::sort(live.begin(), live.end());
    int total = 0;
    for (const auto& r : replicas_) {
      if (r->dead) continue;
      const int held = static_cast<int>(r->coordinator->Held().size());
      if (held != FairShare(shards_, live, r->id)) return false;
      total += held;
    }
    return total == shards_;
  }

  // Rounds until balanced; returns how many it took (-1 if not within
  // `limit`).
  int RoundsUntilBalanced(int limit) {
    for (int i = 0; i < limit; ++i) {
      if (Balanced()) return i;
      Round();
      if (HasFatalFailure()) return -1;
    }
    return Balanced() ? limit : -1;
  }

  // Rounds as Run starts them: each live replica's at the time its
  // NextRound() asked for, the clock moved to the earliest (ties in the
  // replicas' order). The first round of each is now. Until `done` holds
  // after a round, or the clock would pass `until`; returns `done`.
  bool RunAsScheduled(absl::Time until, const std::function<bool()>& done) {
    std::vector<absl::Time> next(replicas_.size(), clock_.Now());
    while (true) {
      size_t first = replicas_.size();
      for (size_t i = 0; i < replicas_.size(); ++i) {
        if (replicas_[i]->dead) continue;
        if (first == replicas_.size() || next[i] < next[first]) first = i;
      }
      if (first == replicas_.size() || next[first] > until) return done();
      if (next[first] > clock_.Now()) clock_.SetTime(next[first]);
      replicas_[first]->coordinator->RunOnce(Context::Background());
      CheckNoShardHeldTwice();
      if (HasFatalFailure()) return false;
      next[first] = replicas_[first]->coordinator->NextRound();
      if (done()) return true;
    }
  }

  void Kill(Replica* r) {
    r->client->SetDown(true);
    r->dead = true;
    journal_.Forget(r->id);
  }

  api::ObjectPtr GetLease(const std::string& name) {
    auto lease =
        client_->Get(Context::Background(),
                     client::Resource::Namespaced(kLeases, kNamespace), name);
    EXPECT_TRUE(lease.ok()) << lease.status();
    return lease.ok() ? *lease : nullptr;
  }
  std::string Holder(const std::string& name) {
    api::ObjectPtr lease = GetLease(name);
    if (lease == nullptr) return "<none>";
    auto view = api::LeaseView::Create(lease);
    return view.ok() ? std::string(view->holder_identity()) : "<bad>";
  }
  std::string ShardLease(int s) {
    return absl::StrCat(kController, "-shard-", s);
  }

  void CreateLease(const std::string& json) {
    auto object = api::Object::Parse(json);
    ASSERT_TRUE(object.ok()) << object.status();
    auto created = client_->Create(
        Context::Background(),
        client::Resource::Namespaced(kLeases, kNamespace), **object);
    ASSERT_TRUE(created.ok()) << created.status();
  }

  int shards_ = 32;
  testing::FakeClock clock_;
  Journal journal_{&clock_};
  std::vector<std::unique_ptr<Replica>> replicas_;
};

TEST_F(ShardCoordinatorTest, ValidatesOptions) {
  ShardCoordinatorOptions o = Options("a");
  EXPECT_TRUE(ValidateOptions(o).ok());
  o.shards = 0;
  EXPECT_FALSE(ValidateOptions(o).ok());
  o = Options("a");
  o.renew_deadline = o.lease_duration;
  EXPECT_FALSE(ValidateOptions(o).ok());
  o = Options("a");
  o.drain_timeout = absl::Seconds(9);
  EXPECT_FALSE(ValidateOptions(o).ok());
  o = Options("");
  EXPECT_FALSE(ValidateOptions(o).ok());
}

TEST_F(ShardCoordinatorTest,
       AssignmentConvergesToFairSharesForOneToTenMembers) {
  for (int n = 1; n <= 10; ++n) {
    AddReplica(absl::StrCat("replica-", n));
    const int rounds = RoundsUntilBalanced(20);
    ASSERT_GE(rounds, 0) << n << " members did not balance";
    for (const auto& r : replicas_) EXPECT_TRUE(r->coordinator->Settled());
    // Once balanced, it stays so and nothing moves.
    const int acquired = journal_.Count("acquired");
    ASSERT_NO_FATAL_FAILURE(Rounds(2));
    EXPECT_TRUE(Balanced());
    EXPECT_EQ(journal_.Count("acquired"), acquired) << n << " members";
  }
  // Each shard moved at most once per member added: 32 taken at first,
  // then about 32/n for the n-th.
  EXPECT_LE(journal_.Count("acquired"), 32 + 2 * 32);
}

TEST_F(ShardCoordinatorTest, DeadMembersShardsAreTakenAfterExpiryOnly) {
  Replica* a = AddReplica("a");
  AddReplica("b");
  Replica* c = AddReplica("c");
  ASSERT_GE(RoundsUntilBalanced(20), 0);
  const std::vector<int> c_held = c->coordinator->Held();
  ASSERT_FALSE(c_held.empty());
  Kill(c);
  const absl::Time died = clock_.Now();
  // Until the Leases run out (15 s after they last changed), nobody takes
  // c's shards.
  while (clock_.Now() < died + absl::Seconds(15) - absl::Seconds(2)) {
    ASSERT_NO_FATAL_FAILURE(Round());
    for (int s : c_held) {
      EXPECT_EQ(Holder(ShardLease(s)), "c") << "shard " << s;
    }
  }
  // Within lease duration + a few rounds every shard has a live owner.
  int rounds = 0;
  while (!Balanced() && rounds < 10) {
    ASSERT_NO_FATAL_FAILURE(Round());
    ++rounds;
  }
  EXPECT_TRUE(Balanced());
  // c's last renewal was seen at most a round after it was written; its
  // shards are taken in the first round after they expire by the members
  // they are preferred for, or by a member below its share the round
  // after (the clock has also moved past the last round).
  EXPECT_LE(clock_.Now() - died, absl::Seconds(15) + absl::Seconds(2) * 3);
  for (int s : c_held) EXPECT_NE(Holder(ShardLease(s)), "c");
  (void)a;
}

TEST_F(ShardCoordinatorTest, DeadMembersShardsAreAllTakenWithinLeasePlusRetry) {
  Replica* a = AddReplica("a");
  Replica* b = AddReplica("b");
  Replica* c = AddReplica("c");
  ASSERT_GE(RoundsUntilBalanced(20), 0);
  // c's last round wrote its Leases after a and b listed, and they list
  // next a retry period later: the latest they can see c's last write.
  const absl::Time last_write = clock_.Now() - absl::Seconds(2);
  const std::vector<int> c_held = c->coordinator->Held();
  ASSERT_FALSE(c_held.empty());
  Kill(c);
  auto all_taken = [&] {
    for (int s : c_held) {
      if (!a->coordinator->Holds(s) && !b->coordinator->Holds(s)) return false;
    }
    return true;
  };
  // Not before the Leases run out (15 s after a and b saw them change)...
  EXPECT_FALSE(RunAsScheduled(
      clock_.Now() + absl::Seconds(15) - absl::Milliseconds(1), all_taken));
  for (int s : c_held) EXPECT_EQ(Holder(ShardLease(s)), "c") << "shard " << s;
  // ...and all at that moment, not a round or two later: within lease
  // duration + retry period of c's last write.
  EXPECT_TRUE(RunAsScheduled(last_write + absl::Seconds(15 + 2), all_taken));
  EXPECT_EQ(clock_.Now(), last_write + absl::Seconds(15 + 2));
  EXPECT_TRUE(Balanced());
}

TEST_F(ShardCoordinatorTest, NewMemberTakesOnlyReleasedShardsInHandoverOrder) {
  shards_ = 8;
  Replica* a = AddReplica("a");
  ASSERT_GE(RoundsUntilBalanced(5), 0);
  ASSERT_EQ(a->coordinator->Held().size(), 8u);
  // In OnReleasing the Lease still names a: the release comes after.
  int checked = 0;
  a->listener->on_releasing = [&](int shard, absl::Time) {
    EXPECT_EQ(Holder(ShardLease(shard)), "a");
    ++checked;
  };
  Replica* b = AddReplica("b");
  const size_t before = journal_.entries().size();
  ASSERT_GE(RoundsUntilBalanced(10), 0);
  EXPECT_EQ(checked, 4);
  // For every shard b took: a stopped (releasing), drained (released),
  // and only then did b acquire it.
  std::vector<Journal::Entry> log = journal_.entries();
  std::set<int> b_took;
  for (size_t i = before; i < log.size(); ++i) {
    if (log[i].replica != "b") continue;
    ASSERT_EQ(log[i].what, "acquired");
    const int s = log[i].shard;
    b_took.insert(s);
    int releasing = -1, released = -1;
    for (size_t j = before; j < i; ++j) {
      if (log[j].replica == "a" && log[j].shard == s) {
        (log[j].what == "releasing" ? releasing : released) =
            static_cast<int>(j);
      }
    }
    EXPECT_GE(releasing, 0) << "shard " << s;
    EXPECT_GT(released, releasing) << "shard " << s;
  }
  EXPECT_EQ(b_took.size(), 4u);
  for (int s : b->coordinator->Held()) EXPECT_EQ(Holder(ShardLease(s)), "b");
}

TEST_F(ShardCoordinatorTest, FlappingMembershipMovesNoShard) {
  shards_ = 12;
  AddReplica("a");
  Replica* b = AddReplica("b");
  AddReplica("c");
  ASSERT_GE(RoundsUntilBalanced(20), 0);
  const int acquired = journal_.Count("acquired");
  const std::map<std::string, int> counts = Counts();
  // b's membership renewals fail in bursts shorter than the lease, then in
  // one long enough for the others to count b out; its shard Leases stay
  // renewed throughout.
  for (int cycle = 0; cycle < 4; ++cycle) {
    b->client->SetMembershipDown(true);
    ASSERT_NO_FATAL_FAILURE(Rounds(cycle == 3 ? 12 : 4));
    b->client->SetMembershipDown(false);
    ASSERT_NO_FATAL_FAILURE(Rounds(2));
  }
  ASSERT_NO_FATAL_FAILURE(Rounds(3));
  EXPECT_EQ(journal_.Count("acquired"), acquired);
  EXPECT_EQ(Counts(), counts);
}

TEST_F(ShardCoordinatorTest, UnrenewedShardsStopBeforeAnyoneElseTakesThem) {
  shards_ = 4;
  Replica* a = AddReplica("a");
  ASSERT_GE(RoundsUntilBalanced(5), 0);
  Replica* b = AddReplica("b");
  std::vector<absl::Duration> margins;
  a->listener->on_releasing = [&](int, absl::Time deadline) {
    margins.push_back(deadline - clock_.Now());
  };
  // a is cut off from the server but keeps running its rounds; its last
  // renewal was in the round just before.
  a->client->SetDown(true);
  const absl::Time cut = clock_.Now();
  int rounds = 0;
  while (b->coordinator->Held().size() < 4u && rounds < 20) {
    ASSERT_NO_FATAL_FAILURE(Round());
    ++rounds;
  }
  ASSERT_EQ(b->coordinator->Held().size(), 4u);
  EXPECT_TRUE(a->coordinator->Held().empty());
  absl::Time a_stopped = absl::InfiniteFuture();
  absl::Time b_took = absl::InfiniteFuture();
  for (const Journal::Entry& e : journal_.entries()) {
    if (e.replica == "a" && e.what == "releasing") {
      a_stopped = std::min(a_stopped, e.at);
    }
    if (e.replica == "b" && e.what == "acquired")
      b_took = std::min(b_took, e.at);
  }
  // a stopped within its renew deadline of its last renewal (<= cut), and
  // b took over no earlier than the lease duration after that renewal was
  // written (>= cut - one round).
  EXPECT_LE(a_stopped - cut, absl::Seconds(10));
  EXPECT_GE(b_took - cut, absl::Seconds(15) - absl::Seconds(2));
  EXPECT_LT(a_stopped, b_took);
  // The drain of a lost shard may last until the Lease could expire for
  // others, and no longer.
  ASSERT_EQ(margins.size(), 4u);
  for (absl::Duration m : margins) {
    EXPECT_GT(m, absl::ZeroDuration());
    EXPECT_LE(m, absl::Seconds(5));
  }
}

TEST_F(ShardCoordinatorTest, MalformedLeasesAreTakenOnlyOnceExpired) {
  shards_ = 6;
  // A holder that is no member, with no duration, a negative one, an
  // absurd one, a valid long one, and a Lease that is not a shard's.
  const std::string head =
      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"namespace":"kube-system","name":")";
  ASSERT_NO_FATAL_FAILURE(CreateLease(
      head + ShardLease(0) + R"("},"spec":{"holderIdentity":"ghost"}})"));
  ASSERT_NO_FATAL_FAILURE(CreateLease(
      head + ShardLease(1) +
      R"("},"spec":{"holderIdentity":"ghost","leaseDurationSeconds":-5}})"));
  ASSERT_NO_FATAL_FAILURE(CreateLease(
      head + ShardLease(2) +
      R"("},"spec":{"holderIdentity":"ghost","leaseDurationSeconds":1000000000}})"));
  ASSERT_NO_FATAL_FAILURE(CreateLease(
      head + ShardLease(3) +
      R"("},"spec":{"holderIdentity":"ghost","leaseDurationSeconds":30}})"));
  ASSERT_NO_FATAL_FAILURE(CreateLease(
      head + "nginx-shard-07" + R"("},"spec":{"holderIdentity":"ghost"}})"));
  Replica* a = AddReplica("a");
  ASSERT_NO_FATAL_FAILURE(Round());
  EXPECT_EQ(a->coordinator->Held(), (std::vector<int>{4, 5}));
  EXPECT_FALSE(a->coordinator->Settled());
  // Judged with a's lease duration (15 s) from when a first saw them.
  ASSERT_NO_FATAL_FAILURE(Rounds(6));  // 12 s
  EXPECT_EQ(a->coordinator->Held(), (std::vector<int>{4, 5}));
  ASSERT_NO_FATAL_FAILURE(Rounds(4));  // 20 s, + grace for non-preferred
  EXPECT_EQ(a->coordinator->Held(), (std::vector<int>{0, 1, 2, 4, 5}));
  // The valid 30 s Lease is honoured.
  ASSERT_NO_FATAL_FAILURE(Rounds(8));  // 36 s
  EXPECT_EQ(a->coordinator->Held(), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(a->coordinator->Settled());
  EXPECT_EQ(Holder("nginx-shard-07"), "ghost");
}

TEST_F(ShardCoordinatorTest, LeaseRenewedByAnUnknownHolderIsNeverTaken) {
  shards_ = 2;
  const std::string head =
      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"namespace":"kube-system","name":")";
  ASSERT_NO_FATAL_FAILURE(CreateLease(
      head + ShardLease(0) +
      R"("},"spec":{"holderIdentity":"stranger","leaseDurationSeconds":15}})"));
  Replica* a = AddReplica("a");
  auto stranger = NewRestLeaseClient(client_.get(), kNamespace, kController);
  for (int i = 0; i < 20; ++i) {
    // The stranger renews every other round.
    if (i % 2 == 0) {
      auto listed = stranger->List(Context::Background(), ShardLease(0));
      ASSERT_TRUE(listed.ok());
      ASSERT_EQ(listed->size(), 1u);
      leaderelection::LeaderElectionRecord r = (*listed)[0].record;
      r.renew_time = clock_.Now();
      ASSERT_TRUE(
          stranger->Update(Context::Background(), (*listed)[0], r).ok());
    }
    ASSERT_NO_FATAL_FAILURE(Round());
    EXPECT_FALSE(a->coordinator->Holds(0));
  }
  // It stops: taken once its Lease has expired, 15 s after a saw its last
  // renewal (in the last round above).
  ASSERT_NO_FATAL_FAILURE(Rounds(6));  // 14 s
  EXPECT_FALSE(a->coordinator->Holds(0));
  ASSERT_NO_FATAL_FAILURE(Rounds(2));  // 18 s
  EXPECT_TRUE(a->coordinator->Holds(0));
  EXPECT_EQ(Holder(ShardLease(0)), "a");
}

TEST_F(ShardCoordinatorTest, ShardOverwrittenByAnotherHolderIsGivenUpAtOnce) {
  shards_ = 2;
  CountingMetrics metrics;
  Replica* a = AddReplica("a", &metrics);
  ASSERT_NO_FATAL_FAILURE(Round());
  ASSERT_EQ(a->coordinator->Held(), (std::vector<int>{0, 1}));
  // Someone else writes shard 0's Lease as its own.
  auto other = NewRestLeaseClient(client_.get(), kNamespace, kController);
  auto listed = other->List(Context::Background(), ShardLease(0));
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  leaderelection::LeaderElectionRecord r = (*listed)[0].record;
  r.holder_identity = "intruder";
  r.lease_duration_seconds = 15;
  ASSERT_TRUE(other->Update(Context::Background(), (*listed)[0], r).ok());
  // a's renewal meets a Conflict; its listing shows the new holder: a
  // stops at once, and does not take the shard back while it is alive.
  ASSERT_NO_FATAL_FAILURE(Round());
  EXPECT_EQ(a->coordinator->Held(), (std::vector<int>{1}));
  EXPECT_EQ(metrics.values().releases["lost"], 1);
  EXPECT_EQ(Holder(ShardLease(0)), "intruder");
  ASSERT_NO_FATAL_FAILURE(Rounds(6));  // 14 s after a saw the write
  EXPECT_EQ(a->coordinator->Held(), (std::vector<int>{1}));
  ASSERT_NO_FATAL_FAILURE(Rounds(2));
  EXPECT_EQ(a->coordinator->Held(), (std::vector<int>{0, 1}));
  EXPECT_EQ(Holder(ShardLease(0)), "a");
}

TEST_F(ShardCoordinatorTest, DeletedShardLeaseIsGivenUpThenRecreated) {
  shards_ = 2;
  Replica* a = AddReplica("a");
  ASSERT_NO_FATAL_FAILURE(Round());
  ASSERT_EQ(a->coordinator->Held().size(), 2u);
  int releasing = 0;
  a->listener->on_releasing = [&](int shard, absl::Time) {
    EXPECT_EQ(shard, 1);
    ++releasing;
  };
  ASSERT_TRUE(client_
                  ->Delete(Context::Background(),
                           client::Resource::Namespaced(kLeases, kNamespace),
                           ShardLease(1))
                  .ok());
  // Not renewable: given up; absent, so free: created and taken again.
  ASSERT_NO_FATAL_FAILURE(Round());
  EXPECT_EQ(releasing, 1);
  ASSERT_NO_FATAL_FAILURE(Round());
  EXPECT_EQ(a->coordinator->Held(), (std::vector<int>{0, 1}));
  EXPECT_EQ(Holder(ShardLease(1)), "a");
}

TEST_F(ShardCoordinatorTest, StopReleasesEveryShardThenTheMembership) {
  shards_ = 4;
  CountingMetrics metrics;
  Replica* a = AddReplica("a", &metrics);
  ASSERT_NO_FATAL_FAILURE(Round());
  ASSERT_EQ(a->coordinator->Held().size(), 4u);
  EXPECT_EQ(metrics.values().held, 4);
  EXPECT_EQ(metrics.values().acquisitions, 4);
  int releasing = 0;
  a->listener->on_releasing = [&](int shard, absl::Time) {
    EXPECT_EQ(Holder(ShardLease(shard)), "a");
    EXPECT_EQ(Holder(a->coordinator->MemberLeaseName()), "a");
    ++releasing;
  };
  a->coordinator->Stop();
  EXPECT_EQ(releasing, 4);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(Holder(ShardLease(s)), "");
  EXPECT_EQ(Holder(a->coordinator->MemberLeaseName()), "");
  EXPECT_EQ(metrics.values().held, 0);
  EXPECT_EQ(metrics.values().releases["stop"], 4);
  a->dead = true;
  // Released Leases are taken at once, without waiting them out.
  CountingMetrics b_metrics;
  Replica* b = AddReplica("b", &b_metrics);
  ASSERT_NO_FATAL_FAILURE(Round());
  EXPECT_EQ(b->coordinator->Held().size(), 4u);
  // The handover is measured from a's release, on one clock here.
  ASSERT_EQ(b_metrics.values().handovers.size(), 4u);
  for (double h : b_metrics.values().handovers) EXPECT_LE(h, 2.0);
}

TEST_F(ShardCoordinatorTest, RunRoundsUntilItsContextEndsThenReleases) {
  shards_ = 4;
  Replica* a = AddReplica("a");
  auto [ctx, cancel] = WithCancel(Context::Background());
  std::thread run([&, ctx = ctx] { a->coordinator->Run(ctx); });
  // The first round needs no time to pass.
  while (a->coordinator->Held().size() < 4u)
    absl::SleepFor(absl::Milliseconds(5));
  EXPECT_TRUE(a->coordinator->Settled());
  cancel();
  run.join();
  EXPECT_TRUE(a->coordinator->Held().empty());
  for (int s = 0; s < 4; ++s) EXPECT_EQ(Holder(ShardLease(s)), "");
}

}  // namespace
}  // namespace kcr::sharding
