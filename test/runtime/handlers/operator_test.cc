// The handlers on a controller::Manager against the in-process local API
// server, end to end, on the real clock (short delays; the waits for a
// resource not served yet on a fake clock).
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "base/context.h"
#include "base/mutex.h"
#include "base/str_cat.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "runtime/controller/manager.h"
#include "runtime/handlers/registry.h"
#include "runtime/metrics/http_endpoint.h"
#include "test/controllers/manager_test_fixture.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/handlers/handlers_test_util.h"

namespace kcr::handlers {
namespace {

const api::GroupVersionResource kGvr = testing::kKopfExampleGvr;

// Polls `pred` until it holds or 20 s pass.
bool Eventually(const std::function<bool()>& pred) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    if (pred()) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return pred();
}

// Ids of the handlers that ran, in order.
class Runs {
 public:
  void Add(std::string id) {
    MutexLock lock(&mu_);
    ids_.push_back(std::move(id));
  }
  int Count(const std::string& id) const {
    MutexLock lock(&mu_);
    int n = 0;
    for (const auto& i : ids_) n += i == id;
    return n;
  }
  std::vector<std::string> ids() const {
    MutexLock lock(&mu_);
    return ids_;
  }

 private:
  mutable Mutex mu_;
  std::vector<std::string> ids_ ABSL_GUARDED_BY(mu_);
};

class OperatorTest : public testing::ManagerTestFixture {
 protected:
  void SetUp() override {
    StartServer();
    ASSERT_FALSE(HasFatalFailure());
    ASSERT_NO_FATAL_FAILURE(InstallCrd(testing::kKopfExampleCrdYaml));
  }

  void Start(const Registry& registry) {
    ASSERT_NO_FATAL_FAILURE(StartManager([&registry](controller::Manager& m) {
      return AddToManager(registry, m);
    }));
  }

  // As Start, with the Manager (and so the handlers) on `clock`.
  void StartManagerOn(const Clock* clock, const Registry& registry) {
    controller::ManagerOptions options;
    options.clock = clock;
    auto mgr = controller::Manager::New(config_, options);
    ASSERT_TRUE(mgr.ok()) << mgr.status();
    mgr_ = *std::move(mgr);
    absl::Status added = AddToManager(registry, *mgr_);
    ASSERT_TRUE(added.ok()) << added;
    auto [ctx, cancel] = WithCancel(Context::Background());
    cancel_ = cancel;
    run_ = std::thread([this, ctx = ctx] { run_status_ = mgr_->Start(ctx); });
  }

  client::Resource Res() const {
    return client::Resource::Namespaced(kGvr, "default");
  }

  void Create(const std::string& name, std::string_view spec = R"({"x":1})",
              std::string_view metadata_extra = "") {
    auto obj = testing::KopfExample(name, spec, metadata_extra);
    ASSERT_TRUE(obj.ok()) << obj.status();
    auto created = client_->Create(Context::Background(), Res(), **obj);
    ASSERT_TRUE(created.ok()) << created.status();
  }

  api::ObjectPtr Get(const std::string& name) {
    auto obj = client_->Get(Context::Background(), Res(), name);
    return obj.ok() ? *obj : nullptr;
  }

  bool Handled(const std::string& name) {
    api::ObjectPtr o = Get(name);
    return o != nullptr &&
           o->Annotation("kcr.dev/last-handled-configuration").has_value();
  }

  // Whether an Event on `name` says `text`.
  bool HasEvent(const std::string& name, std::string_view text) {
    auto list = client_->List(
        Context::Background(),
        client::Resource::Namespaced({"", "v1", "events"}, "default"));
    if (!list.ok()) return false;
    for (const api::ObjectPtr& e : list->items) {
      const rapidjson::Value* involved = e->Find("/involvedObject/name");
      const rapidjson::Value* message = e->Find("/message");
      if (involved != nullptr && involved->IsString() &&
          involved->GetString() == name && message != nullptr &&
          message->IsString() &&
          std::string_view(message->GetString()).find(text) !=
              std::string_view::npos) {
        return true;
      }
    }
    return false;
  }

  Runs runs_;
};

TEST_F(OperatorTest, CreateUpdateFieldAndDeleteEndToEnd) {
  Registry registry;
  auto& r = registry.For(kGvr);
  r.OnCreate("create", [this](HandlerContext& ctx) {
    runs_.Add("create");
    return Outcome::Value(R"({"message":"hello"})");
  });
  r.OnUpdate("update", [this](HandlerContext&) {
    runs_.Add("update");
    return Outcome::Success();
  });
  r.OnField("size", "spec.size", [this](HandlerContext& ctx) {
    runs_.Add(Cat("size:", ctx.new_value() ? ctx.new_value()->GetInt() : -1));
    return Outcome::Success();
  });
  r.OnDelete("delete", [this](HandlerContext&) {
    runs_.Add("delete");
    return runs_.Count("delete") < 2
               ? Outcome::Temporary("not yet", absl::Milliseconds(200))
               : Outcome::Success();
  });
  Start(registry);
  Create("a", R"({"size":1})");
  ASSERT_TRUE(Eventually([&] { return Handled("a"); }));
  EXPECT_EQ(runs_.ids(), (std::vector<std::string>{"create", "size:1"}));
  api::ObjectPtr a = Get("a");
  EXPECT_TRUE(a->HasFinalizer("kcr.dev/handlers"));
  ASSERT_NE(a->Find("/status/create/message"), nullptr);
  EXPECT_TRUE(
      Eventually([&] { return HasEvent("a", "Handler 'create' succeeded."); }));

  ASSERT_TRUE(client_
                  ->Patch(Context::Background(), Res(), "a",
                          api::PatchType::kMerge, R"({"spec":{"size":2}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] { return runs_.Count("size:2") == 1; }));
  ASSERT_TRUE(Eventually([&] {
    api::ObjectPtr o = Get("a");
    auto last = o->Annotation("kcr.dev/last-handled-configuration");
    return last && last->find(R"("size":2)") != std::string_view::npos;
  }));
  EXPECT_EQ(runs_.Count("update"), 1);

  ASSERT_TRUE(client_->Delete(Context::Background(), Res(), "a").ok());
  ASSERT_TRUE(Eventually([&] { return Get("a") == nullptr; }));
  EXPECT_EQ(runs_.Count("delete"), 2);  // held by the finalizer until then
  // Every handler ran as often as it should have, no more.
  EXPECT_EQ(runs_.Count("create"), 1);
  EXPECT_EQ(runs_.Count("size:1"), 1);
  EXPECT_EQ(runs_.Count("update"), 1);
  // The registry (a local) must outlive the Manager.
  StopManager();
}

TEST_F(OperatorTest, AThrowingHandlerDoesNotStopTheOperator) {
  Registry registry;
  HandlerOptions options;
  options.backoff = absl::Milliseconds(100);
  registry.For(kGvr).OnCreate(
      "create",
      [this](HandlerContext& ctx) -> Outcome {
        runs_.Add(std::string(ctx.name()));
        if (ctx.retry() == 0) throw std::runtime_error("kaboom");
        return Outcome::Success();
      },
      options);
  Start(registry);
  Create("a");
  Create("b");
  ASSERT_TRUE(Eventually([&] { return Handled("a") && Handled("b"); }));
  EXPECT_EQ(runs_.Count("a"), 2);
  EXPECT_EQ(runs_.Count("b"), 2);
  EXPECT_TRUE(Eventually([&] { return HasEvent("a", "kaboom"); }));
  // Counted in the Manager's registry.
  double errors = 0, successes = 0;
  for (const auto& family : mgr_->GetMetricsRegistry().Collect()) {
    if (family.name != "kcr_handler_runs_total") continue;
    for (const auto& m : family.metric) {
      for (const auto& l : m.label) {
        if (l.name != "outcome") continue;
        if (l.value == "error") errors += m.counter.value;
        if (l.value == "success") successes += m.counter.value;
      }
    }
  }
  EXPECT_EQ(errors, 2);
  EXPECT_EQ(successes, 2);
  // The registry (a local) must outlive the Manager.
  StopManager();
}

TEST_F(OperatorTest, ProgressSurvivesARestartOfTheOperator) {
  auto make = [this](absl::Duration delay) {
    auto registry = std::make_unique<Registry>();
    auto& r = registry->For(kGvr);
    r.OnCreate("first", [this](HandlerContext&) {
      runs_.Add("first");
      return Outcome::Success();
    });
    r.OnCreate("second", [this, delay](HandlerContext& ctx) {
      runs_.Add(Cat("second:", ctx.retry()));
      return ctx.retry() == 0 ? Outcome::Temporary("later", delay)
                              : Outcome::Success();
    });
    return registry;
  };
  auto first = make(absl::Seconds(2));
  Start(*first);
  Create("a");
  ASSERT_TRUE(Eventually([&] { return runs_.Count("second:0") == 1; }));
  const absl::Time failed_at = absl::Now();
  StopManager();

  auto second = make(absl::Seconds(2));
  Start(*second);
  ASSERT_TRUE(Eventually([&] { return Handled("a"); }));
  // The pending one ran at its time, the one that succeeded not again.
  EXPECT_GE(absl::Now() - failed_at, absl::Milliseconds(1900));
  EXPECT_EQ(runs_.ids(),
            (std::vector<std::string>{"first", "second:0", "second:1"}));
  // The registry (a local) must outlive the Manager.
  StopManager();
}

TEST_F(OperatorTest, HostileAnnotationsAreResetAndReported) {
  Registry registry;
  registry.For(kGvr).OnCreate("create", [this](HandlerContext& ctx) {
    runs_.Add(std::string(ctx.name()));
    return Outcome::Success();
  });
  Start(registry);
  Create("a", R"({"x":1})",
         R"(,"annotations":{"kcr.dev/last-handled-configuration":"[1,2",)"
         R"("kcr.dev/create":"{\"success\":\"maybe\"}"})");
  ASSERT_TRUE(Eventually([&] {
    api::ObjectPtr o = Get("a");
    auto last = o->Annotation("kcr.dev/last-handled-configuration");
    return last && *last == R"({"spec":{"x":1}})";
  }));
  EXPECT_EQ(runs_.Count("a"), 1);
  EXPECT_TRUE(Eventually([&] {
    return HasEvent("a", "The last handled state is malformed") &&
           HasEvent("a", "The progress of handler 'create' is malformed");
  }));
  // The registry (a local) must outlive the Manager.
  StopManager();
}

TEST_F(OperatorTest, StartupHandlersRunFirstAndCanStopTheStart) {
  std::atomic<int> tries{0};
  Registry ok;
  ActivityOptions quick;
  quick.backoff = absl::Milliseconds(10);
  ok.OnStartup(
      "configure",
      [&](ActivityContext& ctx) -> Outcome {
        EXPECT_NE(ctx.client(), nullptr);
        return ++tries < 3 ? Outcome(absl::UnavailableError("not yet"))
                           : Outcome::Success();
      },
      quick);
  ok.For(kGvr).OnCreate("create", [this](HandlerContext&) {
    runs_.Add("create");
    return Outcome::Success();
  });
  Start(ok);
  EXPECT_EQ(tries.load(), 3);
  Create("a");
  ASSERT_TRUE(Eventually([&] { return Handled("a"); }));
  StopManager();

  Registry bad;
  bad.OnStartup("configure", [](ActivityContext&) {
    return Outcome::Permanent("no license");
  });
  bad.For(kGvr).OnCreate("create", [](HandlerContext&) { return Outcome(); });
  auto mgr = controller::Manager::New(config_);
  ASSERT_TRUE(mgr.ok());
  absl::Status s = AddToManager(bad, **mgr);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("no license"), absl::string_view::npos);
  EXPECT_FALSE((*mgr)->HasController("kcr-handlers-kopfexamples.kopf.dev"));
  // The registry (a local) must outlive the Manager.
  StopManager();
}

TEST_F(OperatorTest, AStartupHandlerThatNeverSucceedsStopsWithTheContext) {
  std::atomic<int> tries{0};
  Registry registry;
  registry.OnStartup("forever", [&](ActivityContext&) {
    ++tries;
    return Outcome::Temporary("never", absl::Hours(1));
  });
  registry.For(kGvr).OnCreate("create",
                              [](HandlerContext&) { return Outcome(); });
  auto mgr = controller::Manager::New(config_);
  ASSERT_TRUE(mgr.ok());
  auto [ctx, cancel] = WithCancel(Context::Background());
  absl::Status status;
  std::thread add(
      [&, ctx = ctx] { status = AddToManager(registry, **mgr, ctx); });
  EXPECT_TRUE(Eventually([&] { return tries.load() == 1; }));
  const absl::Time cancelled = absl::Now();
  cancel();
  add.join();
  EXPECT_LT(absl::Now() - cancelled, absl::Seconds(5));  // not the hour
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_NE(status.message().find("forever"), absl::string_view::npos);
  EXPECT_EQ(tries.load(), 1);
  EXPECT_FALSE((*mgr)->HasController("kcr-handlers-kopfexamples.kopf.dev"));
}

TEST_F(OperatorTest, StartupHandlersGetTheContext) {
  std::atomic<bool> entered{false}, saw_cancel{false};
  Registry registry;
  registry.OnStartup("wait", [&](ActivityContext& actx) -> Outcome {
    entered = true;
    // Up to 20 s for the cancellation, which the test sends at once.
    for (int i = 0; i < 2000 && !actx.ctx().done(); ++i) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    saw_cancel = actx.ctx().done();
    return actx.ctx().Err();
  });
  auto mgr = controller::Manager::New(config_);
  ASSERT_TRUE(mgr.ok());
  auto [ctx, cancel] = WithCancel(Context::Background());
  absl::Status status;
  std::thread add(
      [&, ctx = ctx] { status = AddToManager(registry, **mgr, ctx); });
  EXPECT_TRUE(Eventually([&] { return entered.load(); }));
  cancel();
  add.join();
  EXPECT_TRUE(saw_cancel.load());
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
}

// A resource the server does not serve yet (its CRD not installed) is
// waited for, as the reconcilers wait: AddToManager succeeds, and the
// controller starts once discovery finds the resource.
TEST_F(OperatorTest, AResourceServedOnlyLaterIsWaitedFor) {
  const api::GroupVersionResource later{"kopf.dev", "v1", "laterexamples"};
  Registry registry;
  registry.For(later).OnCreate("create", [this](HandlerContext&) {
    runs_.Add("create");
    return Outcome::Success();
  });
  testing::FakeClock clock;
  StartManagerOn(&clock, registry);
  ASSERT_TRUE(Eventually([&] { return mgr_->IsLeader(); }));
  EXPECT_FALSE(mgr_->HasController("kcr-handlers-laterexamples.kopf.dev"));
  // The Manager runs (and stays ready) without it.
  clock.Advance(absl::Seconds(5));
  ASSERT_NO_FATAL_FAILURE(InstallCrd(absl::StrReplaceAll(
      testing::kKopfExampleCrdYaml,
      {{"kopfexample", "laterexample"}, {"KopfExample", "LaterExample"}})));
  auto obj = api::Object::Parse(
      R"({"apiVersion":"kopf.dev/v1","kind":"LaterExample",)"
      R"("metadata":{"name":"a","namespace":"default"},"spec":{}})");
  ASSERT_TRUE(obj.ok()) << obj.status();
  const client::Resource res = client::Resource::Namespaced(later, "default");
  ASSERT_TRUE(client_->Create(Context::Background(), res, **obj).ok());
  // The backoff (at most 30 s) passes on the fake clock.
  ASSERT_TRUE(Eventually([&] {
    clock.Advance(absl::Seconds(1));
    return runs_.Count("create") == 1;
  }));
  EXPECT_TRUE(mgr_->HasController("kcr-handlers-laterexamples.kopf.dev"));
  ASSERT_TRUE(Eventually([&] {
    auto o = client_->Get(Context::Background(), res, "a");
    return o.ok() &&
           (*o)->Annotation("kcr.dev/last-handled-configuration").has_value();
  }));
  EXPECT_EQ(runs_.Count("create"), 1);
  StopManager();
}

TEST_F(OperatorTest, AManagerStoppedWhileWaitingForAResourceStopsPromptly) {
  Registry registry;
  registry.For({"kopf.dev", "v1", "nothings"})
      .OnCreate("create", [](HandlerContext&) { return Outcome(); });
  testing::FakeClock clock;
  StartManagerOn(&clock, registry);
  ASSERT_TRUE(Eventually([&] { return mgr_->IsLeader(); }));
  clock.Advance(absl::Seconds(3));  // a retry or two, then a longer sleep
  const absl::Time start = absl::Now();
  StopManager();  // expects OK from Start
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(OperatorTest, ADuplicateHandlerIdFailsAtOnceEvenForAMissingResource) {
  Registry registry;
  registry.For({"kopf.dev", "v1", "nothings"})
      .OnCreate("same", [](HandlerContext&) { return Outcome(); })
      .OnUpdate("same", [](HandlerContext&) { return Outcome(); });
  auto mgr = controller::Manager::New(config_);
  ASSERT_TRUE(mgr.ok());
  EXPECT_EQ(AddToManager(registry, **mgr).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(OperatorTest, ProbesAreHealthChecksAndCleanupRunsAtStop) {
  std::atomic<bool> healthy{true};
  std::atomic<int> cleanups{0};
  Registry registry;
  registry.OnProbe("db", [&](ActivityContext&) -> absl::StatusOr<std::string> {
    if (!healthy) return absl::UnavailableError("db down");
    return std::string("{\"rows\": 42}\n");
  });
  registry.OnCleanup("bye", [&](ActivityContext&) {
    ++cleanups;
    return Outcome::Success();
  });
  registry.For(kGvr).OnCreate("create",
                              [](HandlerContext&) { return Outcome(); });
  Start(registry);
  metrics::HttpGet get;
  get.path = "/healthz/db";
  EXPECT_EQ(mgr_->healthz_checks().Answer(get, "db").status, 200);
  // The probe's value is shown, as kopf's liveness endpoint shows it.
  EXPECT_EQ(mgr_->healthz_checks().Answer(get, "db").body, R"({"rows":42})");
  metrics::HttpGet verbose;
  verbose.path = "/healthz";
  verbose.query = "verbose";
  EXPECT_NE(mgr_->healthz_checks()
                .Answer(verbose, "")
                .body.find("[+]db ok: {\"rows\":42}\n"),
            std::string::npos);
  healthy = false;
  EXPECT_EQ(mgr_->healthz_checks().Answer(get, "db").status, 500);
  EXPECT_EQ(cleanups.load(), 0);
  // Once an object was handled, every Runnable has started.
  Create("a");
  ASSERT_TRUE(Eventually([&] { return Handled("a"); }));
  StopManager();
  EXPECT_EQ(cleanups.load(), 1);
  // The registry (a local) must outlive the Manager.
  StopManager();
}

TEST_F(OperatorTest, DaemonsStopOnDeletionAndWithTheOperator) {
  std::atomic<int> running{0};
  Registry registry;
  registry.For(kGvr).OnDaemon("worker", [&](DaemonContext& ctx) {
    ++running;
    while (!ctx.WaitForStop(absl::Seconds(10))) {
    }
    --running;
    return Outcome::Success();
  });
  Start(registry);
  Create("a");
  Create("b");
  ASSERT_TRUE(Eventually([&] { return running.load() == 2; }));
  ASSERT_TRUE(client_->Delete(Context::Background(), Res(), "a").ok());
  // Released as soon as its daemon returned (woken by it, not a poll).
  ASSERT_TRUE(Eventually([&] { return Get("a") == nullptr; }));
  EXPECT_EQ(running.load(), 1);
  StopManager();
  EXPECT_EQ(running.load(), 0);
  EXPECT_NE(Get("b"), nullptr);
}

TEST_F(OperatorTest, RunOperatorLogsInAndRunsUntilTheContextEnds) {
  Registry registry;
  std::atomic<int> logins{0};
  registry.OnLogin("local",
                   [&](ActivityContext& ctx) -> absl::StatusOr<client::Config> {
                     EXPECT_EQ(ctx.client(), nullptr);
                     ++logins;
                     return config_;
                   });
  registry.For(kGvr).OnCreate("create", [this](HandlerContext&) {
    runs_.Add("create");
    return Outcome::Success();
  });
  auto [ctx, cancel] = WithCancel(Context::Background());
  absl::Status status;
  std::thread run(
      [&, ctx = ctx] { status = RunOperator(registry, RunOptions{}, ctx); });
  Create("a");
  EXPECT_TRUE(Eventually([&] { return Handled("a"); }));
  cancel();
  run.join();
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(logins.load(), 1);
  EXPECT_EQ(runs_.Count("create"), 1);
}

TEST_F(OperatorTest, RunOperatorRunsTheCleanupOnceHoweverItStops) {
  std::atomic<int> cleanups{0};
  auto bye = [&](ActivityContext&) {
    ++cleanups;
    return Outcome::Success();
  };
  RunOptions options;
  options.config = config_;

  // A run that stops as usual: the cleanup Runnable runs them, once.
  Registry registry;
  registry.OnCleanup("bye", bye);
  registry.For(kGvr).OnCreate("create", [this](HandlerContext&) {
    runs_.Add("create");
    return Outcome::Success();
  });
  {
    auto [ctx, cancel] = WithCancel(Context::Background());
    absl::Status status;
    std::thread run(
        [&, ctx = ctx] { status = RunOperator(registry, options, ctx); });
    Create("a");
    EXPECT_TRUE(Eventually([&] { return Handled("a"); }));
    cancel();
    run.join();
    EXPECT_TRUE(status.ok()) << status;
    EXPECT_EQ(cleanups.load(), 1);
  }

  // A stop before the caches synced (the server fails every request from
  // the end of the startup on): no Runnable starts, the cleanup runs still.
  auto [ctx, cancel] = WithCancel(Context::Background());
  Registry early;
  early.OnStartup("break", [this, stop = cancel](ActivityContext&) {
    apiserver::FaultOptions faults;
    faults.error_fraction = 1;
    server_->faults()->set_options(faults);
    stop();
    return Outcome::Success();
  });
  early.OnCleanup("bye", bye);
  early.For(kGvr).OnCreate("create", [](HandlerContext&) { return Outcome(); });
  absl::Status status = RunOperator(early, options, ctx);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(cleanups.load(), 2);
}

TEST_F(OperatorTest, EventHandlersSeeEveryWatchEvent) {
  Create("before");
  Registry registry;
  Mutex mu;
  std::vector<std::string> seen;
  registry.For(kGvr).OnEvent("spy", [&](EventContext& ctx) {
    MutexLock lock(&mu);
    seen.push_back(Cat(ctx.type(), ":", ctx.name()));
  });
  Start(registry);
  auto has = [&](const std::string& s) {
    MutexLock lock(&mu);
    return std::find(seen.begin(), seen.end(), s) != seen.end();
  };
  ASSERT_TRUE(Eventually([&] { return has(":before"); }));  // initial list
  Create("after");
  ASSERT_TRUE(Eventually([&] { return has("ADDED:after"); }));
  ASSERT_TRUE(client_
                  ->Patch(Context::Background(), Res(), "after",
                          api::PatchType::kMerge, R"({"spec":{"x":2}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] { return has("MODIFIED:after"); }));
  ASSERT_TRUE(client_->Delete(Context::Background(), Res(), "after").ok());
  ASSERT_TRUE(Eventually([&] { return has("DELETED:after"); }));
  // The registry (a local) must outlive the Manager.
  StopManager();
}

}  // namespace
}  // namespace kcr::handlers
