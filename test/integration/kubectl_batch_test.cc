// kubectl's Job and CronJob workflows against cmd/local-apiserver: the job
// controller runs Jobs on the simulated node to Complete or Failed,
// `kubectl wait --for=condition=complete|failed` returns, `kubectl get
// jobs` shows kube's columns, and `kubectl create job --from=cronjob/x`
// makes a Job that runs. Runs the real /usr/bin/kubectl.
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_harness.h"
#include "test/integration/kubectl_server_fixture.h"

namespace kcr {
namespace integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kManifest[] = R"(apiVersion: batch/v1
kind: Job
metadata: {name: sleepy}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: busybox, command: [sh, -c, "sleep 1"]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: broken}
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations: {kcr.io/sim-outcome: Failed, kcr.io/sim-complete-after: 500ms}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - {name: c, image: busybox, command: [sh, -c, "sleep 1"]}
)";

class KubectlBatchTest : public KubectlServerFixture {
 protected:
  void SetUp() override {
    StartServer("kubectl-batch", {"--sim_running_after_ms=100"});
  }

  std::string Ok(const std::vector<std::string>& args,
                 const std::string& stdin_text = "") {
    KubectlResult r = kubectl_->Run(args, stdin_text, absl::Seconds(60));
    EXPECT_EQ(r.exit_code, 0) << "kubectl " << absl::StrJoin(args, " ")
                              << " failed: " << r.err << r.out;
    return r.out;
  }
};

// A CronJob on the real clock (`@every 2s`) and a Job deleted as soon as
// it finishes (ttlSecondsAfterFinished: 0).
constexpr char kTickerManifest[] = R"(apiVersion: batch/v1
kind: CronJob
metadata: {name: ticker}
spec:
  schedule: "@every 2s"
  concurrencyPolicy: Forbid
  jobTemplate:
    metadata: {labels: {from: ticker}}
    spec:
      template:
        metadata:
          annotations: {kcr.io/sim-complete-after: 1h}
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: brief}
spec:
  ttlSecondsAfterFinished: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: busybox, command: [sh, -c, "sleep 1"]}
)";

TEST_F(KubectlBatchTest, CronJobFiresOnTheClockAndTtlDeletesAFinishedJob) {
  EXPECT_THAT(Ok({"create", "-f", "-"}, kTickerManifest),
              HasSubstr("cronjob.batch/ticker created"));
  Ok({"wait", "--for=delete", "job/brief", "--timeout=40s"});
  EXPECT_EQ(kubectl_->Run({"get", "job", "brief"}).exit_code, 1);
  // The first Job runs for an hour: Forbid keeps it the only one (Jobs
  // are named by the scheduled minute, so within a minute a later time is
  // taken as started already, as kube does).
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::string jobs;
  while (absl::Now() < deadline) {
    jobs = Ok({"get", "jobs", "-l", "from=ticker", "-o",
               "jsonpath={.items[*].metadata.name}"});
    if (!jobs.empty()) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_THAT(jobs, testing::MatchesRegex("ticker-[0-9]+"));
  absl::SleepFor(absl::Seconds(3));
  EXPECT_EQ(Ok({"get", "jobs", "-l", "from=ticker", "-o",
                "jsonpath={.items[*].metadata.name}"}),
            jobs);
  std::vector<std::vector<std::string>> rows =
      KubectlHarness::Columns(Ok({"get", "cronjobs"}));
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_GE(rows[1].size(), 6u);
  EXPECT_THAT(std::vector<std::string>(rows[1].begin(), rows[1].begin() + 5),
              ElementsAre("ticker", "@every 2s", "<none>", "False", "1"));
  EXPECT_THAT(rows[1][5], testing::MatchesRegex("[0-9]+s"));
}

TEST_F(KubectlBatchTest, JobsCompleteOrFailAndCronJobsInstantiate) {
  EXPECT_THAT(Ok({"create", "-f", "-"}, kManifest),
              HasSubstr("job.batch/sleepy created"));
  EXPECT_THAT(
      Ok({"wait", "--for=condition=complete", "job/sleepy", "--timeout=40s"}),
      HasSubstr("job.batch/sleepy condition met"));
  EXPECT_THAT(
      Ok({"wait", "--for=condition=failed", "job/broken", "--timeout=40s"}),
      HasSubstr("job.batch/broken condition met"));
  std::vector<std::vector<std::string>> rows =
      KubectlHarness::Columns(Ok({"get", "jobs"}));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_THAT(std::vector<std::string>(rows[0].begin(), rows[0].begin() + 4),
              ElementsAre("NAME", "STATUS", "COMPLETIONS", "DURATION"));
  ASSERT_GE(rows[1].size(), 4u);
  EXPECT_THAT(std::vector<std::string>(rows[1].begin(), rows[1].begin() + 3),
              ElementsAre("broken", "Failed", "0/1"));
  ASSERT_GE(rows[2].size(), 4u);
  EXPECT_THAT(std::vector<std::string>(rows[2].begin(), rows[2].begin() + 3),
              ElementsAre("sleepy", "Complete", "1/1"));
  EXPECT_THAT(rows[2][3], testing::MatchesRegex("[0-9]+s"));
  EXPECT_EQ(Ok({"get", "job", "broken", "-o",
                "jsonpath={.status.conditions[?(@.type==\"Failed\")].reason}"}),
            "BackoffLimitExceeded");
  // The pod of the Job that completed is kept, Succeeded, without the
  // tracking finalizer.
  EXPECT_EQ(Ok({"get", "pods", "-l", "job-name=sleepy", "-o",
                "jsonpath={.items[*].status.phase} "
                "{.items[*].metadata.finalizers}"}),
            "Succeeded ");
  EXPECT_THAT(Ok({"describe", "job", "sleepy"}), HasSubstr("Job completed"));

  EXPECT_THAT(Ok({"create", "job", "manual", "--from=cronjob/nightly"}),
              HasSubstr("job.batch/manual created"));
  EXPECT_EQ(Ok({"get", "job", "manual", "-o",
                "jsonpath={.metadata.ownerReferences[0].kind}"}),
            "CronJob");
  EXPECT_THAT(
      Ok({"wait", "--for=condition=complete", "job/manual", "--timeout=40s"}),
      HasSubstr("job.batch/manual condition met"));
}

}  // namespace
}  // namespace integration
}  // namespace kcr
