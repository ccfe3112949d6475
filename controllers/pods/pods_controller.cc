#include "controllers/pods/pods_controller.h"

#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/types/pod.h"
#include "base/context.h"
#include "base/mutex.h"
#include "controllers/pods/pod_diff.h"
#include "glog/logging.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "runtime/cache/processor_listener.h"
#include "runtime/cache/shared_informer.h"
#include "runtime/client/typed_client.h"
#include "runtime/controller/runnable.h"

namespace kcr::pods {
namespace {

std::string Key(const api::ObjectPtr& pod) {
  return "namespace=" + std::string(pod->namespace_()) +
         " name=" + std::string(pod->name());
}

// Pods per (namespace, phase), mirrored into the gauge family. Series
// exist only while their count is positive.
class PodCounts {
 public:
  explicit PodCounts(prometheus::Family<prometheus::Gauge>* family)
      : family_(family) {}

  void Add(const std::string& ns, const std::string& phase, int delta) {
    MutexLock lock(&mu_);
    if (closed_) return;
    const std::pair<std::string, std::string> key(ns, PhaseLabel(phase));
    Series& s = series_[key];
    s.count += delta;
    if (s.count <= 0) {
      if (s.gauge != nullptr) family_->Remove(s.gauge);
      series_.erase(key);
      return;
    }
    if (s.gauge == nullptr) {
      s.gauge =
          &family_->Add({{"namespace", key.first}, {"phase", key.second}});
    }
    s.gauge->Set(static_cast<double>(s.count));
  }

  // Removes every series and ignores later changes (the controller
  // stopped; a notification still in flight must not bring one back).
  void Close() {
    MutexLock lock(&mu_);
    closed_ = true;
    for (auto& [key, s] : series_) {
      if (s.gauge != nullptr) family_->Remove(s.gauge);
    }
    series_.clear();
  }

 private:
  struct Series {
    int64_t count = 0;
    prometheus::Gauge* gauge = nullptr;
  };

  // A pod the server has not given a phase yet is counted as Pending, as
  // kubectl shows it.
  static std::string PhaseLabel(const std::string& phase) {
    return phase.empty() ? "Pending" : phase;
  }

  prometheus::Family<prometheus::Gauge>* const family_;  // the registry's
  Mutex mu_;
  std::map<std::pair<std::string, std::string>, Series> series_
      ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// The informer's notifications, turned into log lines and counts. The
// informer calls one handler from one thread at a time.
class PodEventHandler final : public cache::ResourceEventHandler {
 public:
  explicit PodEventHandler(std::shared_ptr<PodCounts> counts)
      : counts_(std::move(counts)) {}

  void OnAdd(const api::ObjectPtr& pod, bool is_in_initial_list) override {
    const PodState state = PodStateOf(pod);
    // Logged before counted: a reader of the gauge finds the line logged.
    LOG(INFO) << "pod added " << Key(pod) << " " << FormatState(state)
              << (is_in_initial_list ? " initialList=true" : "");
    counts_->Add(std::string(pod->namespace_()), state.phase, +1);
  }

  void OnUpdate(const api::ObjectPtr& old_pod,
                const api::ObjectPtr& new_pod) override {
    const PodState before = PodStateOf(old_pod);
    const PodState after = PodStateOf(new_pod);
    const std::vector<PodChange> changes = DiffPodStates(before, after);
    if (changes.empty()) {
      VLOG(4) << "pod updated " << Key(new_pod)
              << " resourceVersion=" << new_pod->resource_version()
              << " (phase, readiness, restarts and node unchanged)";
      return;
    }
    LOG(INFO) << "pod updated " << Key(new_pod) << " "
              << FormatChanges(changes);
    if (before.phase != after.phase) {
      const std::string ns(new_pod->namespace_());
      counts_->Add(ns, after.phase, +1);
      counts_->Add(ns, before.phase, -1);
    }
  }

  void OnDelete(const api::ObjectPtr& pod, bool final_state_unknown) override {
    const PodState state = PodStateOf(pod);
    // When the deletion was found by a relist, the last state may be stale.
    LOG(INFO) << "pod deleted " << Key(pod) << " " << FormatState(state)
              << (final_state_unknown ? " finalStateUnknown=true" : "");
    counts_->Add(std::string(pod->namespace_()), state.phase, -1);
  }

 private:
  // Shared: the informer may hold the handler beyond the Runnable.
  const std::shared_ptr<PodCounts> counts_;
};

// Attaches the handler while it runs (while the Manager leads), detaches
// it and clears the gauge when it stops.
class PodsRunnable final : public controller::Runnable {
 public:
  PodsRunnable(cache::SharedIndexInformer* informer,
               prometheus::Family<prometheus::Gauge>* family, std::string scope)
      : informer_(informer),
        counts_(std::make_shared<PodCounts>(family)),
        scope_(std::move(scope)) {}

  absl::Status Start(const Context& ctx) override {
    auto handler = std::make_shared<PodEventHandler>(counts_);
    // A handler added to a running informer first gets its cache's
    // contents as adds: the counts start from every pod there is.
    absl::StatusOr<std::shared_ptr<cache::ResourceEventHandlerRegistration>>
        registration = informer_->AddEventHandler(handler);
    if (!registration.ok()) return registration.status();
    LOG(INFO) << "controller=" << kPodsControllerName
              << " started scope=" << scope_;
    WaitUntilDone(ctx);
    absl::Status removed = informer_->RemoveEventHandler(*registration);
    counts_->Close();
    LOG(INFO) << "controller=" << kPodsControllerName << " stopped";
    // An informer already stopped has dropped its handlers anyway.
    if (!removed.ok() &&
        removed.code() != absl::StatusCode::kFailedPrecondition) {
      return removed;
    }
    return absl::OkStatus();
  }

  std::string name() const override { return kPodsControllerName; }

 private:
  cache::SharedIndexInformer* const informer_;
  const std::shared_ptr<PodCounts> counts_;
  const std::string scope_;
};

}  // namespace

absl::Status AddPodsController(controller::Manager& mgr,
                               const PodsOptions& options) {
  cache::SharedIndexInformer* informer = mgr.GetInformerFactory()->InformerFor(
      client::ResourceFor<api::PodView>(options.namespace_));
  auto& family = prometheus::BuildGauge()
                     .Name("kcr_pods")
                     .Help(
                         "Pods seen by the pods controller, by namespace "
                         "and phase.")
                     .Register(mgr.GetMetricsRegistry());
  std::string scope =
      options.namespace_.empty()
          ? (mgr.options().cache.namespace_.empty()
                 ? "all-namespaces"
                 : "namespace=" + mgr.options().cache.namespace_)
          : "namespace=" + options.namespace_;
  return mgr.Add(
      std::make_unique<PodsRunnable>(informer, &family, std::move(scope)));
}

}  // namespace kcr::pods
