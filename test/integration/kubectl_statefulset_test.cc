// kubectl's StatefulSet workflows against cmd/local-apiserver: the
// statefulset controller makes the ordinal pods and their claims, the
// simulated node runs them, and `kubectl apply`, `rollout status`,
// `get sts,pods,pvc`, `scale`, `set image` with a partition and
// `rollout restart` behave as on a cluster. Runs the real /usr/bin/kubectl;
// a missing kubectl fails.
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
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
using ::testing::HasSubstr;

// Generous: the machine may be loaded.
constexpr absl::Duration kPatience = absl::Seconds(45);

constexpr char kManifest[] = R"(apiVersion: v1
kind: Service
metadata: {name: nginx, labels: {app: nginx}}
spec:
  clusterIP: None
  selector: {app: nginx}
  ports: [{port: 80, name: web}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: nginx
  replicas: 3
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        volumeMounts: [{name: www, mountPath: /usr/share/nginx/html}]
  volumeClaimTemplates:
  - metadata: {name: www}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
)";

class KubectlStatefulSetTest : public integration::KubectlServerFixture {
 protected:
  void SetUp() override {
    StartServer("kubectl-statefulset", {"--sim_running_after_ms=100"});
  }

  // Runs kubectl and expects success.
  std::string Ok(const std::vector<std::string>& args,
                 const std::string& stdin_text = "") {
    KubectlResult r =
        kubectl_->Run(args, stdin_text, kPatience + absl::Seconds(30));
    EXPECT_EQ(r.exit_code, 0) << "kubectl " << absl::StrJoin(args, " ")
                              << " failed: " << r.err << r.out;
    return r.out;
  }

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

  std::string RolloutStatus() {
    return Ok(
        {"rollout", "status", "sts/web",
         "--timeout=" + std::to_string(absl::ToInt64Seconds(kPatience)) + "s"});
  }

  // The first cell of each row of `kubectl get <what>` but the header.
  std::vector<std::string> Names(const std::string& what) {
    std::vector<std::string> names;
    auto rows = KubectlHarness::Columns(Ok({"get", what}));
    for (size_t i = 1; i < rows.size(); ++i) names.push_back(rows[i][0]);
    return names;
  }
};

TEST_F(KubectlStatefulSetTest, AppliesRollsOutAndScales) {
  Ok({"apply", "-f", "-"}, kManifest);
  // The defaulted partition (0) is there, so kubectl reports a
  // partitioned roll out, as on a cluster.
  EXPECT_THAT(RolloutStatus(),
              HasSubstr("partitioned roll out complete: 3 new pods have been "
                        "updated..."));
  const std::string all = Ok({"get", "sts,pods,pvc"});
  for (const char* name :
       {"statefulset.apps/web", "pod/web-0", "pod/web-1", "pod/web-2",
        "persistentvolumeclaim/www-web-0", "persistentvolumeclaim/www-web-1",
        "persistentvolumeclaim/www-web-2"}) {
    EXPECT_THAT(all, HasSubstr(name));
  }
  auto rows = KubectlHarness::Columns(Ok({"get", "sts", "web"}));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][1], "READY");
  EXPECT_EQ(rows[1][1], "3/3");
  EXPECT_EQ(JsonPath({"pod", "web-1"}, "{.spec.hostname}/{.spec.subdomain}"),
            "web-1/nginx");
  EXPECT_EQ(JsonPath({"pod", "web-2"},
                     "{.spec.volumes[0].persistentVolumeClaim.claimName}"),
            "www-web-2");

  Ok({"scale", "sts/web", "--replicas=1"});
  EXPECT_TRUE(Eventually([&] {
    return Names("pods") == std::vector<std::string>{"web-0"};
  })) << Ok({"get", "pods"});
  // The claims stay (whenScaled: Retain).
  EXPECT_EQ(Names("pvc"),
            (std::vector<std::string>{"www-web-0", "www-web-1", "www-web-2"}));
  const std::string events =
      Ok({"get", "events", "--field-selector", "involvedObject.name=web"});
  EXPECT_THAT(events, HasSubstr("create Claim www-web-0 Pod web-0 in "
                                "StatefulSet web success"));
  EXPECT_THAT(events, HasSubstr("delete Pod web-2 in StatefulSet web "
                                "successful"));
}

// `kubectl set image` with a partition updates the ordinals at and above
// it; partition 0 finishes the update; `rollout restart` replaces every
// pod; `rollout history` lists the ControllerRevisions and `rollout undo`
// goes back to one.
TEST_F(KubectlStatefulSetTest, PartitionedImageChangeAndRestart) {
  Ok({"apply", "-f", "-"}, kManifest);
  RolloutStatus();
  Ok({"patch", "sts", "web", "-p",
      R"({"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}}}})"});
  Ok({"set", "image", "sts/web", "nginx=nginx:1.26"});
  EXPECT_THAT(RolloutStatus(),
              HasSubstr("partitioned roll out complete: 1 new pods have been "
                        "updated..."));
  EXPECT_EQ(JsonPath({"pods", "web-0", "web-1", "web-2"},
                     "{.items[*].spec.containers[0].image}"),
            "nginx:1.25 nginx:1.25 nginx:1.26");
  const std::string current =
      JsonPath({"sts", "web"}, "{.status.currentRevision}");
  const std::string update =
      JsonPath({"sts", "web"}, "{.status.updateRevision}");
  EXPECT_NE(current, update);
  EXPECT_EQ(
      JsonPath({"pod", "web-2"}, "{.metadata.labels.controller-revision-hash}"),
      update);

  Ok({"patch", "sts", "web", "-p",
      R"({"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}})"});
  EXPECT_THAT(RolloutStatus(),
              HasSubstr("partitioned roll out complete: 3 new pods have been "
                        "updated..."));
  EXPECT_EQ(JsonPath({"pods", "web-0", "web-1", "web-2"},
                     "{.items[*].spec.containers[0].image}"),
            "nginx:1.26 nginx:1.26 nginx:1.26");
  EXPECT_TRUE(Eventually([&] {
    return JsonPath({"sts", "web"}, "{.status.currentRevision}") == update;
  }));

  Ok({"rollout", "restart", "sts/web"});
  RolloutStatus();
  EXPECT_TRUE(Eventually([&] {
    return JsonPath({"pods", "web-0", "web-1", "web-2"},
                    "{.items[*].metadata.annotations.kubectl\\.kubernetes\\."
                    "io/restartedAt}")
               .size() > 40;  // three timestamps
  })) << Ok({"get", "pods", "-o", "yaml"});
  const std::string history = Ok({"rollout", "history", "sts/web"});
  EXPECT_THAT(history, HasSubstr("REVISION"));
  EXPECT_THAT(history, HasSubstr("3"));
  // Back to the first template.
  Ok({"rollout", "undo", "sts/web", "--to-revision=1"});
  RolloutStatus();
  EXPECT_TRUE(Eventually([&] {
    return JsonPath({"pods", "web-0", "web-1", "web-2"},
                    "{.items[*].spec.containers[0].image}") ==
           "nginx:1.25 nginx:1.25 nginx:1.25";
  }));
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
