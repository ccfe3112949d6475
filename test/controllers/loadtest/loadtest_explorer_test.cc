// The loadtest controller explored (runtime/explorer): crashes after each
// of its writes, API errors on each, stale views of LoadTests and their
// pods, unobserved LoadTest states. Two scenarios, so that each explores
// in well under two minutes: a run to finished and a run with a failing
// pod ("loadtest-end"); a spec change and a delete while runs execute
// ("loadtest-change"). The simulated node's annotations, copied onto the
// pods, make them end after 50 ms or run for an hour.
// Rerun one point with
//   bazel test //test/controllers/loadtest:loadtest_explorer_test
//     --test_env=KCR_EXPLORE=<scenario>:<point>:seed=1
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "api/crd/crd_manifests.h"
#include "api/object.h"
#include "controllers/loadtest/loadtest_controller.h"
#include "glog/logging.h"
#include "gtest/gtest.h"
#include "runtime/explorer/explorer.h"

namespace kcr::loadtest {
namespace {

const client::Resource kPods =
    client::Resource::Namespaced({"", "v1", "pods"}, "default");
const client::Resource kLoadTests =
    client::Resource::Namespaced({"example.org", "v1", "loadtests"}, "default");

// A LoadTest of `replicas` pods whose simulated run lasts `complete_after`
// and ends as `outcome`.
std::string LoadTestJson(const std::string& name, int replicas,
                         const std::string& complete_after,
                         const std::string& outcome = "Succeeded") {
  return absl::StrCat(
      R"({"apiVersion":"example.org/v1","kind":"LoadTest","metadata":{)",
      R"("name":")", name, R"(","namespace":"default","annotations":{)",
      R"("kcr.io/sim-complete-after":")", complete_after, R"(",)",
      R"("kcr.io/sim-outcome":")", outcome, R"("}},)", R"("spec":{"replicas":)",
      replicas,
      R"(,"test":{"serviceName":"svc","servicePort":8080,"path":"/",)",
      R"("repeat":1,"method":"GET"}}})");
}

// Never more pods of a LoadTest's current run than it asks for.
absl::Status AtMostReplicasPods(const Context& ctx,
                                client::RestClient& client) {
  auto tests = client.List(ctx, kLoadTests);
  if (!tests.ok()) return tests.status();
  auto pods = client.List(ctx, kPods);
  if (!pods.ok()) return pods.status();
  for (const api::ObjectPtr& t : tests->items) {
    const rapidjson::Value* replicas = t->Find("/spec/replicas");
    if (replicas == nullptr || !replicas->IsInt64()) continue;
    const std::string generation = absl::StrCat(t->generation());
    int64_t n = 0;
    for (const api::ObjectPtr& p : pods->items) {
      if (p->Label(kLoadTestLabel) == t->name() &&
          p->Label(kGenerationLabel) == generation) {
        ++n;
      }
    }
    if (n > replicas->GetInt64()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "LoadTest ", std::string(t->name()), " generation ", generation,
          " has ", n, " pods for ", replicas->GetInt64(), " replicas"));
    }
  }
  return absl::OkStatus();
}

explorer::Scenario Base(const std::string& name) {
  explorer::Scenario s;
  s.name = name;
  s.crds = {{"loadtest-crd.yaml", api::crd::kLoadTestCrdYaml}};
  s.add_controllers = [](controller::Manager* mgr) {
    LoadTestOptions options;
    options.image = "example.com/kcr:test";
    options.retry_wait = absl::Milliseconds(200);
    return AddLoadTestController(*mgr, options);
  };
  s.invariants = {{"at most spec.replicas pods per run", AtMostReplicasPods}};
  s.state = {explorer::Collection(kLoadTests),
             explorer::Collection(kPods, kLoadTestLabel)};
  // What the server makes differently on each start (the service account
  // volume's generated name, container IDs, pod IPs); the LoadTest's
  // status holds what the controller read from the containers' states.
  s.ignored_fields = {"/spec/volumes", "/spec/containers/0/volumeMounts",
                      "/status/containerStatuses", "/status/podIP",
                      "/status/podIPs"};
  return s;
}

explorer::Scenario EndScenario() {
  explorer::Scenario s = Base("loadtest-end");
  s.steps = {
      explorer::Step::Create(kLoadTests, LoadTestJson("done", 2, "50ms")),
      explorer::Step::Create(kLoadTests,
                             LoadTestJson("bad", 1, "50ms", "Failed")),
  };
  return s;
}

explorer::Scenario ChangeScenario() {
  explorer::Scenario s = Base("loadtest-change");
  s.steps = {
      explorer::Step::Create(kLoadTests, LoadTestJson("long", 1, "1h")),
      // A new run: the running pod goes, two short ones come.
      explorer::Step::Patch(
          kLoadTests, "long",
          R"({"metadata":{"annotations":{"kcr.io/sim-complete-after":"50ms"}},
              "spec":{"replicas":2}})"),
      explorer::Step::Create(kLoadTests, LoadTestJson("cut", 1, "1h")),
      explorer::Step::Delete(kLoadTests, "cut"),
  };
  return s;
}

void ExpectNoFindings(const explorer::Scenario& scenario) {
  explorer::ExplorerOptions options;
  // The runs mostly wait for quiet: more of them at once than cores.
  options.parallelism = 4;
  auto report = explorer::Explore(scenario, options);
  ASSERT_TRUE(report.ok()) << report.status();
  if (report->skipped) return;
  EXPECT_GT(report->runs.size(), 1u);
  EXPECT_TRUE(report->ok()) << report->ToString();
  LOG(INFO) << report->ToString();
}

TEST(LoadTestExplorerTest, RunToFinishedAndFailingPod) {
  ExpectNoFindings(EndScenario());
}

TEST(LoadTestExplorerTest, SpecChangeAndDeleteMidRun) {
  ExpectNoFindings(ChangeScenario());
}

// A run of two pods cut to one before the controller saw it: with the
// LoadTests' events held back from the create until after the spec change,
// the controller read replicas 2 from its cache while the finalizer's
// write returned generation 2, and started generation 2 with two pods.
TEST(LoadTestExplorerTest, SpecShrunkBeforeSeenStartsOneRunOfTheNewSpec) {
  explorer::Scenario s = Base("loadtest-shrink");
  s.steps = {
      explorer::Step::Create(kLoadTests, LoadTestJson("long", 2, "1h")),
      explorer::Step::Patch(kLoadTests, "long", R"({"spec":{"replicas":1}})"),
  };
  explorer::ExplorerOptions options;
  options.only = "stale-view:loadtests.example.org:step:1";
  options.read_env = false;
  auto report = explorer::Explore(s, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->runs.size(), 2u);
  EXPECT_TRUE(report->runs[1].fired);
  EXPECT_TRUE(report->ok()) << report->ToString();
}

}  // namespace
}  // namespace kcr::loadtest
