#include "runtime/cache/shared_informer.h"

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_cache_metrics.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_list_watch.h"

namespace kcr::cache {
namespace {

using ::kcr::testing::FakeClock;
using ::kcr::testing::FakeListWatch;
using ::kcr::testing::FakeWatch;

api::ObjectPtr Cm(const std::string& ns, const std::string& name, int rv,
                  const std::string& uid = "", const std::string& app = "web") {
  auto cm = api::Object::Parse(absl::StrCat(
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")", name,
      R"(","namespace":")", ns, R"(","uid":")", uid.empty() ? name : uid,
      R"(","resourceVersion":")", rv, R"(","labels":{"app":")", app,
      R"("},"managedFields":[{"manager":"kubectl"}]}})"));
  EXPECT_TRUE(cm.ok()) << cm.status();
  return *cm;
}

// Records calls as "add ns/name rv [initial]", "update ns/name rv->rv",
// "delete ns/name rv [unknown]"; tests wait for a count.
class Recorder : public ResourceEventHandler {
 public:
  void OnAdd(const api::ObjectPtr& o, bool initial) override {
    Record(absl::StrCat("add ", o->Key(), " ",
                        std::string(o->resource_version()),
                        initial ? " initial" : ""));
  }
  void OnUpdate(const api::ObjectPtr& old_o,
                const api::ObjectPtr& new_o) override {
    Record(absl::StrCat("update ", new_o->Key(), " ",
                        std::string(old_o->resource_version()), "->",
                        std::string(new_o->resource_version())));
  }
  void OnDelete(const api::ObjectPtr& o, bool unknown) override {
    Record(absl::StrCat("delete ", o->Key(), " ",
                        std::string(o->resource_version()),
                        unknown ? " unknown" : ""));
  }

  // Waits for at least `n` calls (10 s at most) and returns them all.
  std::vector<std::string> WaitFor(size_t n) {
    MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return calls_.size() >= n;
    };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
    return calls_;
  }
  std::vector<std::string> calls() {
    MutexLock lock(&mu_);
    return calls_;
  }
  // While closed, the handler blocks in its call.
  void Close() {
    MutexLock lock(&mu_);
    closed_ = true;
  }
  void Open() {
    MutexLock lock(&mu_);
    closed_ = false;
  }

 private:
  void Record(std::string call) {
    MutexLock lock(&mu_);
    calls_.push_back(std::move(call));
    mu_.Await(absl::Condition(
        +[](bool* c) { return !*c; }, &closed_));
  }

  Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
};

class SharedInformerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto lw = std::make_unique<FakeListWatch>();
    lw_ = lw.get();
    SharedInformerOptions options;
    options.name = "configmaps";
    options.clock = &clock_;
    options.resync_period = resync_;
    options.metrics = &metrics_;
    informer_ = std::make_unique<SharedIndexInformer>(std::move(lw), options);
  }
  void TearDown() override { Stop(); }

  void Run() {
    auto [ctx, cancel] = WithCancel(Context::Background());
    cancel_ = cancel;
    thread_ = std::thread([this, ctx = ctx] { informer_->Run(ctx); });
  }
  void Stop() {
    if (cancel_) cancel_();
    if (thread_.joinable()) thread_.join();
  }
  void Sync() {
    auto [ctx, cancel] = WithTimeout(Context::Background(), absl::Seconds(10));
    ASSERT_TRUE(informer_->WaitForSync(ctx).ok());
    cancel();
  }

  // Moves fake time on by `step` until `done` (real waits of 5 ms between
  // steps let the informer's threads react); false if it never is.
  bool AdvanceUntil(const std::function<bool()>& done, absl::Duration step,
                    int max_steps) {
    for (int i = 0; i < max_steps && !done(); ++i) {
      clock_.Advance(step);
      absl::SleepFor(absl::Milliseconds(5));
    }
    return done();
  }

  absl::Duration resync_ = absl::ZeroDuration();
  FakeClock clock_;
  testing::FakeCacheMetrics metrics_;
  FakeListWatch* lw_ = nullptr;
  std::unique_ptr<SharedIndexInformer> informer_;
  CancelFunc cancel_;
  std::thread thread_;
};

TEST_F(SharedInformerTest, InitialListThenWatchEvents) {
  lw_->SetState({Cm("a", "x", 5), Cm("b", "y", 6)}, "10");
  auto recorder = std::make_shared<Recorder>();
  auto registration = informer_->AddEventHandler(recorder);
  ASSERT_TRUE(registration.ok());
  EXPECT_FALSE(informer_->HasSynced());
  Run();
  Sync();
  EXPECT_EQ(
      recorder->WaitFor(2),
      (std::vector<std::string>{"add a/x 5 initial", "add b/y 6 initial"}));
  std::shared_ptr<FakeWatch> watch = lw_->WaitForWatch(0);
  EXPECT_EQ(watch->options().resource_version, "10");
  watch->Modify(Cm("a", "x", 11));
  watch->Add(Cm("a", "z", 12));
  watch->Delete(Cm("b", "y", 13));
  EXPECT_EQ(recorder->WaitFor(5),
            (std::vector<std::string>{"add a/x 5 initial", "add b/y 6 initial",
                                      "update a/x 5->11", "add a/z 12",
                                      "delete b/y 13"}));
  EXPECT_TRUE((*registration)->HasSynced());
  // The cache: current objects, managedFields stripped, by namespace.
  const Indexer* cache = informer_->GetIndexer();
  ASSERT_NE(cache->GetByKey("a/x"), nullptr);
  EXPECT_EQ(cache->GetByKey("a/x")->resource_version(), "11");
  EXPECT_EQ(cache->GetByKey("a/x")->Find("/metadata/managedFields"), nullptr);
  EXPECT_EQ(cache->GetByKey("b/y"), nullptr);
  EXPECT_EQ(cache->ByIndex(kNamespaceIndex, "a")->size(), 2u);
}

TEST_F(SharedInformerTest, LateHandlerGetsTheContentsAsInitialAdds) {
  lw_->SetState({Cm("a", "x", 5)}, "10");
  Run();
  Sync();
  auto late = std::make_shared<Recorder>();
  late->Close();
  auto registration = informer_->AddEventHandler(late);
  ASSERT_TRUE(registration.ok());
  late->WaitFor(1);
  EXPECT_FALSE((*registration)->HasSynced());  // still in its handler
  late->Open();
  lw_->WaitForWatch(0)->Modify(Cm("a", "x", 11));
  EXPECT_EQ(late->WaitFor(2), (std::vector<std::string>{"add a/x 5 initial",
                                                        "update a/x 5->11"}));
  EXPECT_TRUE((*registration)->HasSynced());
}

TEST_F(SharedInformerTest, RelistTurnsVanishedObjectsIntoTombstones) {
  lw_->SetState({Cm("a", "x", 5), Cm("a", "y", 6)}, "10");
  auto recorder = std::make_shared<Recorder>();
  ASSERT_TRUE(informer_->AddEventHandler(recorder).ok());
  Run();
  Sync();
  recorder->WaitFor(2);
  // The watch expires; meanwhile y was deleted and x changed.
  lw_->SetState({Cm("a", "x", 20)}, "21");
  lw_->WaitForWatch(0)->Error(
      api::StatusError::Expired("too old resource version: 10 (15)")
          .ToStatus());
  // The reflector backs off before it lists again.
  ASSERT_TRUE(AdvanceUntil([&] { return recorder->calls().size() >= 4; },
                           absl::Seconds(1), 200));
  EXPECT_EQ(
      recorder->WaitFor(4),
      (std::vector<std::string>{"add a/x 5 initial", "add a/y 6 initial",
                                "update a/x 5->20", "delete a/y 6 unknown"}));
  EXPECT_EQ(informer_->GetStore()->ListKeys(),
            (std::vector<std::string>{"a/x"}));
}

// A shard change narrows or widens what is listed: the handlers hear of
// what entered (add), left (delete) or changed (update), not of the
// objects the new list has unchanged; changes close together cost one
// list.
TEST_F(SharedInformerTest, ShardSelectorChangeDeliversOnlyWhatMoved) {
  lw_->SetState({Cm("a", "x", 5), Cm("a", "y", 6), Cm("a", "z", 7)}, "10");
  auto recorder = std::make_shared<Recorder>();
  ASSERT_TRUE(informer_->AddEventHandler(recorder).ok());
  Run();
  Sync();
  recorder->WaitFor(3);
  lw_->WaitForWatch(0);
  lw_->SetState({Cm("a", "x", 20), Cm("a", "z", 7), Cm("a", "w", 30)}, "31");
  ASSERT_TRUE(informer_->SetShardSelector("first").ok());
  ASSERT_TRUE(informer_->SetShardSelector("second").ok());
  EXPECT_FALSE(informer_->ShardSelectorListed());
  ASSERT_TRUE(AdvanceUntil([&] { return recorder->calls().size() >= 6; },
                           absl::Milliseconds(20), 100));
  std::vector<std::string> calls = recorder->WaitFor(6);
  calls.erase(calls.begin(), calls.begin() + 3);
  EXPECT_EQ(calls, (std::vector<std::string>{"update a/x 5->20", "add a/w 30",
                                             "delete a/y 6 unknown"}));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(recorder->calls().size(), 6u);
  EXPECT_EQ(lw_->list_call_count(), 2u);
  EXPECT_TRUE(informer_->ShardSelectorListed());
}

TEST_F(SharedInformerTest, ASlowHandlerDelaysNoOneElse) {
  std::vector<api::ObjectPtr> objects;
  for (int i = 0; i < 100; ++i) {
    objects.push_back(Cm("a", absl::StrCat("o", i), i + 1));
  }
  lw_->SetState(objects, "200");
  auto slow = std::make_shared<Recorder>();
  slow->Close();
  auto fast = std::make_shared<Recorder>();
  auto slow_registration = informer_->AddEventHandler(slow);
  auto fast_registration = informer_->AddEventHandler(fast);
  Run();
  Sync();
  EXPECT_EQ(fast->WaitFor(100).size(), 100u);
  lw_->WaitForWatch(0)->Modify(Cm("a", "o1", 201));
  EXPECT_EQ(fast->WaitFor(101).back(), "update a/o1 2->201");
  EXPECT_EQ(informer_->GetStore()->GetByKey("a/o1")->resource_version(), "201");
  EXPECT_TRUE((*fast_registration)->HasSynced());
  EXPECT_FALSE((*slow_registration)->HasSynced());
  EXPECT_EQ(slow->WaitFor(1).size(), 1u);  // held in its first call
  // The stuck handler's backlog shows (reported in steps of 64).
  EXPECT_GE(metrics_.Value(testing::FakeCacheMetrics::kHandlerQueueDepth,
                           "configmaps", "configmaps/handler-1"),
            64);
  slow->Open();
  EXPECT_EQ(slow->WaitFor(101).size(), 101u);
}

TEST_F(SharedInformerTest, RemovedHandlerGetsNothingMore) {
  lw_->SetState({Cm("a", "x", 5)}, "10");
  auto kept = std::make_shared<Recorder>();
  auto removed = std::make_shared<Recorder>();
  ASSERT_TRUE(informer_->AddEventHandler(kept).ok());
  auto registration = informer_->AddEventHandler(removed);
  Run();
  Sync();
  removed->WaitFor(1);
  ASSERT_TRUE(informer_->RemoveEventHandler(*registration).ok());
  lw_->WaitForWatch(0)->Modify(Cm("a", "x", 11));
  kept->WaitFor(2);
  EXPECT_EQ(removed->calls().size(), 1u);
}

TEST_F(SharedInformerTest, WaitForResourceVersionSeesOwnWrites) {
  lw_->SetState({Cm("a", "x", 5)}, "10");
  Run();
  Sync();
  {
    auto [ctx, cancel] = WithTimeout(Context::Background(),
                                     absl::Milliseconds(50), Clock::Real());
    EXPECT_TRUE(absl::IsDeadlineExceeded(
        informer_->WaitForResourceVersion(ctx, "a/x", "11")));
    cancel();
  }
  std::thread writer([&] { lw_->WaitForWatch(0)->Modify(Cm("a", "x", 11)); });
  auto [ctx, cancel] =
      WithTimeout(Context::Background(), absl::Seconds(10), Clock::Real());
  EXPECT_TRUE(informer_->WaitForResourceVersion(ctx, "a/x", "11").ok());
  EXPECT_TRUE(informer_->WaitForResourceVersion(ctx, "a/x", "7").ok());
  // A deleted object: everything up to its version has been applied.
  lw_->WaitForWatch(0)->Delete(Cm("a", "x", 12));
  EXPECT_TRUE(informer_->WaitForResourceVersion(ctx, "a/x", "12").ok());
  EXPECT_EQ(informer_->GetStore()->GetByKey("a/x"), nullptr);
  cancel();
  writer.join();
}

TEST_F(SharedInformerTest, TransformBeforeRunOnly) {
  ASSERT_TRUE(informer_
                  ->SetTransform(
                      [](api::ObjectPtr o) -> absl::StatusOr<api::ObjectPtr> {
                        api::ObjectBuilder b = o->ToBuilder();
                        b.SetLabel("seen", "yes");
                        return b.Build();
                      })
                  .ok());
  lw_->SetState({Cm("a", "x", 5)}, "10");
  Run();
  Sync();
  EXPECT_EQ(informer_->GetStore()->GetByKey("a/x")->Label("seen"), "yes");
  EXPECT_TRUE(absl::IsFailedPrecondition(informer_->SetTransform(nullptr)));
}

TEST_F(SharedInformerTest, StoppedInformerRefusesHandlers) {
  Run();
  Sync();
  Stop();
  EXPECT_TRUE(informer_->IsStopped());
  EXPECT_TRUE(absl::IsFailedPrecondition(
      informer_->AddEventHandler(std::make_shared<Recorder>()).status()));
  // Run once only.
  informer_->Run(Context::Background());
}

TEST_F(SharedInformerTest, AddIndexersOnARunningInformer) {
  lw_->SetState({Cm("a", "x", 5, "", "web"), Cm("b", "y", 6, "", "db")}, "10");
  Run();
  Sync();
  ASSERT_TRUE(informer_->AddIndexers({{"app", LabelIndexFunc("app")}}).ok());
  auto web = informer_->GetIndexer()->ByIndex("app", "web");
  ASSERT_TRUE(web.ok());
  ASSERT_EQ(web->size(), 1u);
  EXPECT_EQ((*web)[0]->Key(), "a/x");
}

class ResyncTest : public SharedInformerTest {
 protected:
  ResyncTest() { resync_ = absl::Seconds(30); }
};

TEST_F(ResyncTest, HandlersDueForResyncGetTheCacheAgain) {
  lw_->SetState({Cm("a", "x", 5)}, "10");
  auto default_period = std::make_shared<Recorder>();
  auto long_period = std::make_shared<Recorder>();
  ASSERT_TRUE(informer_->AddEventHandler(default_period).ok());
  ASSERT_TRUE(informer_->AddEventHandler(long_period, absl::Minutes(10)).ok());
  Run();
  Sync();
  default_period->WaitFor(1);
  lw_->WaitForWatch(0);
  ASSERT_TRUE(AdvanceUntil([&] { return default_period->calls().size() >= 2; },
                           absl::Seconds(5), 20));
  EXPECT_EQ(default_period->WaitFor(2),
            (std::vector<std::string>{"add a/x 5 initial", "update a/x 5->5"}));
  EXPECT_EQ(long_period->calls(),
            (std::vector<std::string>{"add a/x 5 initial"}));
}

}  // namespace
}  // namespace kcr::cache
