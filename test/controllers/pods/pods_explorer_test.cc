// The pods controller explored (runtime/explorer): it writes nothing, so
// its points are stale views of Pods and unobserved Pod states. After
// every step its gauge kcr_pods{namespace,phase} must equal the server's
// counts. Rerun one point with
//   bazel test //test/controllers/pods:pods_explorer_test
//     --test_env=KCR_EXPLORE=pods:<point>:seed=1
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/object.h"
#include "base/mutex.h"
#include "controllers/pods/pods_controller.h"
#include "glog/logging.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "runtime/explorer/explorer.h"

namespace kcr::pods {
namespace {

const client::Resource kPods = client::Resource::Namespaced({"", "v1", "pods"});
const client::Resource kNamespaces =
    client::Resource::ClusterScoped({"", "v1", "namespaces"});

using Counts = std::map<std::pair<std::string, std::string>, double>;

// The Manager whose gauge the invariant reads: the latest one made. The
// runs go one at a time (parallelism 1), and the controller writes
// nothing, so no run has a second Manager.
Mutex manager_mu;
controller::Manager* current_manager ABSL_GUARDED_BY(manager_mu) = nullptr;

Counts Gauge() {
  Counts out;
  MutexLock lock(&manager_mu);
  if (current_manager == nullptr) return out;
  for (const prometheus::MetricFamily& f :
       current_manager->GetMetricsRegistry().Collect()) {
    if (f.name != "kcr_pods") continue;
    for (const prometheus::ClientMetric& m : f.metric) {
      std::string ns, phase;
      for (const prometheus::ClientMetric::Label& l : m.label) {
        if (l.name == "namespace") ns = l.value;
        if (l.name == "phase") phase = l.value;
      }
      if (m.gauge.value != 0) out[{ns, phase}] = m.gauge.value;
    }
  }
  return out;
}

std::string Show(const Counts& counts) {
  std::string out = "{";
  for (const auto& [key, n] : counts) {
    absl::StrAppend(&out, " ", key.first, "/", key.second, "=", n);
  }
  return out + " }";
}

absl::Status GaugeEqualsServer(const Context& ctx, client::RestClient& client) {
  auto pods = client.List(ctx, kPods);
  if (!pods.ok()) return pods.status();
  Counts server;
  for (const api::ObjectPtr& p : pods->items) {
    const rapidjson::Value* phase = p->Find("/status/phase");
    server[{std::string(p->namespace_()), phase != nullptr && phase->IsString()
                                              ? phase->GetString()
                                              : "Pending"}] += 1;
  }
  const Counts gauge = Gauge();
  if (gauge != server) {
    return absl::FailedPreconditionError(absl::StrCat(
        "kcr_pods ", Show(gauge), " but the server has ", Show(server)));
  }
  return absl::OkStatus();
}

// A pod the simulated node runs for `complete_after`, then ends as
// `outcome`.
std::string PodJson(const std::string& ns, const std::string& name,
                    const std::string& complete_after,
                    const std::string& outcome = "Succeeded") {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")",
                      name, R"(","namespace":")", ns, R"(","annotations":{)",
                      R"("kcr.io/sim-complete-after":")", complete_after,
                      R"(",)", R"("kcr.io/sim-outcome":")", outcome, R"("}},)",
                      R"("spec":{"restartPolicy":"Never","containers":[)",
                      R"({"name":"c","image":"busybox"}]}})");
}

explorer::Scenario PodsScenario() {
  explorer::Scenario s;
  s.name = "pods";
  s.add_controllers = [](controller::Manager* mgr) {
    {
      MutexLock lock(&manager_mu);
      current_manager = mgr;
    }
    return AddPodsController(*mgr, PodsOptions{});
  };
  s.steps = {
      explorer::Step::Create(kPods.InNamespace("default"),
                             PodJson("default", "long", "1h")),
      explorer::Step::Create(kPods.InNamespace("default"),
                             PodJson("default", "done", "50ms")),
      explorer::Step::Create(
          kNamespaces,
          R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}})"),
      explorer::Step::Create(kPods.InNamespace("team-a"),
                             PodJson("team-a", "bad", "50ms", "Failed")),
      explorer::Step::Delete(kPods.InNamespace("default"), "long"),
      explorer::Step::Delete(kPods.InNamespace("default"), "done"),
  };
  // The gauge counts what the controller has seen: while its view of Pods
  // is held back it lags, by design.
  s.invariants = {{"kcr_pods equals the server's counts", GaugeEqualsServer,
                   /*needs_current_view=*/true}};
  // The user's pods; what the server makes differently on each start (the
  // service account volume's generated name, container IDs, pod IPs) is
  // not compared.
  s.state = {explorer::Collection(kPods)};
  s.ignored_fields = {"/spec/volumes", "/spec/containers/0/volumeMounts",
                      "/status/containerStatuses", "/status/podIP",
                      "/status/podIPs"};
  return s;
}

TEST(PodsExplorerTest, GaugeEqualsTheServerAtEveryPoint) {
  explorer::ExplorerOptions options;
  // One Manager at a time: the invariant reads the latest one's gauge.
  options.parallelism = 1;
  auto report = explorer::Explore(PodsScenario(), options);
  ASSERT_TRUE(report.ok()) << report.status();
  if (report->skipped) return;
  EXPECT_GT(report->runs.size(), 1u);
  EXPECT_TRUE(report->ok()) << report->ToString();
  LOG(INFO) << report->ToString();
}

}  // namespace
}  // namespace kcr::pods
