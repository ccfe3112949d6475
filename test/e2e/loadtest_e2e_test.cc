// The loadtest controller as users run it: a LoadTest applied with kubectl
// to a local API server process goes pending -> executing -> finished with
// the pods' summaries (set through the kcr.io/sim-* annotations the
// simulated node reads) aggregated in status.result; a failing pod fails
// the run; a spec change restarts it; a delete removes the pods, then the
// LoadTest.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/e2e/manager_fixture.h"

namespace kcr::e2e {
namespace {

using ::testing::HasSubstr;

constexpr char kSummary[] =
    R"({"requests":50,"failures":0,"p50Ms":2.000,"p90Ms":5.000,"p99Ms":8.000})";

// A LoadTest with the simulated node's annotations for its pods.
std::string LoadTestYaml(const std::string& name, const std::string& port,
                         int replicas, int repeat,
                         const std::string& annotations) {
  return absl::StrCat(R"(apiVersion: example.org/v1
kind: LoadTest
metadata:
  name: )",
                      name, R"(
  namespace: default
  annotations:
)",
                      annotations, R"(
spec:
  replicas: )",
                      replicas, R"(
  test:
    method: GET
    serviceName: web
    servicePort: )",
                      port, R"(
    path: /healthz
    repeat: )",
                      repeat, "\n");
}

class LoadTestE2eTest : public ManagerFixture {
 protected:
  void StartAll() {
    ASSERT_NO_FATAL_FAILURE(StartServerWithCrds("loadtest"));
    mgr_ = StartManager(
        {"--controllers=loadtest", "--loadtest-image=example.com/kcr:e2e"});
    ASSERT_TRUE(mgr_->started());
  }

  // `kubectl get pods -l kcr.io/loadtest=<name>`: the names, sorted by
  // kubectl, space-separated.
  std::string PodNames(const std::string& name) {
    return Jsonpath({"pods", "-l", "kcr.io/loadtest=" + name},
                    "{.items[*].metadata.name}")
        .value_or("(error)");
  }

  ManagerProcess* mgr_ = nullptr;
};

TEST_F(LoadTestE2eTest, PendingExecutingFinishedWithTheResult) {
  ASSERT_NO_FATAL_FAILURE(StartAll());
  // A named port of a Service that does not exist yet keeps it pending.
  // The pods run for 6 s, long enough to see the run executing on a
  // loaded machine.
  ASSERT_TRUE(
      Apply(LoadTestYaml("hello", "http", 2, 50,
                         absl::StrCat("    kcr.io/sim-complete-after: 6s\n"
                                      "    kcr.io/sim-message: '",
                                      kSummary, "'"))));
  EXPECT_TRUE(
      WaitForJsonpath({"loadtest", "hello"}, "{.status.state}", "pending"))
      << last_jsonpath_ << mgr_->Log();
  EXPECT_TRUE(WaitForJsonpath(
      {"loadtest", "hello"}, "{.status.message}",
      "waiting for service web to resolve port \"http\": service not found"))
      << last_jsonpath_;
  EXPECT_EQ(PodNames("hello"), "");

  ASSERT_TRUE(Apply(R"(apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 8080
)"));
  EXPECT_TRUE(
      WaitForJsonpath({"loadtest", "hello"}, "{.status.state}", "executing"))
      << last_jsonpath_ << mgr_->Log();
  EXPECT_TRUE(WaitForJsonpath({"loadtest", "hello"}, "{.status.children}",
                              R"(["hello-r1-0","hello-r1-1"])"))
      << last_jsonpath_;
  // The printer columns.
  const std::string table = Kubectl({"get", "loadtests"});
  EXPECT_THAT(table, HasSubstr("STATE"));
  EXPECT_THAT(table, HasSubstr("CHILDREN"));
  // The pods as the runner needs them.
  EXPECT_EQ(Jsonpath({"pod", "hello-r1-0"},
                     "{.spec.containers[0].image} {.spec.restartPolicy} "
                     "{.spec.containers[0].command[0]} "
                     "{.spec.containers[0].args}"),
            "example.com/kcr:e2e Never /usr/local/bin/loadtest-runner "
            R"(["--method=GET","--service-name=web","--service-port=8080",)"
            R"("--path=/healthz","--repeat=50"])");
  EXPECT_EQ(Jsonpath({"pod", "hello-r1-0"},
                     "{.metadata.ownerReferences[0].kind} "
                     "{.metadata.ownerReferences[0].controller}"),
            "LoadTest true");

  EXPECT_TRUE(
      WaitForJsonpath({"loadtest", "hello"}, "{.status.state}", "finished"))
      << last_jsonpath_ << mgr_->Log();
  EXPECT_EQ(Jsonpath({"loadtest", "hello"},
                     "{.status.result.requests} {.status.result.failures} "
                     "{.status.result.latencyMs.p99} "
                     "{.status.result.pods[*].pod}"),
            "100 0 8 hello-r1-0 hello-r1-1");
  EXPECT_EQ(Jsonpath({"loadtest", "hello"}, "{.status.message}"),
            "2 pods succeeded: 100 requests, 0 failed");
  EXPECT_THAT(Kubectl({"get", "events"}), HasSubstr("Finished"));
}

TEST_F(LoadTestE2eTest, AFailingPodFailsTheRun) {
  ASSERT_NO_FATAL_FAILURE(StartAll());
  ASSERT_TRUE(Apply(
      LoadTestYaml("broken", "80", 1, 10,
                   "    kcr.io/sim-outcome: Failed\n"
                   "    kcr.io/sim-exit-code: \"1\"\n"
                   "    kcr.io/sim-message: "
                   "'{\"requests\":10,\"failures\":10,\"p50Ms\":1,\"p90Ms\":1,"
                   "\"p99Ms\":1}'")));
  EXPECT_TRUE(
      WaitForJsonpath({"loadtest", "broken"}, "{.status.state}", "failed"))
      << last_jsonpath_ << mgr_->Log();
  EXPECT_EQ(Jsonpath({"loadtest", "broken"}, "{.status.message}"),
            "pod broken-r1-0 failed (Error, exit code 1): 10 of 10 requests "
            "failed");
  EXPECT_EQ(Jsonpath({"loadtest", "broken"}, "{.status.result.failures}"),
            "10");
}

TEST_F(LoadTestE2eTest, AnUpdateRestartsTheRunAndADeleteRemovesThePods) {
  ASSERT_NO_FATAL_FAILURE(StartAll());
  // The first run never ends by itself.
  ASSERT_TRUE(Apply(
      LoadTestYaml("again", "80", 2, 5, "    kcr.io/sim-complete-after: 1h")));
  EXPECT_TRUE(
      WaitForJsonpath({"loadtest", "again"}, "{.status.state}", "executing"))
      << last_jsonpath_ << mgr_->Log();
  EXPECT_TRUE(WaitForJsonpath({"pods", "-l", "kcr.io/loadtest=again"},
                              "{.items[*].status.phase}", "Running Running"))
      << last_jsonpath_;

  Kubectl({"patch", "loadtest", "again", "--type=merge", "-p",
           R"({"metadata":{"annotations":{"kcr.io/sim-complete-after":"1s"}},)"
           R"("spec":{"test":{"repeat":7}}})"});
  EXPECT_TRUE(WaitForJsonpath({"loadtest", "again"},
                              "{.status.observedGeneration}", "2"))
      << last_jsonpath_ << mgr_->Log();
  // The old pods go; the new run's are labelled with its generation.
  EXPECT_TRUE(WaitForJsonpath({"pods", "-l", "kcr.io/loadtest=again"},
                              "{.items[*].metadata.name}",
                              "again-r2-0 again-r2-1"))
      << last_jsonpath_;
  EXPECT_EQ(Jsonpath({"pod", "again-r2-0"},
                     "{.metadata.labels.kcr\\.io/loadtest-generation} "
                     "{.spec.containers[0].args[4]}"),
            "2 --repeat=7");
  EXPECT_TRUE(
      WaitForJsonpath({"loadtest", "again"}, "{.status.state}", "finished"))
      << last_jsonpath_ << mgr_->Log();

  Kubectl({"delete", "loadtest", "again", "--wait=false"});
  EXPECT_TRUE(WaitForGone({"loadtest", "again"})) << mgr_->Log();
  EXPECT_EQ(PodNames("again"), "");
  EXPECT_EQ(mgr_->CountLogLines("pods gone, finalizer removed"), 1)
      << mgr_->Log();
}

}  // namespace
}  // namespace kcr::e2e
