// The pods controller against the in-process local API server with its
// simulated node: kcr_pods follows pods as they are created, run and are
// deleted, in every namespace or one; the log says what changed.
#include "controllers/pods/pods_controller.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "api/object_builder.h"
#include "base/context.h"
#include "base/mutex.h"
#include "glog/logging.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "runtime/client/options.h"
#include "runtime/controller/manager.h"
#include "test/controllers/manager_test_fixture.h"

namespace kcr::pods {
namespace {

const Context kBg = Context::Background();
const client::Resource kPods = client::Resource::Namespaced({"", "v1", "pods"});
const client::Resource kNamespaces =
    client::Resource::ClusterScoped({"", "v1", "namespaces"});

// Keeps the lines the pods controller logs.
class LogLines final : public google::LogSink {
 public:
  LogLines() { google::AddLogSink(this); }
  ~LogLines() override { google::RemoveLogSink(this); }

  void send(google::LogSeverity, const char*, const char*, int,
            const google::LogMessageTime&, const char* message,
            size_t message_len) override {
    std::string line(message, message_len);
    if (!absl::StartsWith(line, "pod ")) return;
    MutexLock lock(&mu_);
    lines_.push_back(std::move(line));
  }

  bool Has(const std::string& a, const std::string& b) {
    MutexLock lock(&mu_);
    for (const std::string& line : lines_) {
      if (absl::StrContains(line, a) && absl::StrContains(line, b)) return true;
    }
    return false;
  }

 private:
  Mutex mu_;
  std::vector<std::string> lines_ ABSL_GUARDED_BY(mu_);
};

class PodsControllerTest : public testing::ManagerTestFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.controllers.node_simulator = true;
    options.controllers.node.running_after = absl::Milliseconds(300);
    StartServer(std::move(options));
    if (HasFatalFailure()) return;
    ASSERT_TRUE(client_
                    ->Create(kBg, kNamespaces,
                             *api::ObjectBuilder("v1", "Namespace")
                                  .SetName("other")
                                  .Build()
                                  .value())
                    .ok());
  }

  void StartManager(const PodsOptions& options) {
    ManagerTestFixture::StartManager([&options](controller::Manager& mgr) {
      return AddPodsController(mgr, options);
    });
  }

  void CreatePod(const std::string& ns, const std::string& name,
                 const std::string& running_after = "") {
    api::ObjectBuilder pod("v1", "Pod");
    pod.SetNamespace(ns).SetName(name);
    if (!running_after.empty()) {
      pod.SetAnnotation("kcr.io/sim-running-after", running_after);
    }
    ASSERT_TRUE(
        pod.SetJson("/spec", R"({"containers":[{"name":"c","image":"nginx"}]})")
            .ok());
    auto built = pod.Build();
    ASSERT_TRUE(built.ok()) << built.status();
    auto created = client_->Create(kBg, kPods.InNamespace(ns), **built);
    ASSERT_TRUE(created.ok()) << created.status();
  }

  void DeletePod(const std::string& ns, const std::string& name) {
    ASSERT_TRUE(client_->Delete(kBg, kPods.InNamespace(ns), name).ok());
  }

  // Every kcr_pods series: {namespace, phase} -> value.
  std::map<std::pair<std::string, std::string>, double> Series() {
    std::map<std::pair<std::string, std::string>, double> out;
    for (const prometheus::MetricFamily& f :
         mgr_->GetMetricsRegistry().Collect()) {
      if (f.name != "kcr_pods") continue;
      for (const prometheus::ClientMetric& m : f.metric) {
        std::string ns, phase;
        for (const prometheus::ClientMetric::Label& l : m.label) {
          if (l.name == "namespace") ns = l.value;
          if (l.name == "phase") phase = l.value;
        }
        out[{ns, phase}] = m.gauge.value;
      }
    }
    return out;
  }

  // Waits (generously: the machine may be loaded) until the series are
  // exactly `want`.
  bool SeriesBecome(
      const std::map<std::pair<std::string, std::string>, double>& want) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      if (Series() == want) return true;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }

  // Waits (as generously) until the pod ns/name is in `phase`.
  bool PhaseBecomes(const std::string& ns, const std::string& name,
                    const std::string& phase) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      auto got = client_->Get(kBg, kPods.InNamespace(ns), name);
      if (got.ok()) {
        const rapidjson::Value* p = (*got)->Find("/status/phase");
        if (p != nullptr && p->IsString() && p->GetString() == phase) {
          return true;
        }
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }

  static std::string Dump(
      const std::map<std::pair<std::string, std::string>, double>& series) {
    std::string out;
    for (const auto& [k, v] : series) {
      absl::StrAppend(&out, k.first, "/", k.second, "=", v, " ");
    }
    return out;
  }
};

TEST_F(PodsControllerTest, GaugeFollowsPodsAcrossNamespaces) {
  LogLines logs;
  // One pod exists before the controller starts: it comes with the
  // initial list.
  CreatePod("default", "early");
  StartManager({});
  if (HasFatalFailure()) return;
  ASSERT_TRUE(SeriesBecome({{{"default", "Running"}, 1}})) << Dump(Series());

  // A pod that stays Pending for a while, then runs.
  CreatePod("default", "slow", "3s");
  CreatePod("other", "web");
  ASSERT_TRUE(SeriesBecome({{{"default", "Running"}, 1},
                            {{"default", "Pending"}, 1},
                            {{"other", "Running"}, 1}}))
      << Dump(Series());
  ASSERT_TRUE(
      SeriesBecome({{{"default", "Running"}, 2}, {{"other", "Running"}, 1}}))
      << Dump(Series());
  EXPECT_TRUE(logs.Has("pod updated namespace=default name=slow",
                       "phase=Pending->Running ready=false->true"));
  EXPECT_TRUE(
      logs.Has("pod added namespace=default name=early", "initialList=true"));

  DeletePod("default", "early");
  DeletePod("other", "web");
  // A series whose count drops to zero goes away.
  ASSERT_TRUE(SeriesBecome({{{"default", "Running"}, 1}})) << Dump(Series());
  EXPECT_TRUE(
      logs.Has("pod deleted namespace=other name=web", "phase=Running"));

  // Stopping removes the controller's series.
  cancel_();
  run_.join();
  EXPECT_TRUE(run_status_.ok()) << run_status_;
  EXPECT_TRUE(Series().empty()) << Dump(Series());
}

TEST_F(PodsControllerTest, OneNamespace) {
  LogLines logs;
  StartManager({.namespace_ = "other"});
  if (HasFatalFailure()) return;
  // It runs after the watched pod does, so that the check below sees its
  // last event come after the first count.
  ASSERT_NO_FATAL_FAILURE(CreatePod("default", "ignored", "1s"));
  ASSERT_NO_FATAL_FAILURE(CreatePod("other", "watched"));
  ASSERT_TRUE(SeriesBecome({{{"other", "Running"}, 1}})) << Dump(Series());
  // The pod in default stays out, also once it ran: once it runs, a pod
  // created later in "other" is counted, so the controller has seen every
  // event up to the ignored pod's last one.
  ASSERT_TRUE(PhaseBecomes("default", "ignored", "Running"));
  ASSERT_NO_FATAL_FAILURE(CreatePod("other", "later"));
  ASSERT_TRUE(SeriesBecome({{{"other", "Running"}, 2}})) << Dump(Series());
  EXPECT_EQ(Series().size(), 1u) << Dump(Series());
  EXPECT_FALSE(logs.Has("namespace=default", "name=ignored"));
}

}  // namespace
}  // namespace kcr::pods
