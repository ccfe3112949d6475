// The loadtest controller against the in-process local API server with its
// simulated node and garbage collector: a LoadTest's pods as the runner
// needs them, the run through pending, executing and finished or failed,
// the result from the pods' termination messages, a spec change that
// starts a new run, a named port, and a delete that waits for the pods.
#include "controllers/loadtest/loadtest_controller.h"

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/crd/crd_manifests.h"
#include "api/errors/errors.h"
#include "api/json/yaml_to_json.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "base/context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "runtime/client/options.h"
#include "runtime/controller/manager.h"
#include "test/controllers/manager_test_fixture.h"
#include "test/integration/process_util.h"

namespace kcr::loadtest {
namespace {

using apiserver::WaitFor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Context kBg = Context::Background();
// Generous: a loaded machine.
constexpr absl::Duration kWait = absl::Seconds(60);
const client::Resource kPods =
    client::Resource::Namespaced({"", "v1", "pods"}, "default");
const client::Resource kServices =
    client::Resource::Namespaced({"", "v1", "services"}, "default");
const client::Resource kLoadTests =
    client::Resource::Namespaced({"example.org", "v1", "loadtests"}, "default");

constexpr char kSummary[] =
    R"({"requests":10,"failures":0,"p50Ms":1.000,"p90Ms":2.000,"p99Ms":4.000})";

std::string Str(const api::Object& o, std::string_view pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  if (v == nullptr) return "";
  if (v->IsString()) return v->GetString();
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  v->Accept(writer);
  return out.GetString();
}

class LoadTestControllerTest : public testing::ManagerTestFixture {
 protected:
  void SetUp() override { Start(/*simulate_node=*/true); }

  void Start(bool simulate_node) {
    apiserver::ApiServerOptions options;
    options.controllers.node_simulator = simulate_node;
    options.controllers.node.running_after = absl::Milliseconds(100);
    options.controllers.node.complete_after = absl::Milliseconds(300);
    StartServer(std::move(options));
    if (HasFatalFailure()) return;
    ASSERT_NO_FATAL_FAILURE(InstallCrd(api::crd::kLoadTestCrdYaml));
    ASSERT_NO_FATAL_FAILURE(StartManager([](controller::Manager& mgr) {
      LoadTestOptions lt_options;
      lt_options.image = "example.com/kcr:test";
      lt_options.retry_wait = absl::Milliseconds(200);
      return AddLoadTestController(mgr, lt_options);
    }));
  }

  void CreateLoadTest(const std::string& name, const std::string& spec,
                      const std::vector<std::pair<std::string, std::string>>&
                          annotations = {}) {
    api::ObjectBuilder b("example.org/v1", "LoadTest");
    b.SetNamespace("default").SetName(name);
    for (const auto& [k, v] : annotations) b.SetAnnotation(k, v);
    ASSERT_TRUE(b.SetJson("/spec", spec).ok());
    auto created = client_->Create(kBg, kLoadTests, *b.Build().value());
    ASSERT_TRUE(created.ok()) << created.status();
  }

  api::ObjectPtr Get(const client::Resource& r, const std::string& name) {
    auto got = client_->Get(kBg, r, name);
    return got.ok() ? *got : nullptr;
  }

  // Polls until `pred` holds of the LoadTest (generous: a loaded machine).
  api::ObjectPtr WaitForLoadTest(
      const std::string& name,
      const std::function<bool(const api::Object&)>& pred) {
    api::ObjectPtr last;
    if (WaitFor(
            [&] {
              last = Get(kLoadTests, name);
              return last != nullptr && pred(*last);
            },
            kWait)) {
      return last;
    }
    ADD_FAILURE() << "loadtest " << name
                  << " last seen: " << (last ? last->ToJson() : "(none)");
    return nullptr;
  }

  std::vector<api::ObjectPtr> PodsOf(const std::string& name) {
    client::ListOptions list;
    list.label_selector = absl::StrCat(kLoadTestLabel, "=", name);
    auto pods = client_->List(kBg, kPods, list);
    EXPECT_TRUE(pods.ok()) << pods.status();
    return pods.ok() ? pods->items : std::vector<api::ObjectPtr>{};
  }
};

auto StateIs(const std::string& state) {
  return [state](const api::Object& o) {
    return Str(o, "/status/state") == state;
  };
}

TEST_F(LoadTestControllerTest, RunsPodsToFinishedAndAggregates) {
  ASSERT_NO_FATAL_FAILURE(CreateLoadTest(
      "web",
      R"({"replicas":2,"test":{"serviceName":"svc","servicePort":8080,
                     "path":"/ping","repeat":10,"method":"POST"}})",
      {{"kcr.io/sim-message", kSummary},
       {"kcr.io/sim-complete-after", "1s"},
       {"other.io/kept-off", "x"}}));
  api::ObjectPtr executing = WaitForLoadTest("web", StateIs("executing"));
  ASSERT_NE(executing, nullptr);
  EXPECT_EQ(Str(*executing, "/status/children"), R"(["web-r1-0","web-r1-1"])");
  EXPECT_EQ(Str(*executing, "/status/observedGeneration"), "1");
  EXPECT_THAT(executing->finalizers(), ElementsAre(kFinalizer));

  api::ObjectPtr pod = Get(kPods, "web-r1-0");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->Label(kLoadTestLabel), "web");
  EXPECT_EQ(pod->Label(kGenerationLabel), "1");
  EXPECT_EQ(pod->Annotation("kcr.io/sim-message"), kSummary);
  EXPECT_FALSE(pod->Annotation("other.io/kept-off").has_value());
  auto owner = pod->controller_reference();
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->uid, executing->uid());
  EXPECT_EQ(owner->kind, "LoadTest");
  EXPECT_EQ(Str(*pod, "/spec/restartPolicy"), "Never");
  EXPECT_EQ(Str(*pod, "/spec/automountServiceAccountToken"), "false");
  EXPECT_EQ(
      Str(*pod, "/spec/securityContext"),
      R"({"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}})");
  EXPECT_EQ(
      Str(*pod, "/spec/containers/0/securityContext"),
      R"({"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,)"
      R"("capabilities":{"drop":["ALL"]}})");
  EXPECT_EQ(Str(*pod, "/spec/containers/0/image"), "example.com/kcr:test");
  EXPECT_EQ(Str(*pod, "/spec/containers/0/command"),
            R"(["/usr/local/bin/loadtest-runner"])");
  EXPECT_EQ(Str(*pod, "/spec/containers/0/args"),
            R"(["--method=POST","--service-name=svc","--service-port=8080",)"
            R"("--path=/ping","--repeat=10"])");

  api::ObjectPtr done = WaitForLoadTest("web", StateIs("finished"));
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(Str(*done, "/status/result/requests"), "20");
  EXPECT_EQ(Str(*done, "/status/result/failures"), "0");
  EXPECT_EQ(Str(*done, "/status/result/latencyMs"),
            R"({"p50":1.0,"p90":2.0,"p99":4.0})");
  EXPECT_EQ(Str(*done, "/status/result/pods/1/pod"), "web-r1-1");
  EXPECT_EQ(Str(*done, "/status/message"),
            "2 pods succeeded: 20 requests, 0 failed");
}

TEST_F(LoadTestControllerTest, AFailedPodFailsTheRun) {
  ASSERT_NO_FATAL_FAILURE(CreateLoadTest(
      "bad", R"({"replicas":1,"test":{"serviceName":"svc","repeat":4}})",
      {{"kcr.io/sim-outcome", "Failed"},
       {"kcr.io/sim-exit-code", "1"},
       {"kcr.io/sim-message",
        R"({"requests":4,"failures":3,"p50Ms":1,"p90Ms":1,"p99Ms":1})"}}));
  api::ObjectPtr failed = WaitForLoadTest("bad", StateIs("failed"));
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(Str(*failed, "/status/message"),
            "pod bad-r1-0 failed (Error, exit code 1): 3 of 4 requests failed");
  EXPECT_EQ(Str(*failed, "/status/result/failures"), "3");
  // The default port and path reach the runner.
  api::ObjectPtr pod = Get(kPods, "bad-r1-0");
  ASSERT_NE(pod, nullptr);
  EXPECT_THAT(Str(*pod, "/spec/containers/0/args"),
              HasSubstr(R"("--service-port=80","--path=/")"));
}

TEST_F(LoadTestControllerTest, PodsWithoutSummaryAreReported) {
  ASSERT_NO_FATAL_FAILURE(CreateLoadTest(
      "quiet", R"({"replicas":2,"test":{"serviceName":"svc"}})"));
  api::ObjectPtr done = WaitForLoadTest("quiet", StateIs("finished"));
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(Str(*done, "/status/message"),
            "2 pods succeeded; 2 of 2 pods left no "
            "summary (quiet-r1-0, quiet-r1-1), not counted");
  EXPECT_EQ(Str(*done, "/status/result"),
            R"({"pods":[{"pod":"quiet-r1-0"},{"pod":"quiet-r1-1"}]})");
}

TEST_F(LoadTestControllerTest, ASpecChangeStartsANewRun) {
  ASSERT_NO_FATAL_FAILURE(
      CreateLoadTest("again", R"({"replicas":2,"test":{"serviceName":"svc"}})",
                     {{"kcr.io/sim-complete-after", "1h"}}));
  ASSERT_NE(WaitForLoadTest("again", StateIs("executing")), nullptr);
  auto patched =
      client_->Patch(kBg, kLoadTests, "again", client::PatchType::kMerge,
                     R"({"spec":{"replicas":1}})");
  ASSERT_TRUE(patched.ok()) << patched.status();
  api::ObjectPtr second = WaitForLoadTest("again", [](const api::Object& o) {
    return Str(o, "/status/observedGeneration") == "2" &&
           Str(o, "/status/state") == "executing";
  });
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(Str(*second, "/status/children"), R"(["again-r2-0"])");
  std::vector<std::string> names;
  WaitFor(
      [&] {
        names.clear();
        for (const api::ObjectPtr& p : PodsOf("again")) {
          if (!p->being_deleted()) names.emplace_back(p->name());
        }
        return names == std::vector<std::string>{"again-r2-0"};
      },
      kWait);
  EXPECT_THAT(names, ElementsAre("again-r2-0"));
}

TEST_F(LoadTestControllerTest, ANamedPortWaitsForItsService) {
  ASSERT_NO_FATAL_FAILURE(CreateLoadTest(
      "named",
      R"({"replicas":1,"test":{"serviceName":"web","servicePort":"http"}})"));
  api::ObjectPtr waiting = WaitForLoadTest("named", [](const api::Object& o) {
    return Str(o, "/status/state") == "pending" &&
           !Str(o, "/status/message").empty();
  });
  ASSERT_NE(waiting, nullptr);
  EXPECT_EQ(Str(*waiting, "/status/message"),
            "waiting for service web to resolve port \"http\": service not "
            "found");
  EXPECT_TRUE(PodsOf("named").empty());

  api::ObjectBuilder svc("v1", "Service");
  svc.SetNamespace("default").SetName("web");
  ASSERT_TRUE(svc.SetJson("/spec", R"({"selector":{"app":"web"},"ports":[
      {"name":"metrics","port":9090},{"name":"http","port":8080}]})")
                  .ok());
  auto created = client_->Create(kBg, kServices, *svc.Build().value());
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_NE(WaitForLoadTest("named", StateIs("finished")), nullptr);
  api::ObjectPtr pod = Get(kPods, "named-r1-0");
  ASSERT_NE(pod, nullptr);
  EXPECT_THAT(Str(*pod, "/spec/containers/0/args"),
              HasSubstr("\"--service-port=8080\""));
}

TEST_F(LoadTestControllerTest, DeleteWaitsForThePods) {
  ASSERT_NO_FATAL_FAILURE(
      CreateLoadTest("gone", R"({"replicas":2,"test":{"serviceName":"svc"}})",
                     {{"kcr.io/sim-complete-after", "1h"}}));
  ASSERT_NE(WaitForLoadTest("gone", StateIs("executing")), nullptr);
  ASSERT_TRUE(client_->Delete(kBg, kLoadTests, "gone").ok());
  WaitFor([&] { return Get(kLoadTests, "gone") == nullptr; }, kWait);
  EXPECT_EQ(Get(kLoadTests, "gone"), nullptr);
  // The finalizer held the LoadTest until its pods were gone.
  EXPECT_TRUE(PodsOf("gone").empty());
}

// A name longer than a label value: the label is cut, the pods still
// belong to the LoadTest (their controller reference), the run ends.
TEST_F(LoadTestControllerTest, ALongNameIsCutInTheLabel) {
  const std::string name = std::string(70, 'a');
  ASSERT_NO_FATAL_FAILURE(
      CreateLoadTest(name, R"({"replicas":1,"test":{"serviceName":"svc"}})"));
  api::ObjectPtr done = WaitForLoadTest(name, StateIs("finished"));
  ASSERT_NE(done, nullptr);
  api::ObjectPtr pod = Get(kPods, name + "-r1-0");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->Label(kLoadTestLabel), std::string(63, 'a'));
  ASSERT_TRUE(client_->Delete(kBg, kLoadTests, name).ok());
  WaitFor([&] { return Get(kLoadTests, name) == nullptr; }, kWait);
  EXPECT_EQ(Get(kLoadTests, name), nullptr);
  EXPECT_EQ(Get(kPods, name + "-r1-0"), nullptr);
}

// Pods whose status the test writes (no simulated node), to end them
// differently and to hold one in a waiting state.
class LoadTestPodStatusTest : public LoadTestControllerTest {
 protected:
  void SetUp() override { Start(/*simulate_node=*/false); }

  void SetPodStatus(const std::string& name, const std::string& status) {
    api::ObjectPtr pod = Get(kPods, name);
    ASSERT_NE(pod, nullptr) << name;
    api::ObjectBuilder b = pod->ToBuilder();
    ASSERT_TRUE(b.SetJson("/status", status).ok());
    auto updated = client_->UpdateStatus(kBg, kPods, *b.Build().value());
    ASSERT_TRUE(updated.ok()) << updated.status();
  }

  static std::string Terminated(const std::string& phase, int exit_code,
                                const std::string& message) {
    return absl::StrCat(
        R"({"phase":")", phase,
        R"(","containerStatuses":[{"name":"loadtest-runner","image":"i",)",
        R"("ready":false,"restartCount":0,"state":{"terminated":{"exitCode":)",
        exit_code, R"(,"reason":")", exit_code == 0 ? "Completed" : "Error",
        R"(","message":)", message, "}}}]}");
  }
};

TEST_F(LoadTestPodStatusTest, OneFailedPodFailsTheRunWithWhatEndedSoFar) {
  ASSERT_NO_FATAL_FAILURE(CreateLoadTest(
      "mixed", R"({"replicas":3,"test":{"serviceName":"svc"}})"));
  ASSERT_NE(WaitForLoadTest("mixed", StateIs("executing")), nullptr);
  ASSERT_NO_FATAL_FAILURE(
      SetPodStatus("mixed-r1-0",
                   Terminated("Succeeded", 0,
                              R"("{\"requests\":10,\"failures\":0,\"p50Ms\":1,)"
                              R"(\"p90Ms\":2,\"p99Ms\":3}")")));
  // While the run goes on, the result holds the pods that ended.
  api::ObjectPtr partial = WaitForLoadTest("mixed", [](const api::Object& o) {
    return Str(o, "/status/result/requests") == "10";
  });
  ASSERT_NE(partial, nullptr);
  EXPECT_EQ(Str(*partial, "/status/state"), "executing");

  ASSERT_NO_FATAL_FAILURE(SetPodStatus(
      "mixed-r1-2", Terminated("Failed", 2, R"("cannot resolve svc")")));
  api::ObjectPtr failed = WaitForLoadTest("mixed", StateIs("failed"));
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(Str(*failed, "/status/message"),
            "pod mixed-r1-2 failed (Error, exit code 2): cannot resolve svc");
  EXPECT_EQ(Str(*failed, "/status/result/requests"), "10");
  EXPECT_EQ(Str(*failed, "/status/result/pods"),
            R"([{"pod":"mixed-r1-0","requests":10,"failures":0,)"
            R"("latencyMs":{"p50":1.0,"p90":2.0,"p99":3.0}},)"
            R"({"pod":"mixed-r1-2"}])");

  // An ended run stays as it is when its last pod ends.
  ASSERT_NO_FATAL_FAILURE(
      SetPodStatus("mixed-r1-1", Terminated("Succeeded", 0, R"("")")));
  // The positive signal that the controller has seen that pod event: it
  // has processed a later pod event. Its one worker takes keys in the order
  // the pod informer delivers their events, so once a LoadTest started
  // after this point has finished, "mixed" was reconciled with its last
  // pod ended.
  ASSERT_NO_FATAL_FAILURE(CreateLoadTest(
      "later", R"({"replicas":1,"test":{"serviceName":"svc"}})"));
  ASSERT_NE(WaitForLoadTest("later", StateIs("executing")), nullptr);
  ASSERT_NO_FATAL_FAILURE(
      SetPodStatus("later-r1-0", Terminated("Succeeded", 0, R"("")")));
  ASSERT_NE(WaitForLoadTest("later", StateIs("finished")), nullptr);
  api::ObjectPtr after = Get(kLoadTests, "mixed");
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(Str(*after, "/status/state"), "failed");
  EXPECT_EQ(Str(*after, "/status/result/requests"), "10");
  EXPECT_EQ(Str(*after, "/status"), Str(*failed, "/status"));
}

TEST_F(LoadTestPodStatusTest, APodThatCannotStartIsReported) {
  ASSERT_NO_FATAL_FAILURE(CreateLoadTest(
      "stuck", R"({"replicas":1,"test":{"serviceName":"svc"}})"));
  ASSERT_NE(WaitForLoadTest("stuck", StateIs("executing")), nullptr);
  ASSERT_NO_FATAL_FAILURE(SetPodStatus(
      "stuck-r1-0",
      R"({"phase":"Pending","containerStatuses":[{"name":"loadtest-runner",
          "image":"i","ready":false,"restartCount":0,"state":{"waiting":{
          "reason":"ImagePullBackOff",
          "message":"Back-off pulling image \"example.com/kcr:test\""}}}]})"));
  api::ObjectPtr waiting = WaitForLoadTest("stuck", [](const api::Object& o) {
    return !Str(o, "/status/message").empty();
  });
  ASSERT_NE(waiting, nullptr);
  EXPECT_EQ(Str(*waiting, "/status/state"), "executing");
  EXPECT_EQ(Str(*waiting, "/status/message"),
            "pod stuck-r1-0 is waiting: ImagePullBackOff: Back-off pulling "
            "image \"example.com/kcr:test\"");
}

}  // namespace
}  // namespace kcr::loadtest
