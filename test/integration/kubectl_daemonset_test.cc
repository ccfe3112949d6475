// DaemonSets and ReplicationControllers through kubectl against
// cmd/local-apiserver with three simulated nodes: the daemonset controller
// puts a pod on each eligible node, `kubectl rollout status ds` waits for a
// rolling update, `kubectl taint` and `kubectl label node` move pods, and
// `kubectl scale rc` reaches the replication controller. Runs the real
// /usr/bin/kubectl; a missing kubectl fails.
#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/kubectl_harness.h"
#include "test/integration/kubectl_server_fixture.h"

namespace kcr {
namespace apiserver {
namespace {

using ::kcr::integration::KubectlHarness;
using ::kcr::integration::KubectlResult;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Generous: the machine may be loaded.
constexpr absl::Duration kPatience = absl::Seconds(40);

constexpr char kDaemonSet[] = R"(apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: c
        image: agent:1
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: gpu
spec:
  selector:
    matchLabels: {app: gpu}
  template:
    metadata:
      labels: {app: gpu}
    spec:
      nodeSelector: {gpu: "yes"}
      containers:
      - name: c
        image: gpu:1
)";

constexpr char kReplicationController[] = R"(apiVersion: v1
kind: ReplicationController
metadata:
  name: web
spec:
  replicas: 2
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: c
        image: nginx
)";

class KubectlDaemonSetTest : public integration::KubectlServerFixture {
 protected:
  void SetUp() override {
    StartServer("kubectl-daemonset",
                {"--nodes=3", "--sim_running_after_ms=100"});
  }

  std::string Ok(const std::vector<std::string>& args,
                 const std::string& stdin_text = "") {
    KubectlResult r =
        kubectl_->Run(args, stdin_text, kPatience + absl::Seconds(30));
    EXPECT_EQ(r.exit_code, 0) << "kubectl " << absl::StrJoin(args, " ")
                              << " failed: " << r.err << r.out;
    return r.out;
  }

  // The table rows of `kubectl get <what>`, without the AGE column.
  std::vector<std::vector<std::string>> Table(
      const std::vector<std::string>& what) {
    std::vector<std::string> args = {"get"};
    args.insert(args.end(), what.begin(), what.end());
    std::vector<std::vector<std::string>> rows =
        KubectlHarness::Columns(kubectl_->Run(args).out);
    for (auto& row : rows) {
      if (!row.empty()) row.pop_back();
    }
    return rows;
  }

  // The nodes the pods labelled app=`app` are bound to, sorted.
  std::vector<std::string> NodesOf(const std::string& app) {
    std::vector<std::string> nodes =
        absl::StrSplit(kubectl_
                           ->Run({"get", "pods", "-l", "app=" + app, "-o",
                                  "jsonpath={.items[*].spec.nodeName}"})
                           .out,
                       ' ', absl::SkipEmpty());
    std::sort(nodes.begin(), nodes.end());
    return nodes;
  }

  static bool Eventually(const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + kPatience;
    while (absl::Now() < deadline) {
      if (done()) return true;
      absl::SleepFor(absl::Milliseconds(200));
    }
    return done();
  }
};

TEST_F(KubectlDaemonSetTest, PodPerNodeRolloutTaintsAndLabels) {
  EXPECT_THAT(Ok({"create", "-f", "-"}, kDaemonSet),
              HasSubstr("daemonset.apps/agent created"));
  EXPECT_THAT(Ok({"rollout", "status", "ds/agent", "--timeout=40s"}),
              HasSubstr("daemon set \"agent\" successfully rolled out"));
  EXPECT_THAT(NodesOf("agent"),
              ElementsAre("kcr-node", "kcr-node-2", "kcr-node-3"));
  ASSERT_TRUE(Eventually([&] {
    return Table({"ds"}) == std::vector<std::vector<std::string>>{
                                {"NAME", "DESIRED", "CURRENT", "READY",
                                 "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR"},
                                {"agent", "3", "3", "3", "3", "3", "<none>"},
                                {"gpu", "0", "0", "0", "0", "0", "gpu=yes"}};
  })) << kubectl_->Run({"get", "ds"}).out;

  // A NoExecute taint evicts the daemon pod from that node.
  Ok({"taint", "node", "kcr-node-3", "maintenance=now:NoExecute"});
  EXPECT_TRUE(Eventually([&] {
    return NodesOf("agent") ==
           std::vector<std::string>{"kcr-node", "kcr-node-2"};
  })) << absl::StrJoin(NodesOf("agent"), ",");
  Ok({"taint", "node", "kcr-node-3", "maintenance=now:NoExecute-"});
  EXPECT_TRUE(Eventually([&] { return NodesOf("agent").size() == 3; }));

  // A label brings the node-selected DaemonSet to that node.
  Ok({"label", "node", "kcr-node-2", "gpu=yes"});
  EXPECT_TRUE(Eventually([&] {
    return NodesOf("gpu") == std::vector<std::string>{"kcr-node-2"};
  })) << absl::StrJoin(NodesOf("gpu"), ",");

  // A rolling update: every pod replaced, one node at a time.
  Ok({"set", "image", "ds/agent", "c=agent:2"});
  EXPECT_THAT(Ok({"rollout", "status", "ds/agent", "--timeout=40s"}),
              HasSubstr("daemon set \"agent\" successfully rolled out"));
  EXPECT_EQ(kubectl_
                ->Run({"get", "pods", "-l", "app=agent", "-o",
                       "jsonpath={.items[*].spec.containers[0].image}"})
                .out,
            "agent:2 agent:2 agent:2");
  EXPECT_THAT(
      Ok({"get", "events", "--field-selector", "involvedObject.name=agent"}),
      HasSubstr("Deleted pod: agent-"));

  // The ControllerRevisions: history, and a rollback to the first.
  const std::vector<std::vector<std::string>> history =
      KubectlHarness::Columns(Ok({"rollout", "history", "ds/agent"}));
  ASSERT_GE(history.size(), 4u);
  EXPECT_THAT(history[1], ElementsAre("REVISION", "CHANGE-CAUSE"));
  EXPECT_THAT(history[2], ElementsAre("1", "<none>"));
  EXPECT_THAT(history[3], ElementsAre("2", "<none>"));
  EXPECT_THAT(Ok({"rollout", "undo", "ds/agent"}),
              HasSubstr("daemonset.apps/agent rolled back"));
  EXPECT_THAT(Ok({"rollout", "status", "ds/agent", "--timeout=40s"}),
              HasSubstr("daemon set \"agent\" successfully rolled out"));
  EXPECT_EQ(kubectl_
                ->Run({"get", "pods", "-l", "app=agent", "-o",
                       "jsonpath={.items[*].spec.containers[0].image}"})
                .out,
            "agent:1 agent:1 agent:1");
}

TEST_F(KubectlDaemonSetTest, ScaleReplicationController) {
  EXPECT_THAT(Ok({"create", "-f", "-"}, kReplicationController),
              HasSubstr("replicationcontroller/web created"));
  ASSERT_TRUE(Eventually([&] {
    return Table({"rc"}) ==
           std::vector<std::vector<std::string>>{
               {"NAME", "DESIRED", "CURRENT", "READY"}, {"web", "2", "2", "2"}};
  })) << kubectl_->Run({"get", "rc"}).out;
  EXPECT_THAT(Ok({"scale", "rc", "web", "--replicas=4"}),
              HasSubstr("replicationcontroller/web scaled"));
  ASSERT_TRUE(Eventually([&] {
    return Table({"rc"}) ==
           std::vector<std::vector<std::string>>{
               {"NAME", "DESIRED", "CURRENT", "READY"}, {"web", "4", "4", "4"}};
  })) << kubectl_->Run({"get", "rc"}).out;
  // The pods are the RC's, spread over the three nodes.
  EXPECT_THAT(Ok({"get", "pods", "-l", "app=web", "-o",
                  "jsonpath={.items[*].metadata.ownerReferences[0].kind}"}),
              "ReplicationController ReplicationController "
              "ReplicationController ReplicationController");
  const std::vector<std::string> nodes = NodesOf("web");
  EXPECT_EQ(std::set<std::string>(nodes.begin(), nodes.end()).size(), 3u);
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
