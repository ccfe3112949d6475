#include "runtime/cache/reflector.h"

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"  // absl::Condition
#include "absl/time/clock.h"
#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "base/mutex.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_cache_metrics.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_list_watch.h"
#include "test/fakes/registry_list_watch.h"

namespace kcr::cache {
namespace {

using ::kcr::testing::FakeCacheMetrics;
using ::kcr::testing::FakeListWatch;
using ::kcr::testing::FakeWatch;
using ::testing::ElementsAre;
using ::testing::Ge;
using ::testing::Lt;
using ::testing::Optional;

api::ObjectPtr Obj(std::string_view name, std::string_view rv,
                   std::string_view kind = "ConfigMap") {
  std::string json = R"({"apiVersion":"v1","kind":")";
  json.append(kind).append(R"(","metadata":{"namespace":"ns","name":")");
  json.append(name).append(R"(","resourceVersion":")").append(rv);
  json.append(R"("}})");
  return *api::Object::Parse(json);
}

absl::Status Expired() {
  return api::StatusError::Expired("too old resource version: 5 (9)")
      .ToStatus();
}

absl::Status Refused() {
  return absl::UnavailableError(
      "GET 127.0.0.1:6443/api/v1/configmaps: Connection refused");
}

// A Store that records what the reflector did to it.
class RecordingStore final : public Store {
 public:
  absl::Status Add(api::ObjectPtr o) override { return Record("Add", *o); }
  absl::Status Update(api::ObjectPtr o) override {
    return Record("Update", *o);
  }
  absl::Status Delete(api::ObjectPtr o) override {
    return Record("Delete", *o);
  }
  std::vector<api::ObjectPtr> List() const override { return {}; }
  std::vector<std::string> ListKeys() const override { return {}; }
  api::ObjectPtr GetByKey(std::string_view) const override { return nullptr; }
  absl::Status Replace(std::vector<api::ObjectPtr> objects,
                       std::string rv) override {
    std::string entry = "Replace ";
    for (size_t i = 0; i < objects.size(); ++i) {
      if (i > 0) entry += ",";
      entry.append(objects[i]->name());
    }
    entry += "@" + rv;
    MutexLock lock(&mu_);
    log_.push_back(entry);
    return absl::OkStatus();
  }
  absl::Status Resync() override {
    MutexLock lock(&mu_);
    log_.push_back("Resync");
    return resync_error_;
  }

  // Whether HoldWakeups / ReleaseWakeups go into the log (as "Hold" and
  // "Release").
  void set_record_wakeups(bool record) {
    MutexLock lock(&mu_);
    record_wakeups_ = record;
  }
  void HoldWakeups() override {
    MutexLock lock(&mu_);
    if (record_wakeups_) log_.push_back("Hold");
  }
  void ReleaseWakeups() override {
    MutexLock lock(&mu_);
    if (record_wakeups_) log_.push_back("Release");
  }

  void set_resync_error(absl::Status s) {
    MutexLock lock(&mu_);
    resync_error_ = std::move(s);
  }
  std::vector<std::string> log() const {
    MutexLock lock(&mu_);
    return log_;
  }
  // Blocks until `n` operations have been recorded.
  void WaitFor(size_t n) const {
    MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return log_.size() >= n;
    };
    mu_.Await(absl::Condition(&enough));
  }

 private:
  absl::Status Record(std::string_view op, const api::Object& o) {
    KCR_RETURN_IF_ERROR(MetaNamespaceKey(o).status());
    std::string entry(op);
    entry.append(" ").append(o.name()).append("@").append(o.resource_version());
    MutexLock lock(&mu_);
    log_.push_back(entry);
    return absl::OkStatus();
  }

  mutable Mutex mu_;
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
  absl::Status resync_error_ ABSL_GUARDED_BY(mu_);
  bool record_wakeups_ ABSL_GUARDED_BY(mu_) = false;
};

RandomFunc Constant(double v) {
  return [v] { return v; };
}

class ReflectorTest : public ::testing::Test {
 protected:
  ~ReflectorTest() override { Stop(); }

  ReflectorOptions Options() {
    ReflectorOptions o;
    o.name = "cms";
    o.expected_api_version = "v1";
    o.expected_kind = "ConfigMap";
    o.clock = &clock_;
    o.metrics = &metrics_;
    o.random = Constant(0);
    return o;
  }

  void Start(ReflectorOptions options) {
    reflector_ = std::make_unique<Reflector>(&lw_, &store_, options);
    auto [ctx, cancel] = WithCancel(Context::Background());
    cancel_ = cancel;
    thread_ = std::thread([this, ctx = ctx] { run_ = reflector_->Run(ctx); });
  }
  void Start() { Start(Options()); }

  void Stop() {
    if (!thread_.joinable()) return;
    cancel_();
    thread_.join();
    EXPECT_TRUE(run_.ok()) << run_;
  }

  // Moves time past a backoff of `d` that the reflector is sleeping, after
  // checking that it is still asleep just before.
  void PassBackoff(absl::Duration d) {
    clock_.BlockUntilTimers(1);
    clock_.Advance(d - absl::Milliseconds(1));
    EXPECT_EQ(clock_.ArmedTimers(), 1) << "woke before " << d;
    clock_.Advance(absl::Milliseconds(1));
  }

  double Metric(std::string_view metric, std::string_view label = "") {
    return metrics_.Value(metric, "cms", label);
  }

  testing::FakeClock clock_;
  FakeListWatch lw_;
  RecordingStore store_;
  FakeCacheMetrics metrics_;
  std::unique_ptr<Reflector> reflector_;
  CancelFunc cancel_;
  std::thread thread_;
  absl::Status run_;
};

TEST_F(ReflectorTest, FirstListsAtZeroInPagesOf500ThenWatchesFromItsVersion) {
  lw_.SetState({Obj("a", "3"), Obj("b", "7")}, "10");
  Start();
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  EXPECT_THAT(store_.log(), ElementsAre("Replace a,b@10"));
  ASSERT_EQ(lw_.list_call_count(), 1u);
  client::ListOptions list = lw_.list_calls()[0];
  EXPECT_EQ(list.resource_version, "0");
  EXPECT_EQ(list.limit, 500);
  EXPECT_EQ(list.continue_token, "");

  const client::ListOptions& w = watch->options();
  EXPECT_EQ(w.resource_version, "10");
  EXPECT_TRUE(w.allow_watch_bookmarks);
  EXPECT_FALSE(w.send_initial_events);
  EXPECT_THAT(w.timeout_seconds, Optional(300));
  EXPECT_EQ(reflector_->LastSyncResourceVersion(), "10");
  EXPECT_EQ(Metric(FakeCacheMetrics::kLastResourceVersion), 10);
}

TEST_F(ReflectorTest, FollowsContinueTokensAndReplacesOnceWithEveryPage) {
  lw_.SetState({Obj("a", "1"), Obj("b", "2"), Obj("c", "3"), Obj("d", "4"),
                Obj("e", "5")},
               "10");
  ReflectorOptions options = Options();
  options.page_size = 2;
  Start(options);
  lw_.WaitForWatch(0);
  std::vector<client::ListOptions> calls = lw_.list_calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].resource_version, "0");
  EXPECT_EQ(calls[0].continue_token, "");
  // A resourceVersion with a continue token is refused by servers.
  EXPECT_EQ(calls[1].resource_version, "");
  EXPECT_EQ(calls[1].continue_token, "2");
  EXPECT_EQ(calls[2].continue_token, "4");
  for (const auto& c : calls) EXPECT_EQ(c.limit, 2);
  EXPECT_THAT(store_.log(), ElementsAre("Replace a,b,c,d,e@10"));
}

TEST_F(ReflectorTest, ExpiredContinueTokenFallsBackToOneFullList) {
  lw_.PushList({absl::OkStatus(), {Obj("a", "1"), Obj("b", "2")}, "10", "c1"});
  lw_.PushListError(Expired());
  lw_.SetState({Obj("a", "1"), Obj("b", "2"), Obj("c", "3")}, "12");
  Start();
  lw_.WaitForWatch(0);
  std::vector<client::ListOptions> calls = lw_.list_calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[1].continue_token, "c1");
  EXPECT_EQ(calls[2].continue_token, "");
  EXPECT_EQ(calls[2].limit, 0);
  EXPECT_EQ(calls[2].resource_version, "0");
  // Items of the first page are not doubled.
  EXPECT_THAT(store_.log(), ElementsAre("Replace a,b,c@12"));
}

TEST_F(ReflectorTest, WatchEventsReachTheStoreAndMoveTheVersionOn) {
  lw_.SetState({}, "10");
  Start();
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  watch->Add(Obj("a", "11"));
  watch->Modify(Obj("a", "12"));
  watch->Delete(Obj("a", "13"));
  watch->Bookmark("20");
  watch->WaitUntilDrained();
  EXPECT_THAT(store_.log(), ElementsAre("Replace @10", "Add a@11",
                                        "Update a@12", "Delete a@13"));
  EXPECT_EQ(reflector_->LastSyncResourceVersion(), "20");
  EXPECT_EQ(Metric(FakeCacheMetrics::kEvents, "ADDED"), 1);
  EXPECT_EQ(Metric(FakeCacheMetrics::kEvents, "MODIFIED"), 1);
  EXPECT_EQ(Metric(FakeCacheMetrics::kEvents, "DELETED"), 1);
  EXPECT_EQ(Metric(FakeCacheMetrics::kEvents, "BOOKMARK"), 1);
  EXPECT_EQ(Metric(FakeCacheMetrics::kLastResourceVersion), 20);
}

TEST_F(ReflectorTest, ARunOfBufferedEventsHoldsTheStoresWakeups) {
  lw_.SetState({}, "10");
  store_.set_record_wakeups(true);
  Start();
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  watch->WaitUntilDrained();
  // Three events the stream has at once, then one alone.
  watch->PushAll({
      client::WatchEvent{api::EventType::kAdded, Obj("a", "11"), {}},
      client::WatchEvent{api::EventType::kModified, Obj("a", "12"), {}},
      client::WatchEvent{api::EventType::kDeleted, Obj("a", "13"), {}},
  });
  watch->WaitUntilDrained();
  watch->Add(Obj("b", "14"));
  watch->WaitUntilDrained();
  // Released before the last event of the run: the store wakes its
  // consumer with it, before the reflector waits for more.
  EXPECT_THAT(store_.log(),
              ElementsAre("Replace @10", "Hold", "Add a@11", "Update a@12",
                          "Release", "Delete a@13", "Add b@14"));
}

TEST_F(ReflectorTest, CleanCloseWatchesAgainFromTheLastVersionWithoutList) {
  lw_.SetState({}, "10");
  Start();
  std::shared_ptr<FakeWatch> first = lw_.WaitForWatch(0);
  first->Add(Obj("a", "11"));
  first->Close();
  std::shared_ptr<FakeWatch> second = lw_.WaitForWatch(1);
  EXPECT_EQ(second->options().resource_version, "11");
  EXPECT_TRUE(first->stopped());
  // A broken connection is a quiet end too.
  second->Bookmark("15");
  second->Break(absl::UnavailableError("connection reset by peer"));
  std::shared_ptr<FakeWatch> third = lw_.WaitForWatch(2);
  EXPECT_EQ(third->options().resource_version, "15");
  EXPECT_EQ(lw_.list_call_count(), 1u);
  EXPECT_EQ(clock_.ArmedTimers(), 0);  // no backoff
  EXPECT_EQ(Metric(FakeCacheMetrics::kWatchRestarts), 2);
  EXPECT_EQ(Metric(FakeCacheMetrics::kRelists), 0);
}

TEST_F(ReflectorTest, RelistEndsTheWatchAndListsAgainAtOnce) {
  lw_.SetState({Obj("a", "5")}, "10");
  Start();
  std::shared_ptr<FakeWatch> first = lw_.WaitForWatch(0);
  EXPECT_TRUE(reflector_->Relisted());
  first->Add(Obj("b", "11"));
  while (reflector_->LastSyncResourceVersion() != "11") {
    absl::SleepFor(absl::Milliseconds(1));
  }
  reflector_->Relist();
  lw_.WaitForListCalls(2);
  lw_.WaitForWatch(1);
  EXPECT_TRUE(first->stopped());
  EXPECT_EQ(lw_.list_calls()[1].resource_version, "11");
  EXPECT_EQ(lw_.list_call_count(), 2u);
  EXPECT_EQ(clock_.ArmedTimers(), 0);  // no backoff
  EXPECT_TRUE(reflector_->Relisted());
}

TEST_F(ReflectorTest, RelistsInABurstCostOneList) {
  lw_.SetState({Obj("a", "5")}, "10");
  ReflectorOptions o = Options();
  o.relist_batch_window = absl::Milliseconds(100);
  Start(o);
  std::shared_ptr<FakeWatch> first = lw_.WaitForWatch(0);
  reflector_->Relist();
  // The watch ends at once; the list waits for the burst to end.
  clock_.BlockUntilTimers(1);
  EXPECT_TRUE(first->stopped());
  clock_.Advance(absl::Milliseconds(60));
  reflector_->Relist();
  clock_.Advance(absl::Milliseconds(60));
  reflector_->Relist();
  clock_.Advance(absl::Milliseconds(60));
  // 100 ms after the first request, but only 60 after the last.
  clock_.BlockUntilTimers(1);
  EXPECT_EQ(lw_.list_call_count(), 1u);
  EXPECT_FALSE(reflector_->Relisted());
  clock_.Advance(absl::Milliseconds(40));
  lw_.WaitForListCalls(2);
  lw_.WaitForWatch(1);
  EXPECT_EQ(lw_.list_call_count(), 2u);
  EXPECT_TRUE(reflector_->Relisted());
}

TEST_F(ReflectorTest, RelistedIsFalseUntilTheNextListCompletes) {
  lw_.SetState({}, "10");
  Start();
  lw_.WaitForWatch(0);
  // Not running a list now: the request stays pending until one is made.
  Stop();
  reflector_->Relist();
  EXPECT_FALSE(reflector_->Relisted());
}

TEST_F(ReflectorTest, VeryShortWatchBacksOffThenRelistsAtTheLastVersion) {
  lw_.SetState({Obj("a", "5")}, "10");
  Start();
  lw_.WaitForWatch(0)->Close();  // no event, no time: a very short watch
  PassBackoff(absl::Milliseconds(800));
  lw_.WaitForListCalls(2);
  client::ListOptions relist = lw_.list_calls()[1];
  EXPECT_EQ(relist.resource_version, "10");
  // At a specific version: no limit, so that the watch cache serves it.
  EXPECT_EQ(relist.limit, 0);
  lw_.WaitForWatch(1);
  EXPECT_EQ(Metric(FakeCacheMetrics::kRelists), 1);
}

TEST_F(ReflectorTest, ExpiredWatchRelistsAtLastVersionThenAtEmptyOn410) {
  lw_.SetState({}, "10");
  Start();
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  watch->Add(Obj("a", "11"));
  // The list at the last version is gone too: at once, a list at "".
  lw_.PushListError(Expired());
  watch->Error(Expired());
  PassBackoff(absl::Milliseconds(800));
  lw_.WaitForWatch(1);
  std::vector<client::ListOptions> calls = lw_.list_calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].resource_version, "0");
  EXPECT_EQ(calls[1].resource_version, "11");
  EXPECT_EQ(calls[2].resource_version, "");
  EXPECT_EQ(Metric(FakeCacheMetrics::kEvents, "ERROR"), 1);
}

TEST_F(ReflectorTest, TheUnavailableVersionIsForgottenAfterAGoodList) {
  lw_.PushListError(Expired());  // even the first list at "0"
  lw_.SetState({}, "10");
  Start();
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  watch->Error(api::StatusError::InternalError("etcd hiccup").ToStatus());
  PassBackoff(absl::Milliseconds(800));
  lw_.WaitForListCalls(3);
  std::vector<client::ListOptions> calls = lw_.list_calls();
  EXPECT_EQ(calls[0].resource_version, "0");
  EXPECT_EQ(calls[1].resource_version, "");
  EXPECT_EQ(calls[2].resource_version, "10");
}

TEST_F(ReflectorTest, PagingStaysOnWhenTheFirstListCameBackPaged) {
  lw_.PushList({absl::OkStatus(), {Obj("a", "1")}, "10", "1"});
  lw_.SetState({Obj("a", "1"), Obj("b", "2")}, "10");
  Start();
  lw_.WaitForWatch(0)->Close();
  PassBackoff(absl::Milliseconds(800));
  lw_.WaitForListCalls(3);
  client::ListOptions relist = lw_.list_calls()[2];
  EXPECT_EQ(relist.resource_version, "10");
  EXPECT_EQ(relist.limit, 500);
}

TEST_F(ReflectorTest, RefusedOr429WatchBacksOffAndWatchesAgainWithoutList) {
  lw_.SetState({}, "10");
  lw_.PushWatchError(Refused());
  lw_.PushWatchError(
      api::StatusError::TooManyRequests("slow down", 1).ToStatus());
  Start();
  lw_.WaitForWatchCalls(1);
  PassBackoff(absl::Milliseconds(800));
  lw_.WaitForWatchCalls(2);
  PassBackoff(absl::Milliseconds(1600));
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  EXPECT_EQ(watch->options().resource_version, "10");
  EXPECT_EQ(lw_.watch_call_count(), 3u);
  EXPECT_EQ(lw_.list_call_count(), 1u);
}

TEST_F(ReflectorTest, OtherWatchOpenErrorsRelistAfterBackoff) {
  lw_.SetState({}, "10");
  lw_.PushWatchError(
      api::StatusError::Forbidden({"", "configmaps"}, "", "no RBAC")
          .ToStatus());
  Start();
  lw_.WaitForWatchCalls(1);
  PassBackoff(absl::Milliseconds(800));
  lw_.WaitForWatch(0);
  EXPECT_EQ(lw_.list_call_count(), 2u);
}

TEST_F(ReflectorTest, ABrokenWatchStreamThatCannotDecodeRelists) {
  lw_.SetState({}, "10");
  Start();
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  watch->Add(Obj("a", "11"));
  watch->Break(absl::InvalidArgumentError("bad JSON"));
  PassBackoff(absl::Milliseconds(800));
  lw_.WaitForListCalls(2);
  EXPECT_EQ(lw_.list_calls()[1].resource_version, "11");
}

TEST_F(ReflectorTest, BackoffDoublesOnFailuresAndResetsAfterTwoQuietMinutes) {
  lw_.PushListError(absl::UnavailableError("down"));
  lw_.PushListError(absl::UnavailableError("down"));
  lw_.PushListError(absl::UnavailableError("down"));
  lw_.SetState({}, "10");
  Start();
  PassBackoff(absl::Milliseconds(800));
  PassBackoff(absl::Milliseconds(1600));
  PassBackoff(absl::Milliseconds(3200));
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  EXPECT_EQ(lw_.list_call_count(), 4u);
  // A watch that runs for three minutes: the next backoff starts over.
  watch->Add(Obj("a", "11"));
  watch->WaitUntilDrained();
  clock_.Advance(absl::Minutes(3));
  watch->Error(api::StatusError::InternalError("x").ToStatus());
  PassBackoff(absl::Milliseconds(800));
  lw_.WaitForWatch(1);
  EXPECT_EQ(lw_.list_call_count(), 5u);
}

TEST_F(ReflectorTest, WatchTimeoutIsRandomBetweenFiveAndTenMinutes) {
  lw_.SetState({}, "10");
  ReflectorOptions options = Options();
  options.random = SeededRandom(1);
  Start(options);
  for (size_t i = 0; i < 20; ++i) {
    std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(i);
    EXPECT_THAT(watch->options().timeout_seconds, Optional(Ge(300)));
    EXPECT_THAT(watch->options().timeout_seconds, Optional(Lt(600)));
    watch->Bookmark("10");
    watch->Close();
  }
  Stop();

  ReflectorOptions top = Options();
  top.random = Constant(0.9999);
  FakeListWatch lw;
  Reflector reflector(&lw, &store_, top);
  auto [ctx, cancel] = WithCancel(Context::Background());
  std::thread run([&, ctx = ctx] { (void)reflector.Run(ctx); });
  EXPECT_THAT(lw.WaitForWatch(0)->options().timeout_seconds, Optional(599));
  cancel();
  run.join();
}

TEST_F(ReflectorTest, StreamingListCollectsInitialEventsUntilTheEndBookmark) {
  ReflectorOptions options = Options();
  options.use_watch_list = true;
  Start(options);
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  const client::ListOptions& w = watch->options();
  EXPECT_TRUE(w.send_initial_events);
  EXPECT_TRUE(w.allow_watch_bookmarks);
  EXPECT_EQ(w.resource_version_match, "NotOlderThan");
  EXPECT_EQ(w.resource_version, "");
  watch->Add(Obj("b", "6"));
  watch->Add(Obj("a", "5"));
  watch->Bookmark("6");
  watch->WaitUntilDrained();
  // Initial events do not move the reflector's version.
  EXPECT_EQ(reflector_->LastSyncResourceVersion(), "");
  EXPECT_THAT(store_.log(), ElementsAre());
  watch->Bookmark("7", /*initial_events_end=*/true);
  store_.WaitFor(1);
  EXPECT_THAT(store_.log(), ElementsAre("Replace b,a@7"));
  // The same stream carries on as the watch.
  watch->Modify(Obj("a", "8"));
  watch->WaitUntilDrained();
  EXPECT_EQ(store_.log()[1], "Update a@8");
  EXPECT_EQ(reflector_->LastSyncResourceVersion(), "8");
  EXPECT_EQ(lw_.list_call_count(), 0u);
  EXPECT_EQ(lw_.watch_call_count(), 1u);
}

TEST_F(ReflectorTest, StreamingListRefusedFallsBackToListAndWatch) {
  lw_.SetState({Obj("a", "3")}, "10");
  lw_.PushWatchError(
      api::StatusError::BadRequest("sendInitialEvents is not supported")
          .ToStatus());
  ReflectorOptions options = Options();
  options.use_watch_list = true;
  Start(options);
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  EXPECT_FALSE(watch->options().send_initial_events);
  EXPECT_EQ(watch->options().resource_version, "10");
  ASSERT_EQ(lw_.list_call_count(), 1u);
  EXPECT_EQ(lw_.list_calls()[0].resource_version, "0");
  EXPECT_THAT(store_.log(), ElementsAre("Replace a@10"));
}

TEST_F(ReflectorTest, StreamingListStartsOverAfterExpiredVersion) {
  ReflectorOptions options = Options();
  options.use_watch_list = true;
  Start(options);
  std::shared_ptr<FakeWatch> first = lw_.WaitForWatch(0);
  first->Add(Obj("a", "5"));
  first->Bookmark("5", true);
  store_.WaitFor(1);
  first->Error(Expired());
  PassBackoff(absl::Milliseconds(800));
  // The streaming list at the last version is expired too: at once at "".
  std::shared_ptr<FakeWatch> second = lw_.WaitForWatch(1);
  EXPECT_EQ(second->options().resource_version, "5");
  second->Error(Expired());
  std::shared_ptr<FakeWatch> third = lw_.WaitForWatch(2);
  EXPECT_EQ(third->options().resource_version, "");
  third->Add(Obj("b", "9"));
  third->Bookmark("9", true);
  store_.WaitFor(2);
  EXPECT_THAT(store_.log(), ElementsAre("Replace a@5", "Replace b@9"));
}

TEST_F(ReflectorTest, ResyncsEveryPeriodWhenShouldResyncAgrees) {
  lw_.SetState({}, "10");
  ReflectorOptions options = Options();
  options.resync_period = absl::Seconds(30);
  bool allow = true;
  Mutex allow_mu;
  options.should_resync = [&] {
    MutexLock lock(&allow_mu);
    return allow;
  };
  Start(options);
  lw_.WaitForWatch(0);
  clock_.BlockUntilTimers(1);
  clock_.Advance(absl::Seconds(30));
  store_.WaitFor(2);
  EXPECT_EQ(store_.log()[1], "Resync");
  {
    MutexLock lock(&allow_mu);
    allow = false;
  }
  clock_.BlockUntilTimers(1);
  clock_.Advance(absl::Seconds(30));
  clock_.BlockUntilTimers(1);  // re-armed without resyncing
  EXPECT_EQ(store_.log().size(), 2u);
}

TEST_F(ReflectorTest, AFailedResyncEndsTheWatchAndRelists) {
  lw_.SetState({}, "10");
  store_.set_resync_error(absl::InternalError("full"));
  ReflectorOptions options = Options();
  options.resync_period = absl::Seconds(30);
  Start(options);
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  clock_.BlockUntilTimers(1);
  clock_.Advance(absl::Seconds(30));
  PassBackoff(absl::Milliseconds(800));
  lw_.WaitForListCalls(2);
  EXPECT_TRUE(watch->stopped());
}

TEST_F(ReflectorTest, DropsMalformedAndForeignObjectsAndCarriesOn) {
  lw_.SetState({}, "10");
  Start();
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  watch->Push(client::WatchEvent{api::EventType::kAdded, nullptr, {}});
  watch->Add(Obj("s", "11", "Secret"));
  watch->Add(Obj("", "12"));  // no name: the store refuses it
  watch->Add(Obj("a", "13"));
  watch->WaitUntilDrained();
  EXPECT_THAT(store_.log(), ElementsAre("Replace @10", "Add a@13"));
  EXPECT_EQ(Metric(FakeCacheMetrics::kDropped, kDropKindMismatch), 1);
  EXPECT_EQ(Metric(FakeCacheMetrics::kDropped, kDropNoKey), 2);
  EXPECT_EQ(reflector_->LastSyncResourceVersion(), "13");
  EXPECT_FALSE(watch->stopped());

  // An ERROR event without a status is an error too: backoff, relist.
  watch->Push(client::WatchEvent{api::EventType::kError, nullptr, {}});
  PassBackoff(absl::Milliseconds(800));
  lw_.WaitForListCalls(2);
}

TEST_F(ReflectorTest, CancellationEndsRunPromptlyWhereverItWaits) {
  lw_.SetState({}, "10");
  Start();
  std::shared_ptr<FakeWatch> watch = lw_.WaitForWatch(0);
  Stop();  // blocked in the watch
  EXPECT_TRUE(watch->stopped());

  lw_.PushListError(absl::UnavailableError("down"));
  Start();
  clock_.BlockUntilTimers(1);
  Stop();  // blocked in a backoff
  EXPECT_EQ(clock_.ArmedTimers(), 0);
}

TEST_F(ReflectorTest, RunRefusesToRunTwiceAtOnce) {
  lw_.SetState({}, "10");
  Start();
  lw_.WaitForWatch(0);
  EXPECT_EQ(reflector_->Run(Context::Background()).code(),
            absl::StatusCode::kFailedPrecondition);
}

// A ListerWatcher in front of another that runs `hook` once, right after
// the first list returns (what happens on the server between a list and
// its watch), and records the options of the watches it opened.
class Interposer final : public ListerWatcher {
 public:
  Interposer(ListerWatcher* inner, std::function<void()> hook)
      : inner_(inner), hook_(std::move(hook)) {}
  absl::StatusOr<client::ListMeta> List(const Context& ctx,
                                        const client::ListOptions& options,
                                        const ListItemFunc& on_item) override {
    absl::StatusOr<client::ListMeta> meta = inner_->List(ctx, options, on_item);
    if (hook_) std::exchange(hook_, nullptr)();
    return meta;
  }
  absl::StatusOr<std::unique_ptr<client::WatchStream>> Watch(
      const Context& ctx, const client::ListOptions& options) override {
    absl::StatusOr<std::unique_ptr<client::WatchStream>> w =
        inner_->Watch(ctx, options);
    MutexLock lock(&mu_);
    watches_.push_back(options);
    return w;
  }
  // Blocks until `n` watches were opened; returns the options of each.
  std::vector<client::ListOptions> WaitForWatches(size_t n) const {
    MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return watches_.size() >= n;
    };
    mu_.Await(absl::Condition(&enough));
    return watches_;
  }

 private:
  ListerWatcher* const inner_;
  // Used only by the reflector's thread.
  std::function<void()> hook_;
  mutable Mutex mu_;
  std::vector<client::ListOptions> watches_ ABSL_GUARDED_BY(mu_);
};

class ReflectorOverRegistryTest : public ::testing::Test {
 protected:
  ReflectorOverRegistryTest()
      : storage_(StorageOptions(&clock_)),
        registry_(&storage_, &resources_, RegistryOptions(&clock_)),
        cms_(resources_.Lookup("", "v1", "configmaps")) {}

  static apiserver::StorageOptions StorageOptions(const Clock* clock) {
    apiserver::StorageOptions options;
    options.clock = clock;
    return options;
  }
  static apiserver::RegistryOptions RegistryOptions(const Clock* clock) {
    apiserver::RegistryOptions options;
    options.clock = clock;
    return options;
  }

  void SetUp() override { ASSERT_TRUE(registry_.Bootstrap().ok()); }

  std::string Create(std::string_view name, std::string_view ns = "default") {
    absl::StatusOr<api::ObjectBuilder> b = api::ObjectBuilder::FromJson(
        std::string(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":)") +
        R"({"name":")" + std::string(name) + R"("}})");
    EXPECT_TRUE(b.ok()) << b.status();
    absl::StatusOr<apiserver::WriteResult> created =
        registry_.Create(*cms_, ns, *std::move(b));
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? std::string(created->object->resource_version()) : "";
  }

  testing::FakeClock clock_;
  apiserver::Storage storage_;
  apiserver::ResourceRegistry resources_;
  apiserver::Registry registry_;
  apiserver::ResourceInfoPtr cms_;
  RecordingStore store_;
};

TEST_F(ReflectorOverRegistryTest, CompactionBetweenListAndWatchRelists) {
  Create("a");
  const std::string listed_rv = Create("b");
  std::string compacted_rv;
  testing::RegistryListWatch registry_lw(
      &registry_, cms_,
      {"default", absl::Minutes(1), absl::Minutes(30), &clock_});
  Interposer lw(&registry_lw, [&] {
    // Written and compacted away before the watch from the list's version
    // starts: the watch gets 410, the list at that version too.
    compacted_rv = Create("c");
    storage_.Compact();
  });
  ReflectorOptions options;
  options.name = "cms";
  options.expected_api_version = "v1";
  options.expected_kind = "ConfigMap";
  options.clock = &clock_;
  options.random = Constant(0);
  Reflector reflector(&lw, &store_, options);
  auto [ctx, cancel] = WithCancel(Context::Background());
  std::thread run([&, ctx = ctx] { EXPECT_TRUE(reflector.Run(ctx).ok()); });

  store_.WaitFor(1);
  EXPECT_EQ(store_.log()[0], "Replace a,b@" + listed_rv);
  // The 410 ERROR event: a backoff, then a relist at the last version,
  // which is gone too, then at "".
  clock_.BlockUntilTimers(1);
  clock_.Advance(absl::Milliseconds(800));
  store_.WaitFor(2);
  EXPECT_EQ(store_.log()[1], "Replace a,b,c@" + compacted_rv);

  // And the watch from there works.
  const std::string d_rv = Create("d");
  store_.WaitFor(3);
  EXPECT_EQ(store_.log()[2], "Add d@" + d_rv);
  cancel();
  run.join();
}

TEST_F(ReflectorOverRegistryTest, WatchTimeoutBookmarkMovesTheVersionOn) {
  Create("a");
  testing::RegistryListWatch registry_lw(
      &registry_, cms_,
      {"default", absl::Minutes(1), absl::Minutes(30), &clock_});
  // A write the watch does not see (another namespace), made before it
  // starts: only a bookmark can tell the reflector the collection moved on.
  std::string other_rv;
  Interposer lw(&registry_lw, [&] { other_rv = Create("x", "kube-system"); });
  ReflectorOptions options;
  options.name = "cms";
  options.clock = &clock_;
  options.random = Constant(0);  // 5-minute watches
  Reflector reflector(&lw, &store_, options);
  auto [ctx, cancel] = WithCancel(Context::Background());
  std::thread run([&, ctx = ctx] { EXPECT_TRUE(reflector.Run(ctx).ok()); });
  const std::string listed_rv = lw.WaitForWatches(1)[0].resource_version;
  EXPECT_NE(listed_rv, other_rv);
  // Once the watch waits for events (the only waiter on the clock), its
  // timeout passes.
  clock_.BlockUntilWaiters(1);
  clock_.Advance(absl::Minutes(5));
  std::vector<client::ListOptions> watches = lw.WaitForWatches(2);
  EXPECT_EQ(watches[1].resource_version, other_rv);
  EXPECT_EQ(reflector.LastSyncResourceVersion(), other_rv);

  const std::string b_rv = Create("b");
  store_.WaitFor(2);
  EXPECT_EQ(store_.log()[1], "Add b@" + b_rv);
  cancel();
  run.join();
}

}  // namespace
}  // namespace kcr::cache
