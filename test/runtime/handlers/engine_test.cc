// The engine on a fake clock, against the in-process local API server:
// each Step() reads the object from the server and reconciles it once, so
// a test says exactly when the engine looks and what time it is.
#include "runtime/handlers/internal/engine.h"

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "api/json/yaml_to_json.h"
#include "api/object.h"
#include "base/context.h"
#include "base/mutex.h"
#include "base/str_cat.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "rapidjson/document.h"
#include "runtime/handlers/internal/state.h"
#include "runtime/handlers/registry.h"
#include "test/apiserver/api_server_fixture.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/handlers/handlers_test_util.h"

namespace kcr::handlers::internal {
namespace {

using controller::Result;

const api::GroupVersionResource kGvr = testing::kKopfExampleGvr;

class EngineTest : public testing::ApiServerFixture {
 protected:
  void SetUp() override {
    StartServer();
    ASSERT_FALSE(HasFatalFailure());
    auto doc = json::YamlToJson(testing::kKopfExampleCrdYaml);
    ASSERT_TRUE(doc.ok()) << doc.status();
    auto crd = api::Object::FromValue(**doc);
    ASSERT_TRUE(crd.ok());
    auto created = client_->Create(
        Context::Background(),
        client::Resource::ClusterScoped(
            {"apiextensions.k8s.io", "v1", "customresourcedefinitions"}),
        **crd);
    ASSERT_TRUE(created.ok()) << created.status();
    recorder_ = std::make_shared<testing::RecordingEventRecorder>();
    metrics_ = std::make_shared<prometheus::Registry>();
  }

  // A new engine for handlers_ (as a restarted operator has: no memory).
  void NewEngine(OperatorOptions op = {}) {
    EngineOptions options;
    options.operator_options = op;
    options.clock = &clock_;
    options.client = client_.get();
    options.recorder = recorder_;
    options.metrics = metrics_.get();
    options.get = [this](const controller::Request& r) { return Get(r.name); };
    auto engine = Engine::New(handlers_, ResourceInfo{kGvr, true, true},
                              std::move(options));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
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

  void MergePatch(const std::string& name, std::string_view patch) {
    auto r = client_->Patch(Context::Background(), Res(), name,
                            api::PatchType::kMerge, patch);
    ASSERT_TRUE(r.ok()) << r.status();
  }

  // One reconcile of `name` as the server has it now.
  Result Step(const std::string& name = "a") {
    auto r = engine_->Process(controller::Request{"default", name}, Get(name),
                              Context::Background());
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Result::Done();
  }

  std::string Annotation(const std::string& name, std::string_view key) {
    api::ObjectPtr o = Get(name);
    if (o == nullptr) return "<gone>";
    auto v = o->Annotation(key);
    return v ? std::string(*v) : "<absent>";
  }

  std::string Json(const rapidjson::Value* v) {
    if (v == nullptr) return "<absent>";
    auto s = json::JsonToString(*v);
    return s.ok() ? *s : "<bad>";
  }

  double Runs(const std::string& handler, const std::string& outcome) {
    for (const auto& family : metrics_->Collect()) {
      if (family.name != "kcr_handler_runs_total") continue;
      for (const auto& m : family.metric) {
        std::string h, o;
        for (const auto& l : m.label) {
          if (l.name == "handler") h = l.value;
          if (l.name == "outcome") o = l.value;
        }
        if (h == handler && o == outcome) return m.counter.value;
      }
    }
    return 0;
  }

  testing::FakeClock clock_;
  std::shared_ptr<testing::RecordingEventRecorder> recorder_;
  std::shared_ptr<prometheus::Registry> metrics_;
  ResourceHandlers handlers_{kGvr};
  std::unique_ptr<Engine> engine_;
};

TEST(CauseTest, DetectsAsKopf) {
  EXPECT_EQ(DetectCause(false, false, false, false, false, false),
            Cause::kGone);
  EXPECT_EQ(DetectCause(true, true, false, true, true, true), Cause::kFree);
  EXPECT_EQ(DetectCause(true, true, true, true, false, false), Cause::kDelete);
  EXPECT_EQ(DetectCause(true, false, false, false, true, true), Cause::kCreate);
  EXPECT_EQ(DetectCause(true, false, false, true, false, true), Cause::kResume);
  EXPECT_EQ(DetectCause(true, false, false, true, false, false), Cause::kNoop);
  EXPECT_EQ(DetectCause(true, false, false, true, true, true), Cause::kUpdate);
}

TEST_F(EngineTest, CreateRunsHandlersOneAtATimeThenStoresTheState) {
  int a = 0, b = 0;
  handlers_.OnCreate("create_a", [&](HandlerContext& ctx) {
    ++a;
    EXPECT_EQ(ctx.reason(), Reason::kCreate);
    EXPECT_EQ(ctx.old_value(), nullptr);
    EXPECT_EQ(ctx.retry(), 0);
    ctx.patch().SetStatus("phase", "Created");
    ctx.patch().SetLabel("handled", "yes");
    return Outcome::Value(R"({"children":2})");
  });
  handlers_.OnCreate("create_b", [&](HandlerContext&) {
    ++b;
    return Outcome::Success();
  });
  NewEngine();
  Create("a");

  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 0);  // one handler per cycle
  api::ObjectPtr o = Get("a");
  EXPECT_EQ(Json(o->Find("/status/create_a")), R"({"children":2})");
  EXPECT_EQ(Json(o->Find("/status/phase")), R"("Created")");
  EXPECT_EQ(o->Label("handled").value_or(""), "yes");
  EXPECT_NE(Annotation("a", "kcr.dev/create_a").find(R"("success":true)"),
            std::string::npos);
  EXPECT_EQ(Annotation("a", "kcr.dev/last-handled-configuration"), "<absent>");

  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  // Done: the progress is purged and the essence stored.
  EXPECT_EQ(Annotation("a", "kcr.dev/create_a"), "<absent>");
  EXPECT_EQ(Annotation("a", "kcr.dev/create_b"), "<absent>");
  EXPECT_EQ(Annotation("a", "kcr.dev/last-handled-configuration"),
            R"({"spec":{"x":1},"metadata":{"labels":{"handled":"yes"}}})");
  EXPECT_TRUE(recorder_->Has("Normal", "Handler 'create_a' succeeded."));
  EXPECT_TRUE(recorder_->Has("Normal", "Creation is processed: 2 succeeded"));

  // Nothing changed: NOOP.
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(Runs("create_a", "success"), 1);
}

TEST_F(EngineTest, TemporaryErrorRetriesAfterItsDelay) {
  int calls = 0;
  handlers_.OnCreate("fn", [&](HandlerContext& ctx) {
    EXPECT_EQ(ctx.retry(), calls);
    ++calls;
    if (calls == 1) return Outcome::Temporary("not yet", absl::Seconds(30));
    EXPECT_EQ(ctx.runtime(), absl::Seconds(30));
    return Outcome::Success();
  });
  NewEngine();
  Create("a");
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(30)));
  EXPECT_EQ(calls, 1);
  const std::string record = Annotation("a", "kcr.dev/fn");
  EXPECT_NE(record.find(R"("retries":1)"), std::string::npos) << record;
  EXPECT_NE(record.find(R"("message":"not yet")"), std::string::npos);
  EXPECT_NE(record.find(R"("delayed":")"), std::string::npos);
  EXPECT_TRUE(
      recorder_->Has("Warning", "Handler 'fn' failed temporarily: not yet"));

  // Not due yet: no run, the same wake-up, shorter.
  clock_.Advance(absl::Seconds(10));
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(20)));
  EXPECT_EQ(calls, 1);

  clock_.Advance(absl::Seconds(20));
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(Annotation("a", "kcr.dev/fn"), "<absent>");
  EXPECT_NE(Annotation("a", "kcr.dev/last-handled-configuration"), "<absent>");
  EXPECT_EQ(Runs("fn", "temporary"), 1);
  EXPECT_EQ(Runs("fn", "success"), 1);
}

TEST_F(EngineTest, PermanentErrorIsNotRetried) {
  int calls = 0;
  handlers_.OnCreate("fn", [&](HandlerContext&) -> Outcome {
    ++calls;
    throw PermanentError("bad spec");
  });
  NewEngine();
  Create("a");
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(
      recorder_->Has("Warning", "Handler 'fn' failed permanently: bad spec"));
  EXPECT_TRUE(recorder_->Has("Normal",
                             "Creation is processed: 0 succeeded; "
                             "1 failed."));
  // The cause is done: the state stored, nothing runs again.
  EXPECT_NE(Annotation("a", "kcr.dev/last-handled-configuration"), "<absent>");
  clock_.Advance(absl::Hours(1));
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(Runs("fn", "permanent"), 1);
}

TEST_F(EngineTest, ArbitraryErrorsBackOffAsTheirModeSays) {
  int temporary = 0, permanent = 0, ignored = 0;
  HandlerOptions backoff;
  backoff.backoff = absl::Seconds(10);
  handlers_.OnCreate(
      "temporary",
      [&](HandlerContext&) -> Outcome {
        if (++temporary == 1) throw std::runtime_error("boom");
        return absl::OkStatus();
      },
      backoff);
  HandlerOptions perm;
  perm.errors = ErrorsMode::kPermanent;
  handlers_.OnCreate(
      "permanent",
      [&](HandlerContext&) -> Outcome {
        ++permanent;
        return absl::InternalError("broken");
      },
      perm);
  HandlerOptions ign;
  ign.errors = ErrorsMode::kIgnored;
  handlers_.OnCreate(
      "ignored",
      [&](HandlerContext&) -> Outcome {
        ++ignored;
        return absl::InternalError("whatever");
      },
      ign);
  NewEngine();
  Create("a");
  // temporary fails (backoff 10 s); the others are awake with fewer
  // retries, so they go next (kopf's asap).
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(temporary, 1);
  EXPECT_TRUE(recorder_->Has(
      "Warning",
      "Handler 'temporary' failed with an exception and will try "
      "again in 10.0 seconds: UNKNOWN: boom"));
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(permanent, 1);
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(10)));
  EXPECT_EQ(ignored, 1);
  clock_.Advance(absl::Seconds(10));
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(temporary, 2);
  EXPECT_EQ(permanent, 1);
  EXPECT_EQ(ignored, 1);
  EXPECT_TRUE(recorder_->Has("Normal",
                             "Creation is processed: 2 succeeded; "
                             "1 failed."));
  EXPECT_EQ(Runs("temporary", "error"), 1);
  EXPECT_EQ(Runs("ignored", "ignored"), 1);
}

TEST_F(EngineTest, TimeoutStopsRetriesAndCancelsTheContext) {
  int calls = 0;
  HandlerOptions options;
  options.timeout = absl::Seconds(60);
  handlers_.OnCreate(
      "fn",
      [&](HandlerContext& ctx) {
        ++calls;
        EXPECT_EQ(ctx.ctx().deadline(), ctx.started() + absl::Seconds(60));
        return Outcome::Temporary("slow", absl::Seconds(40));
      },
      options);
  NewEngine();
  Create("a");
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(40)));
  clock_.Advance(absl::Seconds(40));
  // 40 s in, another 40 s would pass the timeout: failed for good now.
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(recorder_->Has(
      "Warning",
      "Handler 'fn' failed temporarily but will time out after 60.0 seconds: "
      "slow"));
  EXPECT_EQ(Runs("fn", "timeout"), 1);
}

TEST_F(EngineTest, TimeoutPassedWhileAwayFailsWithoutCalling) {
  int calls = 0;
  HandlerOptions options;
  options.timeout = absl::Seconds(60);
  handlers_.OnCreate(
      "fn",
      [&](HandlerContext&) {
        ++calls;
        return Outcome::Temporary("slow", absl::Seconds(10));
      },
      options);
  NewEngine();
  Create("a");
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(10)));
  clock_.Advance(absl::Seconds(90));  // the operator was down
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(recorder_->Has("Warning", "Handler 'fn' has timed out after"));
}

TEST_F(EngineTest, RetriesExhaustedFailsForGood) {
  int calls = 0;
  HandlerOptions options;
  options.retries = 3;
  options.backoff = absl::Seconds(1);
  handlers_.OnCreate(
      "fn",
      [&](HandlerContext&) -> Outcome {
        ++calls;
        return absl::UnavailableError("down");
      },
      options);
  NewEngine();
  Create("a");
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(1)));
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(1)));
  clock_.Advance(absl::Seconds(1));
  // The third try would be the last: kopf's look-ahead stops it now.
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(calls, 3);
  EXPECT_TRUE(recorder_->Has("Warning", "would exceed 3 retries"));
  clock_.Advance(absl::Seconds(10));
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(calls, 3);
}

TEST_F(EngineTest, PartialSuccessDoesNotRepeatTheHandlersThatSucceeded) {
  int a = 0, b = 0, c = 0;
  handlers_.OnCreate("a", [&](HandlerContext&) {
    ++a;
    return Outcome::Success();
  });
  handlers_.OnCreate("b", [&](HandlerContext&) {
    return ++b < 3 ? Outcome::Temporary("wait", absl::Seconds(5))
                   : Outcome::Success();
  });
  handlers_.OnCreate("c", [&](HandlerContext&) {
    ++c;
    return Outcome::Success();
  });
  NewEngine();
  Create("a");
  for (int i = 0; i < 3; ++i) Step();  // a, b (fails), c
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(c, 1);
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(5)));
  clock_.Advance(absl::Seconds(5));
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(5)));
  clock_.Advance(absl::Seconds(5));
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 3);
  EXPECT_EQ(c, 1);
  EXPECT_EQ(Annotation("a", "kcr.dev/b"), "<absent>");
}

TEST_F(EngineTest, FiltersSelectTheHandlers) {
  std::vector<std::string> ran;
  auto record = [&ran](std::string id) {
    return [&ran, id](HandlerContext&) {
      ran.push_back(id);
      return Outcome::Success();
    };
  };
  HandlerOptions present, absent, equals, when, wrong;
  present.filters.labels.emplace("app", MetaFilter::Present());
  absent.filters.labels.emplace("skip", MetaFilter::Absent());
  equals.filters.annotations.emplace("team", MetaFilter::Equals("blue"));
  when.filters.when = [](const api::Object& o) {
    return o.Find("/spec/x") != nullptr;
  };
  wrong.filters.labels.emplace("app", MetaFilter::Equals("other"));
  handlers_.OnCreate("present", record("present"), present);
  handlers_.OnCreate("absent", record("absent"), absent);
  handlers_.OnCreate("equals", record("equals"), equals);
  handlers_.OnCreate("when", record("when"), when);
  handlers_.OnCreate("wrong", record("wrong"), wrong);
  NewEngine();
  Create("a", R"({"x":1})",
         R"(,"labels":{"app":"web"},"annotations":{"team":"blue"})");
  for (int i = 0; i < 6; ++i) Step();
  EXPECT_EQ(ran,
            (std::vector<std::string>{"present", "absent", "equals", "when"}));
  EXPECT_TRUE(MetaFilter::Present().Matches("x"));
  EXPECT_FALSE(MetaFilter::Present().Matches(std::nullopt));
  EXPECT_TRUE(MetaFilter::Absent().Matches(std::nullopt));
  EXPECT_FALSE(MetaFilter::Equals("a").Matches("b"));
}

TEST_F(EngineTest, UpdateAndFieldHandlersSeeWhatChanged) {
  std::vector<std::string> ran;
  std::string update_diff, field_old, field_new, field_diff;
  handlers_.OnCreate("create", [&](HandlerContext&) {
    ran.push_back("create");
    return Outcome::Success();
  });
  handlers_.OnUpdate("update", [&](HandlerContext& ctx) {
    ran.push_back("update");
    update_diff = ctx.diff().ToJson();
    return Outcome::Success();
  });
  handlers_.OnField("size", "spec.size", [&](HandlerContext& ctx) {
    ran.push_back("size");
    field_old = Json(ctx.old_value());
    field_new = Json(ctx.new_value());
    field_diff = ctx.diff().ToJson();
    return Outcome::Success();
  });
  handlers_.OnField("other", "spec.other", [&](HandlerContext&) {
    ran.push_back("other");
    return Outcome::Success();
  });
  NewEngine();
  Create("a", R"({"size":1})");
  for (int i = 0; i < 4; ++i) Step();
  // On create, the field handler of a field that is there runs too.
  EXPECT_EQ(ran, (std::vector<std::string>{"create", "size"}));
  field_old.clear();
  ran.clear();
  MergePatch("a", R"({"spec":{"size":3}})");
  for (int i = 0; i < 4; ++i) Step();
  EXPECT_EQ(ran, (std::vector<std::string>{"update", "size"}));
  EXPECT_EQ(update_diff, R"([["change",["spec","size"],1,3]])");
  EXPECT_EQ(field_old, "1");
  EXPECT_EQ(field_new, "3");
  EXPECT_EQ(field_diff, R"([["change",[],1,3]])");
  // Status and our own annotations are not changes.
  ran.clear();
  MergePatch("a", R"({"metadata":{"annotations":{"kcr.dev/x":"1"}}})");
  Step();
  EXPECT_TRUE(ran.empty());
}

TEST_F(EngineTest, DeleteHoldsTheFinalizerUntilTheHandlerSucceeds) {
  int deletes = 0;
  handlers_.OnDelete("delete", [&](HandlerContext& ctx) {
    EXPECT_EQ(ctx.reason(), Reason::kDelete);
    return ++deletes < 2
               ? Outcome::Temporary("children remain", absl::Seconds(3))
               : Outcome::Success();
  });
  NewEngine();
  Create("a");
  EXPECT_EQ(Step(), Result::Done());  // adds the finalizer, nothing else
  EXPECT_TRUE(Get("a")->HasFinalizer("kcr.dev/handlers"));
  EXPECT_EQ(Annotation("a", "kcr.dev/last-handled-configuration"), "<absent>");
  Step();  // create: no handlers; the state is stored
  EXPECT_NE(Annotation("a", "kcr.dev/last-handled-configuration"), "<absent>");

  ASSERT_TRUE(client_->Delete(Context::Background(), Res(), "a").ok());
  ASSERT_NE(Get("a"), nullptr);
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(3)));
  EXPECT_EQ(deletes, 1);
  ASSERT_NE(Get("a"), nullptr);  // held
  EXPECT_TRUE(Get("a")->HasFinalizer("kcr.dev/handlers"));
  clock_.Advance(absl::Seconds(3));
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(deletes, 2);
  EXPECT_EQ(Get("a"), nullptr);       // released: gone
  EXPECT_EQ(Step(), Result::Done());  // GONE
}

TEST_F(EngineTest, OptionalDeleteHandlersAddNoFinalizer) {
  HandlerOptions optional;
  optional.optional = true;
  handlers_.OnDelete(
      "delete", [](HandlerContext&) { return Outcome::Success(); }, optional);
  NewEngine();
  Create("a");
  Step();
  EXPECT_FALSE(Get("a")->HasFinalizer("kcr.dev/handlers"));
}

TEST_F(EngineTest, ResumeRunsOnFirstSightAfterARestart) {
  std::vector<std::string> ran;
  handlers_.OnCreate("create", [&](HandlerContext&) {
    ran.push_back("create");
    return Outcome::Success();
  });
  handlers_.OnUpdate("update", [&](HandlerContext&) {
    ran.push_back("update");
    return Outcome::Success();
  });
  handlers_.OnResume("resume", [&](HandlerContext&) {
    ran.push_back("resume");
    return Outcome::Success();
  });
  NewEngine();
  Create("a");
  Create("b");
  Step("a");
  Step("b");
  EXPECT_EQ(ran, (std::vector<std::string>{"create", "create"}));
  // Not again in this process.
  Step("a");
  EXPECT_EQ(ran.size(), 2u);

  // The operator restarts; "b" changed meanwhile.
  ran.clear();
  MergePatch("b", R"({"spec":{"x":2}})");
  NewEngine();
  Step("a");
  Step("a");
  EXPECT_EQ(ran, (std::vector<std::string>{"resume"}));
  ran.clear();
  for (int i = 0; i < 3; ++i) Step("b");
  // Mixed into the update, as kopf does.
  EXPECT_EQ(ran, (std::vector<std::string>{"update", "resume"}));
}

TEST_F(EngineTest, ProgressSurvivesARestartMidRetry) {
  int a = 0, b = 0;
  handlers_.OnCreate("a", [&](HandlerContext&) {
    ++a;
    return Outcome::Success();
  });
  handlers_.OnCreate("b", [&](HandlerContext& ctx) {
    ++b;
    if (b == 2) {
      EXPECT_EQ(ctx.retry(), 1);  // kept across the restart
    }
    return b < 2 ? Outcome::Temporary("later", absl::Seconds(60))
                 : Outcome::Success();
  });
  NewEngine();
  Create("a");
  Step();
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(60)));
  NewEngine();  // restarted
  clock_.Advance(absl::Seconds(20));
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(40)));
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 1);
  clock_.Advance(absl::Seconds(40));
  EXPECT_EQ(Step(), Result::Done());
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
}

TEST_F(EngineTest, AStaleCacheCopyDoesNotRunAHandlerTwice) {
  int calls = 0;
  handlers_.OnCreate("a", [&](HandlerContext&) {
    ++calls;
    return Outcome::Success();
  });
  handlers_.OnCreate("b", [&](HandlerContext&) { return Outcome::Success(); });
  NewEngine();
  Create("a");
  api::ObjectPtr before = Get("a");
  Step();
  EXPECT_EQ(calls, 1);
  // The cache still has the copy from before the write.
  auto r = engine_->Process(controller::Request{"default", "a"}, before,
                            Context::Background());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_NE(Annotation("a", "kcr.dev/a"), "<absent>");  // b has not run
  Step();                                               // the fresh copy
  EXPECT_EQ(Annotation("a", "kcr.dev/a"), "<absent>");
  EXPECT_EQ(calls, 1);
}

TEST_F(EngineTest, HostileStateIsResetWithAWarning) {
  int calls = 0;
  handlers_.OnCreate("fn", [&](HandlerContext& ctx) {
    ++calls;
    EXPECT_EQ(ctx.retry(), 0);  // the bad record was not trusted
    return Outcome::Success();
  });
  NewEngine();
  Create("a", R"({"x":1})",
         R"(,"annotations":{"kcr.dev/fn":"{\"retries\":\"lots\"}"})");
  Step();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(recorder_->Has(
      "Warning", "The progress of handler 'fn' is malformed and is reset"));

  Create(
      "b", R"({"x":1})",
      Cat(R"(,"annotations":{"kcr.dev/fn":"{\"started\":\"2999-01-01T00:00:00\",\"success\":true}"})"));
  Step("b");
  EXPECT_EQ(calls, 2);  // a success from the future is not believed

  Create("c", R"({"x":1})",
         R"(,"annotations":{"kcr.dev/last-handled-configuration":"{oops"})");
  Step("c");
  EXPECT_TRUE(recorder_->Has(
      "Warning", "The last handled state is malformed and is reset"));
  EXPECT_EQ(calls, 3);  // handled as new
  EXPECT_EQ(Annotation("c", "kcr.dev/last-handled-configuration"),
            R"({"spec":{"x":1}})");
}

TEST_F(EngineTest, ProgressInStatusKeepsAnnotationsClean) {
  int calls = 0;
  handlers_.OnCreate("fn", [&](HandlerContext&) {
    return ++calls < 2 ? Outcome::Temporary("again", absl::Seconds(1))
                       : Outcome::Success();
  });
  OperatorOptions op;
  op.progress_in_status = true;
  NewEngine(op);
  Create("a");
  Step();
  api::ObjectPtr o = Get("a");
  EXPECT_FALSE(o->annotations().Has("kcr.dev/fn"));
  EXPECT_EQ(Json(o->Find("/status/kcr/progress/fn/retries")), "1");
  clock_.Advance(absl::Seconds(1));
  Step();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(Json(Get("a")->Find("/status/kcr/progress/fn")), "<absent>");
}

TEST_F(EngineTest, TimerRunsAfterItsInitialDelayThenEveryInterval) {
  int runs = 0;
  TimerOptions options;
  options.initial_delay = absl::Seconds(10);
  options.interval = absl::Seconds(30);
  handlers_.OnTimer(
      "tick",
      [&](HandlerContext& ctx) {
        ++runs;
        ctx.patch().SetStatus("ticks", int64_t{runs});
        return Outcome::Success();
      },
      options);
  NewEngine();
  Create("a");
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(10)));
  EXPECT_EQ(runs, 0);
  clock_.Advance(absl::Seconds(10));
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(30)));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(Json(Get("a")->Find("/status/ticks")), "1");
  clock_.Advance(absl::Seconds(29));
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(1)));
  EXPECT_EQ(runs, 1);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(30)));
  EXPECT_EQ(runs, 2);
}

TEST_F(EngineTest, TimerWaitsForTheObjectToBeIdle) {
  int runs = 0;
  TimerOptions options;
  options.interval = absl::Seconds(5);
  options.idle = absl::Seconds(20);
  handlers_.OnTimer(
      "idle",
      [&](HandlerContext&) {
        ++runs;
        return Outcome::Success();
      },
      options);
  NewEngine();
  Create("a");
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(20)));
  clock_.Advance(absl::Seconds(15));
  MergePatch("a", R"({"spec":{"x":2}})");  // a change restarts the countdown
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(20)));
  clock_.Advance(absl::Seconds(19));
  Step();
  EXPECT_EQ(runs, 0);
  clock_.Advance(absl::Seconds(1));
  Step();
  EXPECT_EQ(runs, 1);
  // Status is no change: the timer keeps its pace.
  MergePatch("a", R"({"metadata":{"annotations":{"kcr.dev/x":"y"}}})");
  clock_.Advance(absl::Seconds(5));
  Step();
  EXPECT_EQ(runs, 2);
}

TEST_F(EngineTest, TimerRetriesItsErrorsAndNeverRunsBesideAChangeHandler) {
  std::vector<std::string> ran;
  handlers_.OnCreate("create", [&](HandlerContext&) {
    ran.push_back("create");
    return Outcome::Success();
  });
  TimerOptions options;
  options.interval = absl::Seconds(60);
  handlers_.OnTimer(
      "tick",
      [&](HandlerContext& ctx) {
        ran.push_back(Cat("tick:", ctx.retry()));
        return ctx.retry() == 0 ? Outcome::Temporary("again", absl::Seconds(5))
                                : Outcome::Success();
      },
      options);
  NewEngine();
  Create("a");
  Step();  // the create handler: the timer waits for the next cycle
  EXPECT_EQ(ran, (std::vector<std::string>{"create"}));
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(5)));
  clock_.Advance(absl::Seconds(5));
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(60)));
  EXPECT_EQ(ran, (std::vector<std::string>{"create", "tick:0", "tick:1"}));
}

TEST_F(EngineTest, TimerResultsGoUnderItsIdAndItsReasonIsTimer) {
  std::vector<Reason> reasons;
  TimerOptions options;
  options.interval = absl::Seconds(10);
  handlers_.OnTimer(
      "ping",
      [&](HandlerContext& ctx) -> Outcome {
        reasons.push_back(ctx.reason());
        if (reasons.size() == 2) {
          return Outcome::Temporary("flaky", absl::Seconds(1));
        }
        return Outcome::Value(Cat(R"({"run":)", reasons.size(), "}"));
      },
      options);
  NewEngine();
  Create("a");
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(10)));
  EXPECT_EQ(Json(Get("a")->Find("/status/ping")), R"({"run":1})");
  clock_.Advance(absl::Seconds(10));
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(1)));
  // A failure delivers nothing: the last result stays.
  EXPECT_EQ(Json(Get("a")->Find("/status/ping")), R"({"run":1})");
  clock_.Advance(absl::Seconds(1));
  Step();
  EXPECT_EQ(Json(Get("a")->Find("/status/ping")), R"({"run":3})");
  EXPECT_EQ(reasons, std::vector<Reason>(3, Reason::kTimer));
  EXPECT_EQ(ReasonName(Reason::kTimer), "timer");
}

// Polls `pred` (a daemon's thread runs on real time) for up to 10 s.
bool Eventually(const std::function<bool()>& pred) {
  for (int i = 0; i < 1000 && !pred(); ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  return pred();
}

TEST_F(EngineTest, DaemonRunsUntilTheDeletionAndHoldsTheFinalizer) {
  std::atomic<int> started{0}, stopped{0};
  handlers_.OnDaemon("watcher", [&](DaemonContext& ctx) {
    ++started;
    ctx.patch().SetStatus("watcher", "running");
    EXPECT_TRUE(ctx.ApplyPatch().ok());
    while (!ctx.WaitForStop(absl::Hours(1))) {
    }
    ++stopped;
    return Outcome::Success();
  });
  NewEngine();
  std::atomic<int> woken{0};
  engine_->SetEnqueue([&](const controller::Request& r) {
    EXPECT_EQ(r.name, "a");
    ++woken;
  });
  Create("a");
  Step();  // the finalizer first
  EXPECT_TRUE(Get("a")->HasFinalizer("kcr.dev/handlers"));
  EXPECT_EQ(started.load(), 0);
  Step();
  ASSERT_TRUE(Eventually([&] { return started.load() == 1; }));
  ASSERT_TRUE(Eventually([&] {
    return Json(Get("a")->Find("/status/watcher")) == "\"running\"";
  }));
  Step();  // already running: not a second one
  EXPECT_EQ(engine_->RunningDaemons("default/a"), 1);

  ASSERT_TRUE(client_->Delete(Context::Background(), Res(), "a").ok());
  Step();  // asks it to stop; the finalizer stays until it has
  ASSERT_TRUE(Eventually([&] { return woken.load() == 1; }));
  EXPECT_EQ(stopped.load(), 1);
  EXPECT_EQ(started.load(), 1);
  EXPECT_EQ(engine_->RunningDaemons("default/a"), 0);
  Step();
  EXPECT_EQ(Get("a"), nullptr);
}

TEST_F(EngineTest, ADaemonThatIgnoresTheStopIsCancelledAfterItsTimeout) {
  std::atomic<bool> returned{false};
  DaemonOptions options;
  options.cancellation_timeout = absl::Seconds(30);
  handlers_.OnDaemon(
      "stubborn",
      [&](DaemonContext& ctx) {
        WaitUntilDone(ctx.ctx());  // never looks at stopped()
        returned = true;
        return Outcome::Success();
      },
      options);
  NewEngine();
  Create("a");
  Step();
  Step();
  ASSERT_TRUE(client_->Delete(Context::Background(), Res(), "a").ok());
  EXPECT_EQ(Step(), Result::RequeueAfter(absl::Seconds(1)));
  clock_.Advance(absl::Seconds(29));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_FALSE(returned.load());
  EXPECT_NE(Get("a"), nullptr);  // still held
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(Eventually([&] { return returned.load(); }));
  ASSERT_TRUE(
      Eventually([&] { return engine_->RunningDaemons("default/a") == 0; }));
  Step();
  EXPECT_EQ(Get("a"), nullptr);
}

TEST_F(EngineTest, AFailedDaemonIsRestartedAfterItsBackoff) {
  std::atomic<int> calls{0};
  DaemonOptions options;
  options.backoff = absl::Seconds(5);
  options.initial_delay = absl::Seconds(2);
  handlers_.OnDaemon(
      "flaky",
      [&](DaemonContext& ctx) -> Outcome {
        if (++calls == 1) throw std::runtime_error("lost the connection");
        while (!ctx.WaitForStop(absl::Hours(1))) {
        }
        return Outcome::Success();
      },
      options);
  NewEngine();
  Create("a");
  Step();
  Step();
  clock_.BlockUntilWaiters(1);  // the initial delay
  EXPECT_EQ(calls.load(), 0);
  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(Eventually([&] { return calls.load() == 1; }));
  clock_.BlockUntilWaiters(1);  // the backoff
  clock_.Advance(absl::Seconds(5));
  ASSERT_TRUE(Eventually([&] { return calls.load() == 2; }));
  EXPECT_TRUE(Eventually([&] {
    return recorder_->Has("Warning",
                          "Daemon 'flaky' failed and will be "
                          "restarted in 5.0 seconds");
  }));
  // The operator stops: the daemon is asked to, and waited for.
  engine_->StopDaemons();
  EXPECT_EQ(engine_->RunningDaemons("default/a"), 0);
  EXPECT_EQ(calls.load(), 2);
}

TEST_F(EngineTest, ADaemonsRetryCountsItsRestartsAfterFailures) {
  Mutex mu;
  std::vector<int> retries;
  DaemonOptions options;
  options.backoff = absl::Seconds(5);
  handlers_.OnDaemon(
      "flaky",
      [&](DaemonContext& ctx) -> Outcome {
        int n;
        {
          MutexLock lock(&mu);
          retries.push_back(ctx.retry());
          n = static_cast<int>(retries.size());
        }
        if (n == 1) throw std::runtime_error("lost the connection");
        if (n == 2) return Outcome::Temporary("busy", absl::Seconds(2));
        while (!ctx.WaitForStop(absl::Hours(1))) {
        }
        return Outcome::Success();
      },
      options);
  NewEngine();
  Create("a");
  Step();
  Step();
  auto seen = [&] {
    MutexLock lock(&mu);
    return retries;
  };
  clock_.BlockUntilWaiters(1);  // the backoff
  EXPECT_EQ(seen(), std::vector<int>{0});
  clock_.Advance(absl::Seconds(5));
  ASSERT_TRUE(Eventually([&] { return seen().size() == 2; }));
  clock_.BlockUntilWaiters(1);  // the temporary error's delay
  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(Eventually([&] { return seen().size() == 3; }));
  EXPECT_EQ(seen(), (std::vector<int>{0, 1, 2}));
  engine_->StopDaemons();
}

TEST_F(EngineTest, ADaemonsResultGoesUnderItsId) {
  std::atomic<int> calls{0};
  DaemonOptions options;
  options.backoff = absl::Seconds(3);
  handlers_.OnDaemon(
      "once",
      [&](DaemonContext&) -> Outcome {
        if (++calls == 1) throw std::runtime_error("not yet");
        return Outcome::Value(R"({"done":true})");
      },
      options);
  NewEngine();
  Create("a");
  Step();  // the finalizer
  Step();
  clock_.BlockUntilWaiters(1);  // the backoff after the failure
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(Json(Get("a")->Find("/status/once")), "<absent>");
  clock_.Advance(absl::Seconds(3));
  ASSERT_TRUE(Eventually([&] {
    return Json(Get("a")->Find("/status/once")) == R"({"done":true})";
  }));
  ASSERT_TRUE(
      Eventually([&] { return engine_->RunningDaemons("default/a") == 0; }));
  EXPECT_EQ(calls.load(), 2);
}

TEST_F(EngineTest, DuplicateIdsAreRefused) {
  handlers_.OnCreate("fn", [](HandlerContext&) { return Outcome(); });
  handlers_.OnUpdate("fn", [](HandlerContext&) { return Outcome(); });
  EngineOptions options;
  options.client = client_.get();
  options.get = [](const controller::Request&) { return nullptr; };
  auto engine = Engine::New(handlers_, ResourceInfo{kGvr, true, true},
                            std::move(options));
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kcr::handlers::internal
