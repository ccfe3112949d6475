// The simpledeployment controller (the kopf tutorial's first operator, on
// runtime/handlers) as users run it: the real controller-manager against a
// local API server process, driven with kubectl. A SimpleDeployment gets
// its busybox pod, whose uid `kubectl get sd` shows as CHILDREN; the
// simulated node runs the pod for spec.sleepytime seconds (its container's
// startedAt to finishedAt), then it Succeeds; a new sleepytime replaces the
// pod; a delete waits for the delete handler behind the operator's finalizer; a
// manager restarted between create and update does not create again.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/e2e/manager_fixture.h"

namespace kcr::e2e {
namespace {

using apiserver::WaitFor;
using ::testing::HasSubstr;
using ::testing::Not;

// The tutorial's sample, sleeping `sleepytime` seconds.
std::string Sample(const std::string& sleepytime) {
  return absl::StrCat(R"(apiVersion: example.org/v1
kind: SimpleDeployment
metadata:
  name: example-01
  namespace: default
  labels:
    app: simple-app
spec:
  sleepytime: ")",
                      sleepytime, "\"\n");
}

const std::vector<std::string> kSd = {"sd", "example-01"};
constexpr char kChildren[] = "{.status.create_fn.children[*]}";
// The operator's finalizer (OperatorOptions::prefix + "/handlers").
constexpr char kFinalizer[] = "kcr.dev/handlers";
// The label every pod of a SimpleDeployment carries: its owner's uid.
constexpr char kOwnerUidLabel[] = "simpledeployment.example.org/uid";
// The controller the manager runs for the handlers of simpledeployments.
constexpr char kReconciles[] =
    "controller_runtime_reconcile_total{controller=\"simpledeployment-"
    "simpledeployments.example.org\",result=\"success\"}";

// The value of `series` (a metric with its labels) in a /metrics body; 0
// when absent.
double MetricValue(const std::string& metrics, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(metrics, '\n')) {
    if (absl::ConsumePrefix(&line, series) && absl::ConsumePrefix(&line, " ")) {
      double v = 0;
      if (absl::SimpleAtod(line, &v)) return v;
    }
  }
  return 0;
}

class SimpleDeploymentE2eTest : public ManagerFixture {
 protected:
  ManagerProcess* StartSimpleDeploymentManager() {
    ManagerProcess* mgr = StartManager({"--controllers=simpledeployment"});
    EXPECT_TRUE(mgr->started());
    return mgr;
  }

  // Applies the sample and waits for create_fn's child; its uid.
  std::string CreateSample(const std::string& sleepytime) {
    EXPECT_TRUE(Apply(Sample(sleepytime)));
    std::string child;
    EXPECT_TRUE(WaitFor(
        [&] {
          child = Jsonpath(kSd, kChildren).value_or("");
          return !child.empty();
        },
        absl::Seconds(60)))
        << (mgr_ != nullptr ? mgr_->Log() : "");
    return child;
  }

  // The SimpleDeployment's pods: "<name> <uid> <phase>" per pod.
  std::vector<std::string> Pods() {
    const std::string uid = Jsonpath(kSd, "{.metadata.uid}").value_or("none");
    const std::string out =
        Jsonpath({"pods", "-l", absl::StrCat(kOwnerUidLabel, "=", uid)},
                 "{range .items[*]}{.metadata.name} {.metadata.uid} "
                 "{.status.phase}{\"\\n\"}{end}")
            .value_or("");
    return absl::StrSplit(out, '\n', absl::SkipEmpty());
  }

  // How many times an Event about example-01 with `text` in its message
  // was posted (the recorder folds repeats into one Event's count).
  int CountEvents(const std::string& text) {
    const std::string out =
        Jsonpath(
            {"events", "--field-selector", "involvedObject.name=example-01"},
            "{range .items[*]}{.count} {.message}{\"\\n\"}{end}")
            .value_or("");
    int n = 0;
    for (absl::string_view line : absl::StrSplit(out, '\n')) {
      if (!absl::StrContains(line, text)) continue;
      int count = 1;
      if (!absl::SimpleAtoi(line.substr(0, line.find(' ')), &count)) count = 1;
      n += count;
    }
    return n;
  }

  ManagerProcess* mgr_ = nullptr;
};

TEST_F(SimpleDeploymentE2eTest, ThePodRunsItsSleepytimeAndAChangeReplacesIt) {
  ASSERT_NO_FATAL_FAILURE(StartServerWithCrds("sd-lifecycle"));
  mgr_ = StartSimpleDeploymentManager();
  const std::string child = CreateSample("4");
  ASSERT_FALSE(child.empty());

  // kubectl's table has the CHILDREN column, with the pod's uid in it.
  const std::string table = Kubectl({"get", "sd"});
  EXPECT_THAT(table, HasSubstr("CHILDREN"));
  EXPECT_THAT(table, HasSubstr(child));
  EXPECT_THAT(table, HasSubstr("example-01"));

  // One pod, the child, adopted by the SimpleDeployment: Running on the
  // simulated node, then Succeeded after its sleep.
  std::vector<std::string> pods = Pods();
  ASSERT_EQ(pods.size(), 1u) << absl::StrJoin(pods, "\n");
  const std::string pod = pods[0].substr(0, pods[0].find(' '));
  EXPECT_THAT(pods[0], HasSubstr(" " + child + " "));
  EXPECT_EQ(Jsonpath({"pod", pod},
                     "{.metadata.ownerReferences[0].kind}/"
                     "{.metadata.ownerReferences[0].name}/"
                     "{.metadata.ownerReferences[0].controller}"),
            "SimpleDeployment/example-01/true");
  EXPECT_EQ(Jsonpath({"pod", pod}, "{.metadata.labels.app}"), "simple-app");
  EXPECT_THAT(
      Jsonpath({"pod", pod}, "{.spec.containers[0].args[*]}").value_or(""),
      HasSubstr("sleep 4"));
  // Its container ran for the sleep: Running from startedAt, Completed at
  // finishedAt (read from its final state, so a slow poll that never saw
  // it Running does not matter).
  EXPECT_TRUE(WaitForJsonpath({"pod", pod}, "{.status.phase}", "Succeeded"))
      << last_jsonpath_;
  const std::string terminated =
      Jsonpath({"pod", pod},
               "{.status.containerStatuses[0].state.terminated.reason} "
               "{.status.containerStatuses[0].state.terminated.startedAt} "
               "{.status.containerStatuses[0].state.terminated.finishedAt}")
          .value_or("");
  std::vector<std::string> words = absl::StrSplit(terminated, ' ');
  ASSERT_EQ(words.size(), 3u) << terminated;
  EXPECT_EQ(words[0], "Completed");
  absl::Time started, finished;
  std::string error;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, words[1], &started, &error))
      << error;
  ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, words[2], &finished, &error))
      << error;
  // Whole seconds on the wire.
  EXPECT_GE(finished - started, absl::Seconds(3)) << terminated;
  EXPECT_LE(finished - started, absl::Seconds(6)) << terminated;

  // kopf's Event for the handler, and the handler metric.
  EXPECT_TRUE(WaitFor([&] {
    return CountEvents("Handler 'create_fn' succeeded.") == 1;
  })) << Kubectl({"get", "events"});
  EXPECT_TRUE(WaitFor([&] {
    const std::string metrics =
        ManagerProcess::HttpGet(mgr_->MetricsUrl(), "/metrics");
    return MetricValue(metrics,
                       "kcr_handler_runs_total{handler=\"create_fn\","
                       "outcome=\"success\",resource=\"simpledeployments."
                       "example.org\"}") == 1 &&
           MetricValue(metrics, kReconciles) >= 1;
  })) << ManagerProcess::HttpGet(mgr_->MetricsUrl(), "/metrics");

  // A new sleepytime: the old pod goes, a new one comes, and the children
  // follow.
  const int sleepytime_runs =
      mgr_->CountLogLines("Handler 'sleepytime_fn' succeeded.");
  Kubectl({"patch", "sd", "example-01", "--type=merge", "-p",
           R"({"spec":{"sleepytime":"2"}})"});
  std::string renewed;
  EXPECT_TRUE(WaitFor(
      [&] {
        renewed = Jsonpath(kSd, kChildren).value_or("");
        return !renewed.empty() && renewed != child;
      },
      absl::Seconds(60)))
      << renewed << "\n"
      << mgr_->Log();
  EXPECT_TRUE(WaitForGone({"pod", pod}));
  EXPECT_TRUE(WaitFor([&] {
    pods = Pods();
    return pods.size() == 1 && absl::StrContains(pods[0], " " + renewed + " ");
  })) << absl::StrJoin(pods, "\n");
  EXPECT_THAT(Kubectl({"get", "sd"}), HasSubstr(renewed));
  const std::string new_pod =
      pods.empty() ? "" : pods[0].substr(0, pods[0].find(' '));
  EXPECT_THAT(
      Jsonpath({"pod", new_pod}, "{.spec.containers[0].args[*]}").value_or(""),
      HasSubstr("sleep 2"));
  EXPECT_TRUE(WaitForJsonpath({"pod", new_pod}, "{.status.phase}", "Succeeded"))
      << last_jsonpath_;
  EXPECT_EQ(mgr_->CountLogLines("Handler 'sleepytime_fn' succeeded."),
            sleepytime_runs + 1)
      << mgr_->Log();
  // create_fn ran once.
  EXPECT_EQ(CountEvents("Handler 'create_fn' succeeded."), 1);
}

// The operator's finalizer holds a deleted SimpleDeployment until
// delete_fn has run: with no manager running, the object stays, deleted
// but present; a manager started later runs delete_fn and lets it go, and
// the garbage collector takes its pod.
TEST_F(SimpleDeploymentE2eTest, ADeleteWaitsForTheDeleteHandler) {
  ASSERT_NO_FATAL_FAILURE(StartServerWithCrds("sd-delete"));
  mgr_ = StartSimpleDeploymentManager();
  const std::string child = CreateSample("600");
  ASSERT_FALSE(child.empty());
  EXPECT_THAT(Jsonpath(kSd, "{.metadata.finalizers[*]}").value_or(""),
              HasSubstr(kFinalizer));
  std::vector<std::string> pods = Pods();
  ASSERT_EQ(pods.size(), 1u);
  const std::string pod = pods[0].substr(0, pods[0].find(' '));
  ASSERT_EQ(mgr_->Stop(), std::optional<int>(0));

  Kubectl({"delete", "sd", "example-01", "--wait=false"});
  absl::SleepFor(absl::Seconds(2));
  EXPECT_THAT(Jsonpath(kSd, "{.metadata.deletionTimestamp}"),
              ::testing::Optional(Not(::testing::IsEmpty())))
      << "the finalizer did not hold it";
  EXPECT_THAT(Jsonpath({"pod", pod}, "{.metadata.uid}"),
              ::testing::Optional(child));

  ManagerProcess* second = StartSimpleDeploymentManager();
  EXPECT_TRUE(WaitForGone(kSd)) << second->Log();
  EXPECT_EQ(second->CountLogLines("Handler 'delete_fn' succeeded."), 1)
      << second->Log();
  EXPECT_TRUE(WaitForGone({"pod", pod})) << "the garbage collector kept it";
}

// The handlers' progress and the last handled state live on the object:
// a manager restarted between create and update neither creates again
// (the pod and its uid stay) nor misses the update.
TEST_F(SimpleDeploymentE2eTest,
       ARestartBetweenCreateAndUpdateDoesNotCreateAgain) {
  ASSERT_NO_FATAL_FAILURE(StartServerWithCrds("sd-restart"));
  mgr_ = StartSimpleDeploymentManager();
  const std::string child = CreateSample("600");
  ASSERT_FALSE(child.empty());
  EXPECT_EQ(mgr_->CountLogLines("Handler 'create_fn' succeeded."), 1);
  ASSERT_EQ(mgr_->Stop(), std::optional<int>(0));

  ManagerProcess* second = StartSimpleDeploymentManager();
  // Once its worker has looked at the object (its reconcile counted),
  // nothing has changed.
  EXPECT_TRUE(WaitFor(
      [&] {
        return MetricValue(
                   ManagerProcess::HttpGet(second->MetricsUrl(), "/metrics"),
                   kReconciles) >= 1;
      },
      absl::Seconds(60)))
      << ManagerProcess::HttpGet(second->MetricsUrl(), "/metrics");
  absl::SleepFor(absl::Seconds(1));
  EXPECT_EQ(Jsonpath(kSd, kChildren), child);
  std::vector<std::string> pods = Pods();
  ASSERT_EQ(pods.size(), 1u) << absl::StrJoin(pods, "\n");
  EXPECT_THAT(pods[0], HasSubstr(" " + child + " "));

  Kubectl({"patch", "sd", "example-01", "--type=merge", "-p",
           R"({"spec":{"sleepytime":"300"}})"});
  std::string renewed;
  EXPECT_TRUE(WaitFor(
      [&] {
        renewed = Jsonpath(kSd, kChildren).value_or("");
        return !renewed.empty() && renewed != child;
      },
      absl::Seconds(60)))
      << second->Log();
  EXPECT_EQ(second->CountLogLines("Handler 'sleepytime_fn' succeeded."), 1)
      << second->Log();
  EXPECT_EQ(second->CountLogLines("Handler 'create_fn'"), 0) << second->Log();
  EXPECT_EQ(CountEvents("Handler 'create_fn' succeeded."), 1);
}

}  // namespace
}  // namespace kcr::e2e
