// The broadcaster against a scripted sink: queueing without blocking,
// retries and their waits, the 404 fallback of a repeat, and shutdown.
#include "runtime/events/event_broadcaster.h"

#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "api/meta/group_version.h"
#include "api/object_builder.h"
#include "base/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"

namespace kcr::events {
namespace {

using ::testing::ElementsAre;

const api::GroupResource kEvents{"", "events"};

// One write the sink saw.
struct Write {
  std::string verb;  // "create" or "patch"
  std::string name;
  std::string body;  // the object's JSON, or the patch
};

// Answers writes from a script (OK by default), records them, and can hold
// them until released.
class ScriptedSink : public EventSink {
 public:
  struct State {
    Mutex mu;
    std::vector<Write> writes ABSL_GUARDED_BY(mu);
    std::deque<absl::Status> script ABSL_GUARDED_BY(mu);
    bool hold ABSL_GUARDED_BY(mu) = false;
    int entered ABSL_GUARDED_BY(mu) = 0;
    int rv ABSL_GUARDED_BY(mu) = 100;
  };

  explicit ScriptedSink(std::shared_ptr<State> state)
      : state_(std::move(state)) {}

  absl::StatusOr<api::ObjectPtr> Create(const Context& ctx,
                                        const api::Object& event) override {
    return Answer(ctx, {"create", std::string(event.name()), event.ToJson()},
                  event);
  }
  absl::StatusOr<api::ObjectPtr> Patch(const Context& ctx,
                                       const api::Object& event,
                                       std::string_view patch) override {
    return Answer(ctx, {"patch", std::string(event.name()), std::string(patch)},
                  event);
  }

 private:
  absl::StatusOr<api::ObjectPtr> Answer(const Context& ctx, Write write,
                                        const api::Object& event) {
    State& s = *state_;
    MutexLock lock(&s.mu);
    ++s.entered;
    s.writes.push_back(std::move(write));
    // Held: wait for release, or for the broadcaster to cancel.
    while (s.hold && !ctx.done()) {
      s.mu.AwaitWithTimeout(absl::Condition(
                                +[](State* st) {
                                  st->mu.AssertHeld();
                                  return !st->hold;
                                },
                                &s),
                            absl::Milliseconds(5));
    }
    if (ctx.done()) return ctx.Err();
    if (!s.script.empty()) {
      absl::Status status = s.script.front();
      s.script.pop_front();
      if (!status.ok()) return status;
    }
    api::ObjectBuilder b(event);
    b.SetResourceVersion(absl::StrCat(++s.rv));
    return b.Build();
  }

  std::shared_ptr<State> state_;
};

api::ObjectPtr ConfigMap(const std::string& name) {
  api::ObjectBuilder b("v1", "ConfigMap");
  b.SetName(name).SetNamespace("default").SetUid("uid-" + name);
  return *b.Build();
}

class EventBroadcasterTest : public ::testing::Test {
 protected:
  void Start(BroadcasterOptions options = {}) {
    options.clock = &clock_;
    options.random = [] { return 0.5; };
    options.sleep = [this](absl::Duration d) {
      MutexLock lock(&mu_);
      sleeps_.push_back(d);
    };
    broadcaster_ = NewBroadcaster(std::make_unique<ScriptedSink>(sink_),
                                  std::move(options));
    recorder_ = broadcaster_->NewRecorder({"test-controller", "host-a"});
  }
  void Script(std::vector<absl::Status> statuses) {
    MutexLock lock(&sink_->mu);
    for (auto& s : statuses) sink_->script.push_back(s);
  }
  std::vector<Write> writes() {
    MutexLock lock(&sink_->mu);
    return sink_->writes;
  }
  std::vector<absl::Duration> sleeps() {
    MutexLock lock(&mu_);
    return sleeps_;
  }
  void FlushOrFail() { ASSERT_TRUE(broadcaster_->Flush(absl::Seconds(30))); }

  testing::FakeClock clock_;
  std::shared_ptr<ScriptedSink::State> sink_ =
      std::make_shared<ScriptedSink::State>();
  Mutex mu_;
  std::vector<absl::Duration> sleeps_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<EventBroadcaster> broadcaster_;
  std::unique_ptr<EventRecorder> recorder_;
};

TEST_F(EventBroadcasterTest, WritesAnEvent) {
  Start();
  recorder_->Eventf(*ConfigMap("cm"), "Normal", "Synced", "synced %d keys", 3);
  FlushOrFail();
  std::vector<Write> w = writes();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].verb, "create");
  EXPECT_EQ(w[0].name.rfind("cm.", 0), 0u) << w[0].name;
  EXPECT_THAT(w[0].body, ::testing::HasSubstr(R"("message":"synced 3 keys")"));
  EXPECT_THAT(w[0].body, ::testing::HasSubstr(
                             R"("reportingComponent":"test-controller")"));
  EXPECT_EQ(broadcaster_->stats().written, 1);
  EXPECT_TRUE(sleeps().empty());
}

TEST_F(EventBroadcasterTest, RepeatIsAPatchOfTheSameEvent) {
  Start();
  recorder_->Event(*ConfigMap("cm"), "Warning", "Failed", "boom");
  FlushOrFail();
  clock_.Advance(absl::Seconds(5));
  recorder_->Event(*ConfigMap("cm"), "Warning", "Failed", "boom");
  FlushOrFail();
  std::vector<Write> w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[1].verb, "patch");
  EXPECT_EQ(w[1].name, w[0].name);
  EXPECT_EQ(w[1].body, R"({"count":2,"lastTimestamp":"2023-11-14T22:13:25Z",)"
                       R"("message":"boom"})");
}

TEST_F(EventBroadcasterTest, RepeatWhoseEventIsGoneIsCreatedAgain) {
  Start();
  recorder_->Event(*ConfigMap("cm"), "Warning", "Failed", "boom");
  FlushOrFail();
  Script({api::StatusError::NotFound(kEvents, "cm.1").ToStatus()});
  recorder_->Event(*ConfigMap("cm"), "Warning", "Failed", "boom");
  FlushOrFail();
  std::vector<Write> w = writes();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[1].verb, "patch");
  EXPECT_EQ(w[2].verb, "create");
  EXPECT_EQ(w[2].name, w[0].name);
  EXPECT_THAT(w[2].body, ::testing::HasSubstr(R"("count":2)"));
  EXPECT_THAT(w[2].body,
              ::testing::Not(::testing::HasSubstr("resourceVersion")));
  EXPECT_EQ(broadcaster_->stats().written, 2);
}

TEST_F(EventBroadcasterTest, RetriesServerErrorsAndTooManyRequests) {
  Start();
  Script({api::StatusError::ServiceUnavailable("down").ToStatus(),
          api::StatusError::TooManyRequests("slow down", 1).ToStatus(),
          absl::UnavailableError("connection refused")});
  recorder_->Event(*ConfigMap("cm"), "Normal", "Synced", "ok");
  FlushOrFail();
  EXPECT_EQ(writes().size(), 4u);
  // The first wait jittered (random() is 0.5 here), then 10 s each.
  EXPECT_THAT(sleeps(), ElementsAre(absl::Seconds(5), absl::Seconds(10),
                                    absl::Seconds(10)));
  EXPECT_EQ(broadcaster_->stats().written, 1);
}

TEST_F(EventBroadcasterTest, DoesNotRetryClientErrors) {
  Start();
  Script({api::StatusError::Forbidden(kEvents, "", "no").ToStatus(),
          api::StatusError::BadRequest("bad").ToStatus()});
  recorder_->Event(*ConfigMap("a"), "Normal", "Synced", "ok");
  recorder_->Event(*ConfigMap("b"), "Normal", "Synced", "ok");
  FlushOrFail();
  EXPECT_EQ(writes().size(), 2u);
  EXPECT_TRUE(sleeps().empty());
  EXPECT_EQ(broadcaster_->stats().failed, 2);
}

TEST_F(EventBroadcasterTest, AlreadyExistsIsDone) {
  Start();
  Script({api::StatusError::AlreadyExists(kEvents, "x").ToStatus()});
  recorder_->Event(*ConfigMap("a"), "Normal", "Synced", "ok");
  FlushOrFail();
  EXPECT_EQ(writes().size(), 1u);
  EXPECT_TRUE(sleeps().empty());
  EXPECT_EQ(broadcaster_->stats().failed, 0);
}

TEST_F(EventBroadcasterTest, GivesUpAfterMaxTries) {
  BroadcasterOptions options;
  options.max_tries = 3;
  options.retry_interval = absl::Milliseconds(100);
  Start(options);
  Script(std::vector<absl::Status>(
      5, api::StatusError::InternalError("x").ToStatus()));
  recorder_->Event(*ConfigMap("a"), "Normal", "Synced", "ok");
  FlushOrFail();
  EXPECT_EQ(writes().size(), 3u);
  EXPECT_THAT(sleeps(),
              ElementsAre(absl::Milliseconds(50), absl::Milliseconds(100)));
  EXPECT_EQ(broadcaster_->stats().failed, 1);
}

TEST_F(EventBroadcasterTest, SpamFilterSkips) {
  BroadcasterOptions options;
  options.correlator.spam_burst = 3;
  Start(options);
  for (int i = 0; i < 5; ++i) {
    recorder_->Event(*ConfigMap("cm"), "Normal", absl::StrCat("R", i), "m");
  }
  FlushOrFail();
  EXPECT_EQ(writes().size(), 3u);
  EXPECT_EQ(broadcaster_->stats().skipped, 2);
}

TEST_F(EventBroadcasterTest, InvalidTypeOrReferenceIsDropped) {
  Start();
  recorder_->Event(*ConfigMap("cm"), "Info", "Synced", "m");
  api::ObjectReference no_kind;
  no_kind.name = "x";
  recorder_->Record(no_kind, {}, "Normal", "Synced", "m");
  FlushOrFail();
  EXPECT_TRUE(writes().empty());
  EXPECT_EQ(broadcaster_->stats().recorded, 0);
}

TEST_F(EventBroadcasterTest, ClusterScopedObjectsGoToDefault) {
  Start();
  api::ObjectBuilder b("v1", "Namespace");
  b.SetName("team-a").SetUid("u1");
  recorder_->Event(**b.Build(), "Normal", "Created", "m");
  FlushOrFail();
  ASSERT_EQ(writes().size(), 1u);
  EXPECT_THAT(writes()[0].body,
              ::testing::HasSubstr(R"("namespace":"default")"));
}

TEST_F(EventBroadcasterTest, FullQueueDropsWithoutBlocking) {
  BroadcasterOptions options;
  options.queue_size = 100;
  Start(options);
  {
    MutexLock lock(&sink_->mu);
    sink_->hold = true;
  }
  // The sink thread takes the first event and is held in the sink.
  recorder_->Event(*ConfigMap("first"), "Normal", "Synced", "m");
  {
    MutexLock lock(&sink_->mu);
    sink_->mu.Await(absl::Condition(
        +[](ScriptedSink::State* s) {
          s->mu.AssertHeld();
          return s->entered == 1;
        },
        sink_.get()));
  }
  // 100 fit in the queue, 50 are dropped; none of these calls waits for
  // the held sink.
  for (int i = 0; i < 150; ++i) {
    recorder_->Event(*ConfigMap(absl::StrCat("cm-", i)), "Normal", "Synced",
                     "m");
  }
  BroadcasterStats stats = broadcaster_->stats();
  EXPECT_EQ(stats.recorded, 101);
  EXPECT_EQ(stats.dropped, 50);
  {
    MutexLock lock(&sink_->mu);
    sink_->hold = false;
  }
  FlushOrFail();
  EXPECT_EQ(writes().size(), 101u);
  EXPECT_EQ(broadcaster_->stats().written, 101);
}

TEST_F(EventBroadcasterTest, ShutdownDrainsThenCancelsAtItsDeadline) {
  BroadcasterOptions options;
  Start(options);
  recorder_->Event(*ConfigMap("a"), "Normal", "Synced", "m");
  FlushOrFail();
  {
    MutexLock lock(&sink_->mu);
    sink_->hold = true;
  }
  recorder_->Event(*ConfigMap("b"), "Normal", "Synced", "m");
  recorder_->Event(*ConfigMap("c"), "Normal", "Synced", "m");
  std::thread shutdown([&] { broadcaster_->Shutdown(absl::Seconds(3)); });
  // Shutdown waits for the held write until its deadline on the clock.
  clock_.BlockUntilWaiters(1);
  clock_.Advance(absl::Seconds(3));
  shutdown.join();
  BroadcasterStats stats = broadcaster_->stats();
  EXPECT_EQ(stats.written, 1);
  EXPECT_EQ(stats.failed, 2);  // the cancelled write and the unwritten one
  // After Shutdown recording drops.
  recorder_->Event(*ConfigMap("d"), "Normal", "Synced", "m");
  EXPECT_EQ(broadcaster_->stats().dropped, 1);
}

TEST_F(EventBroadcasterTest, ShutdownWritesWhatIsQueued) {
  Start();
  for (int i = 0; i < 10; ++i) {
    recorder_->Event(*ConfigMap(absl::StrCat("cm-", i)), "Normal", "S", "m");
  }
  broadcaster_->Shutdown(absl::Seconds(30));
  EXPECT_EQ(broadcaster_->stats().written, 10);
}

TEST_F(EventBroadcasterTest, RecordersOnManyThreads) {
  Start();
  std::vector<std::unique_ptr<EventRecorder>> recorders;
  for (int t = 0; t < 4; ++t) {
    recorders.push_back(
        broadcaster_->NewRecorder({absl::StrCat("component-", t), ""}));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        recorders[t]->Event(*ConfigMap(absl::StrCat("cm-", t, "-", i)),
                            "Normal", "Synced", "m");
      }
    });
  }
  for (std::thread& t : threads) t.join();
  FlushOrFail();
  EXPECT_EQ(writes().size(), 200u);
  BroadcasterStats stats = broadcaster_->stats();
  EXPECT_EQ(stats.recorded, 200);
  EXPECT_EQ(stats.written, 200);
}

TEST_F(EventBroadcasterTest, ReportingComponentOnlyWhenTheServerTakesIt) {
  Start();
  auto bad = broadcaster_->NewRecorder({"Nginx Controller", "host-a"});
  bad->Event(*ConfigMap("a"), "Normal", "Synced", "m");
  auto prefixed = broadcaster_->NewRecorder({"example.org/nginx", "h"});
  prefixed->Event(*ConfigMap("b"), "Normal", "Synced", "m");
  FlushOrFail();
  std::vector<Write> w = writes();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_THAT(w[0].body,
              ::testing::Not(::testing::HasSubstr("reportingComponent")));
  EXPECT_THAT(w[0].body,
              ::testing::HasSubstr(R"("component":"Nginx Controller")"));
  EXPECT_THAT(w[1].body, ::testing::HasSubstr(
                             R"("reportingComponent":"example.org/nginx")"));
}

}  // namespace
}  // namespace kcr::events
