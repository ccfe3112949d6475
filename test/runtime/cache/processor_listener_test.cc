#include "runtime/cache/processor_listener.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/mutex.h"
#include "gtest/gtest.h"

namespace kcr::cache {
namespace {

api::ObjectPtr Pod(const std::string& name, int rv,
                   const std::string& uid = "") {
  auto pod = api::Object::Parse(absl::StrCat(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
      R"(","namespace":"default","uid":")", uid.empty() ? name : uid,
      R"(","resourceVersion":")", rv, R"("}})"));
  EXPECT_TRUE(pod.ok()) << pod.status();
  return *pod;
}

// Records every call as "add name rv", "update name rv->rv", "delete name
// rv"; can be held at a gate so notifications pile up.
class Recorder : public ResourceEventHandler {
 public:
  void OnAdd(const api::ObjectPtr& o, bool initial) override {
    Record(absl::StrCat("add ", std::string(o->name()), " ",
                        std::string(o->resource_version()),
                        initial ? " initial" : ""));
  }
  void OnUpdate(const api::ObjectPtr& old_o,
                const api::ObjectPtr& new_o) override {
    Record(absl::StrCat("update ", std::string(new_o->name()), " ",
                        std::string(old_o->resource_version()), "->",
                        std::string(new_o->resource_version())));
  }
  void OnDelete(const api::ObjectPtr& o, bool unknown) override {
    Record(absl::StrCat("delete ", std::string(o->name()), " ",
                        std::string(o->resource_version()),
                        unknown ? " unknown" : ""));
  }

  void Close() {
    MutexLock lock(&mu_);
    closed_ = true;
  }
  void Open() {
    MutexLock lock(&mu_);
    closed_ = false;
  }
  // Blocks until the handler is held at the gate.
  void WaitHeld() {
    MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&held_));
  }
  std::vector<std::string> calls() {
    MutexLock lock(&mu_);
    return calls_;
  }

 private:
  void Record(std::string call) {
    MutexLock lock(&mu_);
    held_ = closed_;
    mu_.Await(absl::Condition(
        +[](bool* closed) { return !*closed; }, &closed_));
    held_ = false;
    calls_.push_back(std::move(call));
  }

  Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
};

TEST(ProcessorListenerTest, DeliversInOrder) {
  auto recorder = std::make_shared<Recorder>();
  ProcessorListener listener(recorder, {.name = "test"});
  listener.Add(HandlerEvent::Add(Pod("a", 1), true));
  listener.Start();
  listener.Add(HandlerEvent::Update(Pod("a", 1), Pod("a", 2)));
  listener.Add(HandlerEvent::Add(Pod("b", 3), false));
  listener.Add(HandlerEvent::Delete(Pod("a", 4), true));
  ASSERT_TRUE(listener.WaitIdle(absl::Seconds(10)));
  EXPECT_EQ(recorder->calls(),
            (std::vector<std::string>{"add a 1 initial", "update a 1->2",
                                      "add b 3", "delete a 4 unknown"}));
  EXPECT_EQ(listener.delivered(), 4);
  EXPECT_EQ(listener.coalesced(), 0);
  EXPECT_TRUE(listener.InitialListDelivered());
}

TEST(ProcessorListenerTest, ABatchIsDeliveredInOrderAndCoalescedLikeSingles) {
  auto recorder = std::make_shared<Recorder>();
  ProcessorListener listener(recorder, {.name = "test", .max_in_order = 2});
  listener.Start();
  recorder->Close();
  listener.Add(HandlerEvent::Add(Pod("held", 1), false));
  recorder->WaitHeld();
  const std::vector<HandlerEvent> batch = {
      HandlerEvent::Add(Pod("a", 2), true),
      HandlerEvent::Add(Pod("b", 3), false),
      HandlerEvent::Update(Pod("a", 2), Pod("a", 4)),  // → add a 4
      HandlerEvent::Delete(Pod("b", 5), false),        // cancels b
      HandlerEvent::Add(Pod("c", 6), false),
  };
  listener.Add(batch);
  EXPECT_EQ(listener.pending(), 2u);  // a, c
  recorder->Open();
  ASSERT_TRUE(listener.WaitIdle(absl::Seconds(10)));
  EXPECT_EQ(
      recorder->calls(),
      (std::vector<std::string>{"add held 1", "add a 4 initial", "add c 6"}));
  EXPECT_EQ(listener.coalesced(), 2);
  EXPECT_TRUE(listener.InitialListDelivered());
  // Ignored once stopped, like a single Add.
  listener.Stop();
  listener.Add(batch);
  EXPECT_EQ(listener.pending(), 0u);
}

TEST(ProcessorListenerTest, InitialListDeliveredOnlyAfterHandlerReturns) {
  auto recorder = std::make_shared<Recorder>();
  ProcessorListener listener(recorder, {.name = "test"});
  listener.Start();
  recorder->Close();
  listener.Add(HandlerEvent::Add(Pod("a", 1), true));
  recorder->WaitHeld();
  EXPECT_FALSE(listener.InitialListDelivered());
  recorder->Open();
  ASSERT_TRUE(listener.WaitIdle(absl::Seconds(10)));
  EXPECT_TRUE(listener.InitialListDelivered());
}

TEST(ProcessorListenerTest, CoalescesByKeyPastTheBound) {
  auto recorder = std::make_shared<Recorder>();
  ProcessorListener listener(recorder, {.name = "test", .max_in_order = 2});
  listener.Start();
  recorder->Close();
  listener.Add(HandlerEvent::Add(Pod("held", 1), false));
  recorder->WaitHeld();
  // Two pending in order, then coalescing.
  listener.Add(HandlerEvent::Add(Pod("a", 2), true));
  listener.Add(HandlerEvent::Add(Pod("b", 3), false));
  listener.Add(HandlerEvent::Update(Pod("a", 2), Pod("a", 4)));  // → add a 4
  listener.Add(HandlerEvent::Update(Pod("b", 3), Pod("b", 5)));  // → add b 5
  listener.Add(HandlerEvent::Delete(Pod("b", 6), false));        // cancels b
  listener.Add(HandlerEvent::Add(Pod("c", 7), false));
  listener.Add(HandlerEvent::Update(Pod("c", 7), Pod("c", 8)));  // → add c 8
  listener.Add(HandlerEvent::Add(Pod("d", 9), false));
  listener.Add(HandlerEvent::Delete(Pod("d", 10), false));     // cancels d
  listener.Add(HandlerEvent::Add(Pod("d", 11, "d2"), false));  // new one
  EXPECT_EQ(listener.pending(), 3u);                           // a, c, d2
  EXPECT_FALSE(listener.InitialListDelivered());
  recorder->Open();
  ASSERT_TRUE(listener.WaitIdle(absl::Seconds(10)));
  EXPECT_EQ(recorder->calls(),
            (std::vector<std::string>{"add held 1", "add a 4 initial",
                                      "add c 8", "add d 11"}));
  EXPECT_EQ(listener.coalesced(), 5);
  EXPECT_TRUE(listener.InitialListDelivered());
}

TEST(ProcessorListenerTest, CoalescedUpdateKeepsWhatTheHandlerSaw) {
  auto recorder = std::make_shared<Recorder>();
  ProcessorListener listener(recorder, {.name = "test", .max_in_order = 1});
  listener.Start();
  recorder->Close();
  listener.Add(HandlerEvent::Add(Pod("held", 1), false));
  recorder->WaitHeld();
  listener.Add(HandlerEvent::Add(Pod("x", 1), false));
  listener.Add(HandlerEvent::Update(Pod("a", 1), Pod("a", 2)));
  listener.Add(HandlerEvent::Update(Pod("a", 2), Pod("a", 3)));
  listener.Add(HandlerEvent::Update(Pod("e", 1), Pod("e", 2)));
  listener.Add(HandlerEvent::Delete(Pod("e", 4), false));
  listener.Add(HandlerEvent::Add(Pod("e", 5, "e2"), false));
  listener.Add(HandlerEvent::Update(Pod("e", 5, "e2"), Pod("e", 6, "e2")));
  recorder->Open();
  ASSERT_TRUE(listener.WaitIdle(absl::Seconds(10)));
  EXPECT_EQ(recorder->calls(),
            (std::vector<std::string>{"add held 1", "add x 1", "update a 1->3",
                                      "delete e 4", "add e 6"}));
}

TEST(ProcessorListenerTest, BoundedWhileTheHandlerIsStuck) {
  auto recorder = std::make_shared<Recorder>();
  ProcessorListener listener(recorder, {.name = "test", .max_in_order = 100});
  listener.Start();
  recorder->Close();
  listener.Add(HandlerEvent::Add(Pod("held", 0), false));
  recorder->WaitHeld();
  // 50 objects, each updated 1000 times.
  for (int rv = 1; rv <= 1000; ++rv) {
    for (int i = 0; i < 50; ++i) {
      const std::string name = absl::StrCat("p", i);
      listener.Add(
          rv == 1 ? HandlerEvent::Add(Pod(name, 1), false)
                  : HandlerEvent::Update(Pod(name, rv - 1), Pod(name, rv)));
    }
  }
  EXPECT_LE(listener.pending(), 150u);
  EXPECT_GT(listener.coalesced(), 49000);
  recorder->Open();
  ASSERT_TRUE(listener.WaitIdle(absl::Seconds(10)));
  // The last state of every object was delivered.
  std::vector<std::string> calls = recorder->calls();
  for (int i = 0; i < 50; ++i) {
    const std::string name = absl::StrCat("p", i);
    std::string last;
    for (const std::string& c : calls) {
      if (c.find(" " + name + " ") != std::string::npos) last = c;
    }
    EXPECT_EQ(last, "update " + name + " 1->1000");
  }
}

class Thrower : public ResourceEventHandler {
 public:
  void OnAdd(const api::ObjectPtr& o, bool) override {
    if (std::string(o->name()) == "bad") throw std::runtime_error("boom");
    ++adds;
  }
  int adds = 0;
};

TEST(ProcessorListenerTest, AHandlerThatThrowsKeepsGettingEvents) {
  auto thrower = std::make_shared<Thrower>();
  ProcessorListener listener(thrower, {.name = "test"});
  listener.Start();
  listener.Add(HandlerEvent::Add(Pod("bad", 1), false));
  listener.Add(HandlerEvent::Add(Pod("good", 2), false));
  ASSERT_TRUE(listener.WaitIdle(absl::Seconds(10)));
  EXPECT_EQ(listener.handler_errors(), 1);
  EXPECT_EQ(thrower->adds, 1);
}

TEST(ProcessorListenerTest, StopDropsPendingAndIgnoresLaterAdds) {
  auto recorder = std::make_shared<Recorder>();
  auto listener = std::make_unique<ProcessorListener>(
      recorder, ProcessorListenerOptions{.name = "test"});
  listener->Start();
  recorder->Close();
  listener->Add(HandlerEvent::Add(Pod("held", 1), false));
  recorder->WaitHeld();
  listener->Add(HandlerEvent::Add(Pod("dropped", 2), false));
  listener->Stop();
  listener->Add(HandlerEvent::Add(Pod("late", 3), false));
  EXPECT_EQ(listener->pending(), 0u);
  recorder->Open();
  listener.reset();  // joins
  EXPECT_EQ(recorder->calls(), (std::vector<std::string>{"add held 1"}));
}

TEST(ProcessorListenerTest, ResyncSchedule) {
  ProcessorListener listener(std::make_shared<ResourceEventHandlerFuncs>(),
                             {.name = "test"});
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  EXPECT_FALSE(listener.ShouldResync(t0));  // no period
  listener.set_resync_period(absl::Seconds(30));
  listener.SetNextResync(t0);
  EXPECT_FALSE(listener.ShouldResync(t0 + absl::Seconds(29)));
  EXPECT_TRUE(listener.ShouldResync(t0 + absl::Seconds(30)));
  EXPECT_FALSE(listener.ShouldResync(t0 + absl::Seconds(31)));
  EXPECT_TRUE(listener.ShouldResync(t0 + absl::Seconds(60)));
}

}  // namespace
}  // namespace kcr::cache
