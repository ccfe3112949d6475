#include "runtime/controller/shard_filter.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/object.h"
#include "api/selector/shard_selector.h"
#include "base/context.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "runtime/cache/thread_safe_store.h"
#include "runtime/controller/controller.h"
#include "runtime/controller/handler.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/controller/fake_shard_ownership.h"

namespace kcr::controller {
namespace {

using sharding::ShardBy;
using testing::FakeShardOwnership;

constexpr int kShards = 16;

// Polls `cond` (real time; waits for another thread's progress, never for
// a duration to pass) for up to 30 s.
bool Eventually(const std::function<bool()>& cond) {
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  while (!cond()) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

api::ObjectPtr Obj(const std::string& ns, const std::string& name,
                   const std::string& uid, const std::string& owners = "[]") {
  auto o = api::Object::Parse(absl::StrCat(
      R"({"apiVersion":"example.org/v1","kind":"Nginx","metadata":{"name":")",
      name, R"(","namespace":")", ns, R"(","uid":")", uid,
      R"(","ownerReferences":)", owners, "}}"));
  EXPECT_TRUE(o.ok()) << o.status();
  return *o;
}

int ShardOfUid(const std::string& uid) {
  return sharding::ShardOf(ShardBy::kUid, uid, "", kShards);
}

// A uid (u-<n>) in `shard`, a different one on each call.
std::string UidIn(int shard) {
  static std::atomic<int> next{0};
  for (;;) {
    std::string uid = absl::StrCat("u-", next++);
    if (ShardOfUid(uid) == shard) return uid;
  }
}

// Records the keys reconciled and whether two ran at once; blocks the
// reconcile of `block` until Unblock.
class AuditReconciler final : public Reconciler {
 public:
  absl::StatusOr<Result> Reconcile(const Request& request,
                                   ReconcileContext&) override {
    MutexLock lock(&mu_);
    seen_.push_back(request.name);
    if (request.name == block_) {
      entered_ = true;
      while (!unblocked_) cv_.WaitWithTimeout(&mu_, absl::Milliseconds(1));
      finished_ = true;
    }
    return Result::Done();
  }
  void Block(std::string name) {
    MutexLock lock(&mu_);
    block_ = std::move(name);
  }
  void Unblock() {
    MutexLock lock(&mu_);
    unblocked_ = true;
  }
  bool entered() {
    MutexLock lock(&mu_);
    return entered_;
  }
  bool finished() {
    MutexLock lock(&mu_);
    return finished_;
  }
  std::vector<std::string> seen() {
    MutexLock lock(&mu_);
    return seen_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::string block_ ABSL_GUARDED_BY(mu_);
  bool unblocked_ ABSL_GUARDED_BY(mu_) = false;
  bool entered_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> seen_ ABSL_GUARDED_BY(mu_);
};

class ShardFilterTest : public ::testing::Test {
 protected:
  ShardFilterTest() : ownership_(kShards, ShardBy::kUid) {}
  ~ShardFilterTest() override { Stop(); }

  // A one-worker controller filtered by a ShardFilter on ownership_ and
  // cache_, holding `held` from the start.
  void Make(const std::vector<int>& held) {
    ownership_.Hold(held);
    ShardFilterOptions o;
    o.controller = "nginx";
    o.ownership = &ownership_;
    o.for_cache = &cache_;
    o.clock = &clock_;
    o.on_held_changed = [this](const std::vector<int>& h) {
      MutexLock lock(&mu_);
      held_changes_.push_back(h);
    };
    filter_ = std::make_shared<ShardFilter>(std::move(o));
    ownership_.AddListener(filter_.get());
    ControllerOptions options;
    options.name = "nginx";
    options.clock = &clock_;
    options.shard_filter = filter_;
    auto c = Controller::New(std::move(options), reconciler_);
    ASSERT_TRUE(c.ok()) << c.status();
    controller_ = *std::move(c);
    for_handler_ = ShardedEventHandler(EnqueueRequestForObject(), filter_,
                                       ShardedWatch::kFor);
  }
  void Start() {
    auto [ctx, cancel] = WithCancel(Context::Background());
    cancel_ = cancel;
    thread_ = std::thread(
        [this, ctx = ctx] { EXPECT_TRUE(controller_->Start(ctx).ok()); });
  }
  void Stop() {
    if (!thread_.joinable()) return;
    cancel_();
    thread_.join();
  }
  // An Nginx event delivered to the For watch (and cached).
  api::ObjectPtr Create(const std::string& name, const std::string& uid) {
    api::ObjectPtr o = Obj("default", name, uid);
    EXPECT_TRUE(cache_.Add(o).ok());
    for_handler_->Create(CreateEvent{o, false}, controller_->queue());
    return o;
  }
  std::vector<std::vector<int>> held_changes() {
    MutexLock lock(&mu_);
    return held_changes_;
  }

  testing::FakeClock clock_;
  FakeShardOwnership ownership_;
  cache::ThreadSafeStore cache_;
  std::shared_ptr<AuditReconciler> reconciler_ =
      std::make_shared<AuditReconciler>();
  std::shared_ptr<ShardFilter> filter_;
  std::unique_ptr<Controller> controller_;
  std::shared_ptr<EventHandler> for_handler_;
  CancelFunc cancel_;
  std::thread thread_;
  Mutex mu_;
  std::vector<std::vector<int>> held_changes_ ABSL_GUARDED_BY(mu_);
};

// The cache holds every shard's objects here, as it does when the server
// ignores shardSelector (a cluster without the ShardedListAndWatch gate):
// the filter alone keeps the other shards' keys out.
TEST_F(ShardFilterTest, KeysOfShardsNotHeldAreNeverReconciled) {
  Make({0, 1, 2, 3, 4, 5, 6, 7});
  absl::flat_hash_set<std::string> ours;
  for (int i = 0; i < 200; ++i) {
    const int shard = i % kShards;
    const std::string name = absl::StrCat("n", i);
    Create(name, UidIn(shard));
    if (shard < 8) ours.insert(name);
  }
  EXPECT_EQ(controller_->queue().Len(), ours.size());
  EXPECT_EQ(filter_->filtered(), 200 - static_cast<int64_t>(ours.size()));
  // A key of a shard not held that reaches the queue some other way (a
  // retry, a direct add) is dropped when dequeued.
  Create("theirs", UidIn(9));
  controller_->queue().Add(Request{"default", "theirs"});
  controller_->queue().Add(Request{"default", "unknown"});
  Start();
  ASSERT_TRUE(Eventually([&] { return filter_->dropped() == 2; }));
  ASSERT_TRUE(
      Eventually([&] { return reconciler_->seen().size() == ours.size(); }));
  Stop();
  for (const std::string& name : reconciler_->seen()) {
    EXPECT_TRUE(ours.contains(name)) << name;
  }
}

TEST_F(ShardFilterTest, ReleaseDrainsInFlightAndDropsQueuedKeys) {
  const int shard = 3;
  Make({shard});
  reconciler_->Block("a");
  Create("a", UidIn(shard));
  Start();
  ASSERT_TRUE(Eventually([&] { return reconciler_->entered(); }));
  Create("b", UidIn(shard));  // queued behind "a" (one worker)
  std::atomic<bool> released{false};
  std::thread releasing([&] {
    ownership_.Release(shard, clock_.Now() + absl::Hours(1));
    released = true;
  });
  // OnReleasing stops the shard's keys at once, then waits for "a"; no new
  // key of the shard gets in meanwhile.
  ASSERT_TRUE(Eventually([&] { return filter_->Held().empty(); }));
  Create("c", UidIn(shard));
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE(released.load());
  EXPECT_FALSE(reconciler_->finished());
  reconciler_->Unblock();
  releasing.join();
  EXPECT_TRUE(reconciler_->finished());
  // "b" was queued when the shard went: dequeued and dropped, never run.
  ASSERT_TRUE(Eventually([&] { return filter_->dropped() == 1; }));
  Stop();
  EXPECT_EQ(reconciler_->seen(), std::vector<std::string>{"a"});
  EXPECT_TRUE(filter_->Held().empty());
  ASSERT_FALSE(held_changes().empty());
  EXPECT_TRUE(held_changes().back().empty());
}

TEST_F(ShardFilterTest, ReleaseReturnsAtTheDeadlineWhenAReconcileHangs) {
  const int shard = 5;
  Make({shard});
  reconciler_->Block("a");
  Create("a", UidIn(shard));
  Start();
  ASSERT_TRUE(Eventually([&] { return reconciler_->entered(); }));
  std::atomic<bool> released{false};
  const absl::Time deadline = clock_.Now() + absl::Seconds(5);
  std::thread releasing([&] {
    ownership_.Release(shard, deadline);
    released = true;
  });
  ASSERT_TRUE(Eventually([&] { return filter_->Held().empty(); }));
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE(released.load());
  // Past the deadline it gives up waiting (and says so in the log).
  ASSERT_TRUE(Eventually([&] {
    clock_.Advance(absl::Seconds(1));
    return released.load();
  }));
  releasing.join();
  EXPECT_TRUE(released.load());
  EXPECT_FALSE(reconciler_->finished());
  reconciler_->Unblock();
  Stop();
}

TEST_F(ShardFilterTest, AcquireEnqueuesTheCachedKeysOfTheShard) {
  Make({});
  // Cached while the shard was not held: nothing enqueued.
  Create("x1", UidIn(6));
  Create("x2", UidIn(6));
  Create("y", UidIn(7));
  EXPECT_EQ(controller_->queue().Len(), 0u);
  ownership_.Acquire(6);
  EXPECT_EQ(controller_->queue().Len(), 2u);
  EXPECT_EQ(filter_->Held(), std::vector<int>{6});
  ASSERT_EQ(held_changes().size(), 1u);
  EXPECT_EQ(held_changes()[0], std::vector<int>{6});
  Start();
  ASSERT_TRUE(Eventually([&] { return reconciler_->seen().size() == 2; }));
  Stop();
  std::vector<std::string> seen = reconciler_->seen();
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"x1", "x2"}));
}

TEST_F(ShardFilterTest, AnOwnedObjectGoesToItsOwnersShard) {
  Make({2});
  auto owned = ShardedEventHandler(
      EnqueueRequestForOwner(OwnerType{"example.org", "Nginx", true, true}),
      filter_, ShardedWatch::kOwned);
  const auto ref = [](const std::string& name, const std::string& uid) {
    return absl::StrCat(
        R"([{"apiVersion":"example.org/v1","kind":"Nginx","name":")", name,
        R"(","uid":")", uid, R"(","controller":true}])");
  };
  // The Deployments' own uids are in shard 2 and 9; only the owner's
  // counts. The owners are not cached (not seen yet).
  owned->Create(
      CreateEvent{Obj("default", "d1", UidIn(9), ref("mine", UidIn(2))), false},
      controller_->queue());
  owned->Create(
      CreateEvent{Obj("default", "d2", UidIn(2), ref("theirs", UidIn(9))),
                  false},
      controller_->queue());
  ASSERT_EQ(controller_->queue().Len(), 1u);
  Start();
  ASSERT_TRUE(Eventually([&] { return reconciler_->seen().size() == 1; }));
  Stop();
  EXPECT_EQ(reconciler_->seen(), std::vector<std::string>{"mine"});
}

TEST_F(ShardFilterTest, ADeletedObjectIsReconciledInItsShard) {
  Make({4});
  api::ObjectPtr o = Create("gone", UidIn(4));
  ASSERT_TRUE(cache_.Delete(o).ok());
  for_handler_->Delete(DeleteEvent{o, false}, controller_->queue());
  Start();
  ASSERT_TRUE(Eventually([&] { return reconciler_->seen().size() == 1; }));
  Stop();
  EXPECT_EQ(filter_->dropped(), 0);
}

TEST_F(ShardFilterTest, NamespaceShardingNeedsNoLookup) {
  FakeShardOwnership by_namespace(kShards, ShardBy::kNamespace);
  const int shard =
      sharding::ShardOf(ShardBy::kNamespace, "", "team-a", kShards);
  by_namespace.Hold({shard});
  ShardFilterOptions o;
  o.ownership = &by_namespace;
  ShardFilter filter(std::move(o));
  EXPECT_TRUE(filter.Admit(Request{"team-a", "x"}, std::nullopt));
  EXPECT_TRUE(filter.Begin(Request{"team-a", "x"}));
  filter.End(Request{"team-a", "x"});
  const bool b_held =
      sharding::ShardOf(ShardBy::kNamespace, "", "team-b", kShards) == shard;
  EXPECT_EQ(filter.Admit(Request{"team-b", "x"}, std::nullopt), b_held);
}

TEST(ShardSelectorForTest, AllNoneAndSome) {
  EXPECT_EQ(ShardSelectorFor(ShardBy::kUid, {0, 1, 2, 3}, 4), "");
  // None held: a valid selector that matches (practically) nothing.
  auto none = api::ShardSelector::Parse(ShardSelectorFor(ShardBy::kUid, {}, 4));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->MatchesHash(1));
  EXPECT_FALSE(none->MatchesHash(~uint64_t{0}));
  auto some = api::ShardSelector::Parse(
      ShardSelectorFor(ShardBy::kNamespace, {1, 2}, 4));
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_EQ(some->field(), api::ShardField::kNamespace);
  EXPECT_TRUE(some->MatchesHash(uint64_t{1} << 62));
  EXPECT_TRUE(some->MatchesHash((uint64_t{3} << 62) - 1));
  EXPECT_FALSE(some->MatchesHash(uint64_t{3} << 62));
  EXPECT_FALSE(some->MatchesHash(0));
}

}  // namespace
}  // namespace kcr::controller
