#include "runtime/controller/controller.h"

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/object.h"
#include "base/context.h"
#include "base/mutex.h"
#include "gtest/gtest.h"
#include "runtime/cache/shared_informer.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_list_watch.h"
#include "test/runtime/controller/fake_controller_metrics.h"

namespace kcr::controller {
namespace {

using testing::FakeControllerMetrics;

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

// Records when (on the fake clock) each reconcile ran, and answers with
// `answer(call number)`.
class RecordingReconciler final : public Reconciler {
 public:
  using Answer = std::function<absl::StatusOr<Result>(int call)>;
  RecordingReconciler(const Clock* clock, Answer answer)
      : clock_(clock), answer_(std::move(answer)) {}

  absl::StatusOr<Result> Reconcile(const Request& request,
                                   ReconcileContext& ctx) override {
    int call;
    {
      MutexLock lock(&mu_);
      times_.push_back(clock_->Now());
      requests_.push_back(request);
      prefixes_.push_back(ctx.log_prefix());
      call = static_cast<int>(times_.size());
    }
    return answer_(call);
  }

  int calls() {
    MutexLock lock(&mu_);
    return static_cast<int>(times_.size());
  }
  std::vector<absl::Time> times() {
    MutexLock lock(&mu_);
    return times_;
  }
  std::vector<Request> requests() {
    MutexLock lock(&mu_);
    return requests_;
  }
  std::vector<std::string> prefixes() {
    MutexLock lock(&mu_);
    return prefixes_;
  }

 private:
  const Clock* const clock_;
  const Answer answer_;
  Mutex mu_;
  std::vector<absl::Time> times_ ABSL_GUARDED_BY(mu_);
  std::vector<Request> requests_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> prefixes_ ABSL_GUARDED_BY(mu_);
};

// Runs a controller's Start on a thread until Stop.
class Running {
 public:
  explicit Running(Controller* c) {
    auto [ctx, cancel] = WithCancel(Context::Background());
    cancel_ = cancel;
    thread_ = std::thread([this, c, ctx = ctx] {
      absl::Status s = c->Start(ctx);
      MutexLock lock(&mu_);
      status_ = s;
      returned_ = true;
    });
  }
  ~Running() { Stop().IgnoreError(); }

  void Cancel() { cancel_(); }
  bool returned() {
    MutexLock lock(&mu_);
    return returned_;
  }
  absl::Status Stop() {
    cancel_();
    if (thread_.joinable()) thread_.join();
    MutexLock lock(&mu_);
    return status_;
  }

 private:
  CancelFunc cancel_;
  std::thread thread_;
  Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  bool returned_ ABSL_GUARDED_BY(mu_) = false;
};

class ControllerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Controller> Make(std::shared_ptr<Reconciler> reconciler,
                                   int workers = 1) {
    ControllerOptions options;
    options.name = "test";
    options.max_concurrent_reconciles = workers;
    options.clock = &clock_;
    options.metrics = &metrics_;
    auto c = Controller::New(std::move(options), std::move(reconciler));
    EXPECT_TRUE(c.ok()) << c.status();
    return *std::move(c);
  }

  // Waits until `n` requests wait for their delay in `c`'s queue.
  static void AwaitWaiting(Controller& c, size_t n) {
    ASSERT_TRUE(Eventually([&] { return c.WaitingLen() == n; }));
  }

  kcr::testing::FakeClock clock_;
  FakeControllerMetrics metrics_;
  const Request req_{"default", "a"};
};

TEST(ControllerOptionsTest, RejectsBadOptions) {
  auto r = std::make_shared<ReconcilerFunc>(
      [](const Request&, ReconcileContext&) { return Result::Done(); });
  EXPECT_EQ(Controller::New({}, r).status().code(),
            absl::StatusCode::kInvalidArgument);
  for (const char* bad : {"Upper", "-lead", "trail-", "sp ace", "a/b"}) {
    ControllerOptions o;
    o.name = bad;
    auto c = Controller::New(std::move(o), r);
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  ControllerOptions zero;
  zero.name = "ok";
  zero.max_concurrent_reconciles = 0;
  EXPECT_EQ(Controller::New(std::move(zero), r).status().code(),
            absl::StatusCode::kInvalidArgument);
  ControllerOptions no_reconciler;
  no_reconciler.name = "ok";
  EXPECT_EQ(Controller::New(std::move(no_reconciler), nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  ControllerOptions good;
  good.name = "config-maps.v1_x";
  EXPECT_TRUE(Controller::New(std::move(good), r).ok());
}

TEST_F(ControllerTest, FailingReconcileBacksOffExponentially) {
  auto r = std::make_shared<RecordingReconciler>(&clock_, [](int) {
    return absl::StatusOr<Result>(absl::UnavailableError("boom"));
  });
  auto c = Make(r);
  Running run(c.get());
  const absl::Time t0 = clock_.Now();
  c->queue().Add(req_);
  ASSERT_TRUE(Eventually([&] { return r->calls() == 1; }));
  // Each retry waits twice as long as the one before: 5, 10, 20, 40 ms.
  absl::Duration expected = absl::ZeroDuration();
  absl::Duration delay = absl::Milliseconds(5);
  for (int call = 2; call <= 5; ++call) {
    AwaitWaiting(*c, 1);
    EXPECT_EQ(c->queue().NumRequeues(req_), call - 1);
    clock_.Advance(delay - absl::Milliseconds(1));
    clock_.Advance(absl::Milliseconds(1));
    expected += delay;
    ASSERT_TRUE(Eventually([&] { return r->calls() == call; }));
    EXPECT_EQ(r->times().back() - t0, expected) << "call " << call;
    delay *= 2;
  }
  EXPECT_TRUE(run.Stop().ok());
  const auto counts = metrics_.Get("test");
  EXPECT_EQ(counts.reconciles.at(ReconcileOutcome::kError), 5);
  EXPECT_EQ(counts.errors, 5);
  EXPECT_EQ(counts.panics, 0);
  EXPECT_EQ(counts.observations, 5);
  EXPECT_EQ(counts.max_concurrent, 1);
  EXPECT_EQ(counts.active, 0);
}

TEST_F(ControllerTest, RequeueAfterFiresAfterTheDurationAndForgets) {
  auto r = std::make_shared<RecordingReconciler>(
      &clock_, [](int call) -> absl::StatusOr<Result> {
        if (call == 1) return absl::InternalError("first fails");
        if (call == 2) return Result::RequeueAfter(absl::Seconds(30));
        return Result::Done();
      });
  auto c = Make(r);
  Running run(c.get());
  const absl::Time t0 = clock_.Now();
  c->queue().Add(req_);
  ASSERT_TRUE(Eventually([&] { return r->calls() == 1; }));
  AwaitWaiting(*c, 1);
  clock_.Advance(absl::Milliseconds(5));
  ASSERT_TRUE(Eventually([&] { return r->calls() == 2; }));
  AwaitWaiting(*c, 1);
  // RequeueAfter resets the backoff.
  EXPECT_EQ(c->queue().NumRequeues(req_), 0);
  clock_.Advance(absl::Seconds(29));
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return r->calls() == 3; }));
  EXPECT_EQ(r->times()[2] - t0, absl::Milliseconds(5) + absl::Seconds(30));
  EXPECT_TRUE(run.Stop().ok());
  const auto counts = metrics_.Get("test");
  EXPECT_EQ(counts.reconciles.at(ReconcileOutcome::kError), 1);
  EXPECT_EQ(counts.reconciles.at(ReconcileOutcome::kRequeueAfter), 1);
  EXPECT_EQ(counts.reconciles.at(ReconcileOutcome::kSuccess), 1);
}

TEST_F(ControllerTest, SuccessForgetsTheBackoff) {
  auto r = std::make_shared<RecordingReconciler>(
      &clock_, [](int call) -> absl::StatusOr<Result> {
        if (call <= 2 || call == 4) return absl::InternalError("fails");
        return Result::Done();
      });
  auto c = Make(r);
  Running run(c.get());
  c->queue().Add(req_);
  ASSERT_TRUE(Eventually([&] { return r->calls() == 1; }));
  AwaitWaiting(*c, 1);
  clock_.Advance(absl::Milliseconds(5));
  ASSERT_TRUE(Eventually([&] { return r->calls() == 2; }));
  AwaitWaiting(*c, 1);
  EXPECT_EQ(c->queue().NumRequeues(req_), 2);
  clock_.Advance(absl::Milliseconds(10));
  ASSERT_TRUE(Eventually([&] { return r->calls() == 3; }));
  ASSERT_TRUE(Eventually([&] { return c->queue().NumRequeues(req_) == 0; }));
  // A new failure starts again at the base delay.
  const absl::Time t3 = clock_.Now();
  c->queue().Add(req_);
  ASSERT_TRUE(Eventually([&] { return r->calls() == 4; }));
  AwaitWaiting(*c, 1);
  clock_.Advance(absl::Milliseconds(5));
  ASSERT_TRUE(Eventually([&] { return r->calls() == 5; }));
  EXPECT_EQ(r->times()[4] - t3, absl::Milliseconds(5));
  EXPECT_TRUE(run.Stop().ok());
}

TEST_F(ControllerTest, RequeueIsRateLimited) {
  auto r = std::make_shared<RecordingReconciler>(
      &clock_, [](int call) -> absl::StatusOr<Result> {
        if (call == 1) return Result::Requeue();
        return Result::Done();
      });
  auto c = Make(r);
  Running run(c.get());
  c->queue().Add(req_);
  ASSERT_TRUE(Eventually([&] { return r->calls() == 1; }));
  AwaitWaiting(*c, 1);
  EXPECT_EQ(c->queue().NumRequeues(req_), 1);
  clock_.Advance(absl::Milliseconds(5));
  ASSERT_TRUE(Eventually([&] { return r->calls() == 2; }));
  EXPECT_TRUE(run.Stop().ok());
  const auto counts = metrics_.Get("test");
  EXPECT_EQ(counts.reconciles.at(ReconcileOutcome::kRequeue), 1);
  EXPECT_EQ(counts.reconciles.at(ReconcileOutcome::kSuccess), 1);
}

TEST_F(ControllerTest, ThrowingReconcileIsRecoveredCountedAndRequeued) {
  auto r = std::make_shared<RecordingReconciler>(
      &clock_, [](int call) -> absl::StatusOr<Result> {
        if (call == 1) throw std::runtime_error("bad state");
        if (call == 2) throw 42;
        return Result::Done();
      });
  auto c = Make(r);
  Running run(c.get());
  c->queue().Add(req_);
  ASSERT_TRUE(Eventually([&] { return r->calls() == 1; }));
  AwaitWaiting(*c, 1);
  clock_.Advance(absl::Milliseconds(5));
  ASSERT_TRUE(Eventually([&] { return r->calls() == 2; }));
  AwaitWaiting(*c, 1);
  clock_.Advance(absl::Milliseconds(10));
  ASSERT_TRUE(Eventually([&] { return r->calls() == 3; }));
  // The worker lives on: another key is reconciled too.
  c->queue().Add(Request{"default", "b"});
  ASSERT_TRUE(Eventually([&] { return r->calls() == 4; }));
  EXPECT_TRUE(run.Stop().ok());
  const auto counts = metrics_.Get("test");
  EXPECT_EQ(counts.panics, 2);
  EXPECT_EQ(counts.errors, 2);
  EXPECT_EQ(counts.reconciles.at(ReconcileOutcome::kError), 2);
  EXPECT_EQ(counts.reconciles.at(ReconcileOutcome::kSuccess), 2);
}

TEST_F(ControllerTest, ReconcileContextNamesTheReconcile) {
  auto r = std::make_shared<RecordingReconciler>(
      &clock_, [](int) -> absl::StatusOr<Result> { return Result::Done(); });
  auto c = Make(r);
  Running run(c.get());
  c->queue().Add(req_);
  c->queue().Add(Request{"", "cluster-wide"});
  ASSERT_TRUE(Eventually([&] { return r->calls() == 2; }));
  EXPECT_TRUE(run.Stop().ok());
  const auto prefixes = r->prefixes();
  EXPECT_EQ(prefixes[0].rfind(
                "controller=test namespace=default name=a reconcileID=", 0),
            0u)
      << prefixes[0];
  // A v4 UUID, different for every reconcile.
  const std::string id = prefixes[0].substr(prefixes[0].rfind('=') + 1);
  ASSERT_EQ(id.size(), 36u) << id;
  EXPECT_EQ(id[14], '4');
  EXPECT_NE(id, prefixes[1].substr(prefixes[1].rfind('=') + 1));
  EXPECT_EQ(req_.ToString(), "default/a");
  EXPECT_EQ((Request{"", "cluster-wide"}).ToString(), "cluster-wide");
}

// Several keys added over and over from several threads, four workers: no
// key is ever reconciled by two workers at once.
TEST(ControllerConcurrencyTest, NoKeyIsReconciledTwiceAtOnce) {
  constexpr int kKeys = 8;
  constexpr int kWorkers = 4;
  constexpr int kAddsPerProducer = 3000;
  Mutex mu;
  absl::flat_hash_set<Request> in_progress;
  std::atomic<int> violations{0};
  std::atomic<int> reconciles{0};
  std::atomic<int> concurrent{0};
  std::atomic<int> max_concurrent{0};
  auto r = std::make_shared<ReconcilerFunc>(
      [&](const Request& req, ReconcileContext&) -> absl::StatusOr<Result> {
        {
          MutexLock lock(&mu);
          if (!in_progress.insert(req).second) ++violations;
        }
        const int now = ++concurrent;
        int seen = max_concurrent.load();
        while (now > seen && !max_concurrent.compare_exchange_weak(seen, now)) {
        }
        for (int i = 0; i < 50; ++i) std::this_thread::yield();
        --concurrent;
        {
          MutexLock lock(&mu);
          in_progress.erase(req);
        }
        const int n = ++reconciles;
        // Some errors too, so retries mix with fresh adds.
        if (n % 7 == 0) return absl::InternalError("retry me");
        return Result::Done();
      });
  ControllerOptions options;
  options.name = "stress";
  options.max_concurrent_reconciles = kWorkers;
  options.rate_limiter =
      std::make_unique<workqueue::ItemExponentialFailureRateLimiter<Request>>(
          absl::Microseconds(50), absl::Milliseconds(1));
  auto c = Controller::New(std::move(options), r);
  ASSERT_TRUE(c.ok());
  Running run(c->get());
  std::vector<std::thread> producers;
  for (int p = 0; p < 3; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kAddsPerProducer; ++i) {
        (*c)->queue().Add(Request{"ns", absl::StrCat("k", (i + p) % kKeys)});
        if (i % 16 == 0) std::this_thread::yield();
      }
    });
  }
  for (std::thread& t : producers) t.join();
  ASSERT_TRUE(Eventually([&] { return reconciles.load() >= kKeys; }));
  EXPECT_TRUE(run.Stop().ok());
  EXPECT_EQ(violations.load(), 0);
  EXPECT_LE(max_concurrent.load(), kWorkers);
}

// Blocks each reconcile of key "a" until released.
class BlockingReconciler final : public Reconciler {
 public:
  absl::StatusOr<Result> Reconcile(const Request& request,
                                   ReconcileContext& ctx) override {
    MutexLock lock(&mu_);
    seen_.push_back(request.name);
    if (request.name == "a") {
      entered_ = true;
      while (!released_ && !(watch_ctx_ && ctx.ctx().done())) {
        cv_.WaitWithTimeout(&mu_, absl::Milliseconds(1));
      }
      saw_cancel_ = ctx.ctx().done();
    }
    return Result::Done();
  }
  void Release() {
    MutexLock lock(&mu_);
    released_ = true;
    cv_.SignalAll();
  }
  void WatchContext() {
    MutexLock lock(&mu_);
    watch_ctx_ = true;
  }
  bool entered() {
    MutexLock lock(&mu_);
    return entered_;
  }
  bool saw_cancel() {
    MutexLock lock(&mu_);
    return saw_cancel_;
  }
  std::vector<std::string> seen() {
    MutexLock lock(&mu_);
    return seen_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool entered_ ABSL_GUARDED_BY(mu_) = false;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  bool watch_ctx_ ABSL_GUARDED_BY(mu_) = false;
  bool saw_cancel_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> seen_ ABSL_GUARDED_BY(mu_);
};

TEST_F(ControllerTest, ShutdownDrainsInFlightAndTakesNoNewKeys) {
  auto r = std::make_shared<BlockingReconciler>();
  auto c = Make(r);
  Running run(c.get());
  c->queue().Add(Request{"default", "a"});
  ASSERT_TRUE(Eventually([&] { return r->entered(); }));
  // Waits behind "a" on the only worker.
  c->queue().Add(Request{"default", "b"});
  run.Cancel();
  // The stop has begun (the controller marks itself stopping before it
  // shuts the queue down).
  ASSERT_TRUE(Eventually([&] { return c->queue().ShuttingDown(); }));
  // The shutdown waits for "a"; nothing moves the fake clock to its
  // deadline.
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE(run.returned());
  // Nothing is taken after the stop: a key added now, while the worker is
  // still alive inside "a", is not reconciled once "a" returns (nor is "b").
  c->queue().Add(Request{"default", "c"});
  r->Release();
  EXPECT_TRUE(run.Stop().ok());
  EXPECT_FALSE(r->saw_cancel());
  EXPECT_EQ(r->seen(), std::vector<std::string>{"a"});
}

TEST_F(ControllerTest, ShutdownDeadlineCancelsReconcilesAndReports) {
  auto r = std::make_shared<BlockingReconciler>();
  r->WatchContext();
  ControllerOptions options;
  options.name = "slow";
  options.clock = &clock_;
  options.shutdown_timeout = absl::Seconds(10);
  auto c = Controller::New(std::move(options), r);
  ASSERT_TRUE(c.ok());
  Running run(c->get());
  (*c)->queue().Add(Request{"default", "a"});
  ASSERT_TRUE(Eventually([&] { return r->entered(); }));
  run.Cancel();
  // Moves the fake clock until the drain's deadline passes, however late
  // the drain started waiting.
  ASSERT_TRUE(Eventually([&] {
    clock_.Advance(absl::Seconds(1));
    return run.returned();
  }));
  const absl::Status s = run.Stop();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("controller slow: 1 reconcile(s) still running"),
            absl::string_view::npos)
      << s;
  EXPECT_TRUE(r->saw_cancel());
}

TEST_F(ControllerTest, StartTwiceFails) {
  auto r = std::make_shared<ReconcilerFunc>(
      [](const Request&, ReconcileContext&) { return Result::Done(); });
  auto c = Make(r);
  auto [ctx, cancel] = WithCancel(Context::Background());
  cancel();
  EXPECT_TRUE(c->Start(ctx).ok());
  EXPECT_EQ(c->Start(ctx).code(), absl::StatusCode::kFailedPrecondition);
}

// Holds every reconcile until Open, and records the order of the Requests.
class GatedReconciler final : public Reconciler {
 public:
  absl::StatusOr<Result> Reconcile(const Request& request,
                                   ReconcileContext&) override {
    MutexLock lock(&mu_);
    order_.push_back(request.name);
    mu_.Await(absl::Condition(&open_));
    return Result::Done();
  }
  void Open() {
    MutexLock lock(&mu_);
    open_ = true;
  }
  std::vector<std::string> order() {
    MutexLock lock(&mu_);
    return order_;
  }

 private:
  Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> order_ ABSL_GUARDED_BY(mu_);
};

api::ObjectPtr ConfigMap(const std::string& name, int rv) {
  auto o = api::Object::Parse(absl::StrCat(
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")", name,
      R"(","namespace":"ns","resourceVersion":")", rv, R"("}})"));
  EXPECT_TRUE(o.ok()) << o.status();
  return *o;
}

// A controller restarting: its informer's initial list of kListed objects
// is queued, one worker is busy with the first, and a fresh change arrives
// through the watch. Returns the order of the reconciles.
std::vector<std::string> ReconcileOrderAfterARestart(bool use_priority_queue) {
  constexpr int kListed = 20;
  auto lw = std::make_unique<kcr::testing::FakeListWatch>();
  kcr::testing::FakeListWatch* fake = lw.get();
  std::vector<api::ObjectPtr> listed;
  for (int i = 0; i < kListed; ++i) {
    listed.push_back(ConfigMap(absl::StrCat("listed-", i), 10));
  }
  fake->SetState(listed, "10");
  cache::SharedInformerOptions informer_options;
  informer_options.name = "configmaps";
  cache::SharedIndexInformer informer(std::move(lw), informer_options);

  auto r = std::make_shared<GatedReconciler>();
  ControllerOptions options;
  options.name = "restart";
  options.use_priority_queue = use_priority_queue;
  auto c = Controller::New(std::move(options), r);
  EXPECT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->priority_queue() != nullptr, use_priority_queue);
  EXPECT_TRUE((*c)->Watch(&informer, EnqueueRequestForObject()).ok());

  auto [ctx, cancel] = WithCancel(Context::Background());
  std::thread informer_thread([&informer, ctx = ctx] { informer.Run(ctx); });
  {
    Running run(c->get());
    // The worker holds listed-0; the others wait in the queue.
    EXPECT_TRUE(Eventually([&] { return r->order().size() == 1; }));
    EXPECT_TRUE(
        Eventually([&] { return (*c)->queue().Len() == size_t{kListed - 1}; }));
    fake->WaitForWatch(0)->Add(ConfigMap("fresh", 11));
    EXPECT_TRUE(
        Eventually([&] { return (*c)->queue().Len() == size_t{kListed}; }));
    r->Open();
    EXPECT_TRUE(
        Eventually([&] { return r->order().size() == size_t{kListed + 1}; }));
    EXPECT_TRUE(run.Stop().ok());
  }
  cancel();
  informer_thread.join();
  return r->order();
}

TEST(ControllerPriorityTest, InitialListIsLowPriorityAndFreshChangesGoFirst) {
  const std::vector<std::string> order = ReconcileOrderAfterARestart(true);
  ASSERT_EQ(order.size(), 21u);
  EXPECT_EQ(order[0], "listed-0");
  EXPECT_EQ(order[1], "fresh");
  // The initial list, in its order, after the fresh change.
  for (int i = 1; i < 20; ++i) {
    EXPECT_EQ(order[i + 1], absl::StrCat("listed-", i));
  }
}

TEST(ControllerPriorityTest, TheFifoQueueStaysSelectable) {
  const std::vector<std::string> order = ReconcileOrderAfterARestart(false);
  ASSERT_EQ(order.size(), 21u);
  EXPECT_EQ(order.back(), "fresh");
}

// A retry keeps the priority its Request was taken at.
TEST_F(ControllerTest, RetriesKeepTheirPriority) {
  Notification gate;
  auto r = std::make_shared<RecordingReconciler>(
      &clock_, [&gate](int call) -> absl::StatusOr<Result> {
        if (call == 1) return absl::UnavailableError("retry");
        if (call == 2) gate.WaitForNotification();
        return Result::Done();
      });
  auto c = Make(r);
  ASSERT_NE(c->priority_queue(), nullptr);
  Running run(c.get());
  workqueue::AddOpts opts;
  opts.priority = kLowPriority;
  c->priority_queue()->AddWithOpts(opts, req_);
  ASSERT_TRUE(Eventually([&] { return r->calls() == 1; }));
  AwaitWaiting(*c, 1);
  // The worker is busy while the retry comes due and a Request of a
  // priority between the low one and the default is added.
  c->queue().Add(Request{"default", "busy"});
  ASSERT_TRUE(Eventually([&] { return r->calls() == 2; }));
  clock_.Advance(absl::Milliseconds(5));
  opts.priority = kLowPriority / 2;
  c->priority_queue()->AddWithOpts(opts, Request{"default", "middle"});
  ASSERT_TRUE(Eventually([&] { return c->queue().Len() == 2; }));
  gate.Notify();
  ASSERT_TRUE(Eventually([&] { return r->calls() == 4; }));
  EXPECT_TRUE(run.Stop().ok());
  const std::vector<Request> requests = r->requests();
  EXPECT_EQ(requests[2].name, "middle");
  EXPECT_EQ(requests[3], req_);
}

}  // namespace
}  // namespace kcr::controller
