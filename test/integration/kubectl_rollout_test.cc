// kubectl's Deployment workflows against cmd/local-apiserver: the
// deployment and replicaset controllers make ReplicaSets and pods, the
// simulated node runs them, and `kubectl rollout status / history / undo /
// pause / resume`, `set image`, `scale` and `delete` behave as on a
// cluster. Runs the real /usr/bin/kubectl; a missing kubectl fails.
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_harness.h"
#include "test/integration/kubectl_server_fixture.h"
#include "test/integration/process_util.h"

namespace kcr {
namespace apiserver {
namespace {

using ::kcr::integration::KubectlHarness;
using ::kcr::integration::KubectlResult;
using ::testing::HasSubstr;

// Generous: the machine may be loaded.
constexpr absl::Duration kPatience = absl::Seconds(90);

class KubectlRolloutTest : public integration::KubectlServerFixture {
 protected:
  void SetUp() override {
    StartServer("kubectl-rollout", {"--sim_running_after_ms=100"});
  }

  // Runs kubectl and expects success.
  std::string Ok(const std::vector<std::string>& args) {
    KubectlResult r = kubectl_->Run(args, "", kPatience + absl::Seconds(30));
    EXPECT_EQ(r.exit_code, 0) << "kubectl " << absl::StrJoin(args, " ")
                              << " failed: " << r.err << r.out;
    return r.out;
  }

  // kubectl get ... -o jsonpath=`path`.
  std::string JsonPath(const std::vector<std::string>& what,
                       const std::string& path) {
    std::vector<std::string> args = {"get"};
    args.insert(args.end(), what.begin(), what.end());
    args.push_back("-o");
    args.push_back("jsonpath=" + path);
    return kubectl_->Run(args).out;
  }

  // Polls `done` until it holds or kPatience passes.
  static bool Eventually(const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + kPatience;
    while (absl::Now() < deadline) {
      if (done()) return true;
      absl::SleepFor(absl::Milliseconds(200));
    }
    return done();
  }

  void RolloutStatus(const std::string& deployment) {
    EXPECT_THAT(Ok({"rollout", "status", "deployment/" + deployment,
                    "--timeout=" +
                        std::to_string(absl::ToInt64Seconds(kPatience)) + "s"}),
                HasSubstr("successfully rolled out"));
  }

  // The phases of the pods labelled app=`app`, sorted, space-separated.
  std::string Phases(const std::string& app) {
    std::vector<std::string> phases = absl::StrSplit(
        JsonPath({"pods", "-l", "app=" + app}, "{.items[*].status.phase}"), ' ',
        absl::SkipEmpty());
    std::sort(phases.begin(), phases.end());
    return absl::StrJoin(phases, " ");
  }
};

TEST_F(KubectlRolloutTest, CreateDeploymentRunsPods) {
  Ok({"create", "deployment", "web", "--image=nginx", "--replicas=3"});
  RolloutStatus("web");
  EXPECT_TRUE(Eventually([&] {
    return Phases("web") == "Running Running Running";
  })) << Phases("web");
  // kubectl get rs: NAME DESIRED CURRENT READY AGE.
  std::vector<std::vector<std::string>> rows =
      KubectlHarness::Columns(Ok({"get", "rs"}));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_THAT(rows[0], ::testing::ElementsAre("NAME", "DESIRED", "CURRENT",
                                              "READY", "AGE"));
  EXPECT_THAT(rows[1][0], ::testing::StartsWith("web-"));
  EXPECT_EQ(rows[1][1], "3");
  EXPECT_EQ(rows[1][2], "3");
  EXPECT_EQ(rows[1][3], "3");
  const std::string hash =
      JsonPath({"rs", rows[1][0]}, "{.metadata.labels.pod-template-hash}");
  EXPECT_EQ(rows[1][0], "web-" + hash);
  // The pods carry the hash and belong to the ReplicaSet.
  EXPECT_EQ(JsonPath({"pods", "-l", "pod-template-hash=" + hash},
                     "{.items[*].metadata.ownerReferences[0].name}"),
            rows[1][0] + " " + rows[1][0] + " " + rows[1][0]);
  rows = KubectlHarness::Columns(Ok({"get", "deploy", "web"}));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][1], "3/3");
  EXPECT_EQ(JsonPath({"deploy", "web"},
                     "{.metadata.annotations.deployment\\.kubernetes\\.io/"
                     "revision}"),
            "1");
}

TEST_F(KubectlRolloutTest, SetImageHistoryAndUndo) {
  Ok({"create", "deployment", "web", "--image=nginx:1", "--replicas=2"});
  RolloutStatus("web");
  Ok({"set", "image", "deployment/web", "nginx=nginx:2"});
  RolloutStatus("web");
  // The old ReplicaSet is kept at zero.
  std::vector<std::string> desired = absl::StrSplit(
      JsonPath({"rs", "-l", "app=web"}, "{.items[*].spec.replicas}"), ' ');
  std::sort(desired.begin(), desired.end());
  EXPECT_THAT(desired, ::testing::ElementsAre("0", "2"));
  EXPECT_TRUE(Eventually([&] { return Phases("web") == "Running Running"; }))
      << Phases("web");

  std::string history = Ok({"rollout", "history", "deployment/web"});
  EXPECT_THAT(history, HasSubstr("REVISION"));
  std::vector<std::vector<std::string>> rows = KubectlHarness::Columns(history);
  std::vector<std::string> revisions;
  for (const auto& row : rows) {
    if (!row.empty() && (row[0] == "1" || row[0] == "2")) {
      revisions.push_back(row[0]);
    }
  }
  EXPECT_THAT(revisions, ::testing::ElementsAre("1", "2")) << history;

  Ok({"rollout", "undo", "deployment/web"});
  RolloutStatus("web");
  EXPECT_EQ(
      JsonPath({"deploy", "web"}, "{.spec.template.spec.containers[0].image}"),
      "nginx:1");
  EXPECT_EQ(JsonPath({"deploy", "web"},
                     "{.metadata.annotations.deployment\\.kubernetes\\.io/"
                     "revision}"),
            "3");
  EXPECT_EQ(
      JsonPath({"rs", "-l", "app=web"}, "{.items[*].spec.replicas}").size(),
      3u);  // still two ReplicaSets: "x y"

  Ok({"rollout", "undo", "deployment/web", "--to-revision=2"});
  RolloutStatus("web");
  EXPECT_EQ(
      JsonPath({"deploy", "web"}, "{.spec.template.spec.containers[0].image}"),
      "nginx:2");
}

TEST_F(KubectlRolloutTest, ScalePauseResume) {
  Ok({"create", "deployment", "web", "--image=nginx:1", "--replicas=2"});
  RolloutStatus("web");
  Ok({"scale", "deployment", "web", "--replicas=4"});
  RolloutStatus("web");
  EXPECT_TRUE(Eventually([&] {
    return Phases("web") == "Running Running Running Running";
  })) << Phases("web");

  Ok({"rollout", "pause", "deployment/web"});
  Ok({"set", "image", "deployment/web", "nginx=nginx:2"});
  EXPECT_TRUE(Eventually([&] {
    return JsonPath({"deploy", "web"},
                    "{.status.conditions[?(@.type==\"Progressing\")]."
                    "reason}") == "DeploymentPaused" &&
           JsonPath({"deploy", "web"}, "{.status.observedGeneration}") ==
               JsonPath({"deploy", "web"}, "{.metadata.generation}");
  }));
  // No rollout while paused.
  EXPECT_EQ(JsonPath({"rs", "-l", "app=web"}, "{.items[*].spec.replicas}"),
            "4");

  Ok({"rollout", "resume", "deployment/web"});
  RolloutStatus("web");
  std::vector<std::string> desired = absl::StrSplit(
      JsonPath({"rs", "-l", "app=web"}, "{.items[*].spec.replicas}"), ' ');
  std::sort(desired.begin(), desired.end());
  EXPECT_THAT(desired, ::testing::ElementsAre("0", "4"));
}

TEST_F(KubectlRolloutTest, DeleteCascades) {
  Ok({"create", "deployment", "web", "--image=nginx", "--replicas=2"});
  RolloutStatus("web");
  Ok({"delete", "deployment", "web"});
  EXPECT_TRUE(Eventually([&] {
    return JsonPath({"rs,pods", "-l", "app=web"}, "{.items[*].metadata.name}")
        .empty();
  })) << Ok({"get", "rs,pods"});
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
