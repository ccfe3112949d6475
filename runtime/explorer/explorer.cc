#include "runtime/explorer/explorer.h"

#include <errno.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "apiserver/api_server.h"
#include "base/context.h"
#include "base/mutex.h"
#include "base/string_view.h"
#include "glog/logging.h"
#include "prometheus/registry.h"
#include "runtime/client/rest_client.h"
#include "runtime/controller/manager.h"
#include "runtime/envtest/environment.h"
#include "runtime/explorer/fenced_client.h"
#include "runtime/explorer/server_faults.h"

namespace kcr::explorer {
namespace {

constexpr absl::Duration kPoll = absl::Milliseconds(10);
constexpr absl::Duration kRequestTimeout = absl::Seconds(30);

// Writes that are not the controllers' logic: Events (recorded
// asynchronously, aggregated) and Leases.
bool Ignored(const Write& w) {
  return w.resource == "events" ||
         (w.group == "coordination.k8s.io" && w.resource == "leases");
}

std::string ResourceName(const std::string& group,
                         const std::string& resource) {
  return group.empty() ? resource : absl::StrCat(resource, ".", group);
}

bool SameObject(const Write& a, const Write& b) {
  return a.group == b.group && a.resource == b.resource &&
         a.namespace_ == b.namespace_ && a.name == b.name;
}

std::string Describe(const Write& w, const std::string& base) {
  std::string who = w.user_agent;
  if (absl::StartsWith(who, base)) who = who.substr(base.size());
  return absl::StrCat(
      w.seq, " ", w.verb, " ", ResourceName(w.group, w.resource),
      w.subresource.empty() ? "" : "/", w.subresource, " ", w.namespace_,
      w.namespace_.empty() ? "" : "/", w.name, " by ", who);
}

// What the reference run records for enumerating points and comparing.
struct Recording {
  std::vector<Write> all_writes;
  std::vector<Write> controller_writes;
  // The user's writes, per step, and the user's identity.
  std::vector<std::vector<Write>> step_writes;
  std::string user_agent;
  // The state after each step (converged), and at the end.
  std::vector<EndState> step_states;
  EndState end_state;
};

struct Outcome {
  std::vector<Finding> findings;
  Recording recording;
  bool fired = false;
  int managers = 0;
  absl::Duration wall;
};

// A Manager of a run: its own identity, caches and thread.
struct Incarnation {
  std::unique_ptr<controller::Manager> mgr;
  // The Manager's client (owned by it).
  FencedClient* client = nullptr;
  std::string user_agent;
  CancelFunc cancel;
  std::thread thread;
  Mutex mu;
  bool returned ABSL_GUARDED_BY(mu) = false;
  absl::Status status ABSL_GUARDED_BY(mu);
};

// One run of the scenario, at one point (or the reference run).
class Run {
 public:
  Run(const Scenario& scenario, const ExplorerOptions& options, Point point,
      const Recording* reference, const std::string& run_id)
      : scenario_(scenario),
        options_(options),
        point_(std::move(point)),
        reference_(reference),
        base_(absl::StrCat("kcr-explorer/", scenario.name, "/", run_id, "/")) {
    out_.recording.step_writes.resize(scenario.steps.size());
    out_.recording.user_agent = base_ + "user";
  }

  Outcome Go() {
    const absl::Time start = absl::Now();
    if (Setup() && StartManager() && WaitConverged("the Manager started")) {
      RunSteps();
    }
    if (out_.findings.empty()) CheckEnd();
    StopManager(/*expect_ok=*/out_.findings.empty());
    if (faults_ != nullptr) rules_fired_ = faults_->rules_fired();
    faults_.reset();
    if (env_ != nullptr) env_->Stop();
    out_.fired = out_.fired || crash_fired_.load() || rules_fired_ > 0;
    out_.managers = managers_;
    out_.wall = absl::Now() - start;
    return std::move(out_);
  }

 private:
  std::string ManagerPrefix() const { return base_ + "m"; }
  std::string UserAgentOf(int n) const {
    return absl::StrCat(base_, "m", n, " kcr");
  }

  void Fail(std::string oracle, std::string message) {
    LOG(INFO) << "explorer finding scenario=" << scenario_.name
              << " point=" << point_.ToString() << " oracle=" << oracle << " "
              << message;
    out_.findings.push_back(
        Finding{point_, std::move(oracle), std::move(message), "", ""});
  }

  bool Setup() {
    envtest::EnvironmentOptions env_options;
    env_options.crds = scenario_.crds;
    env_options.objects = scenario_.objects;
    // A simulated node that runs pods at once keeps every wait short.
    env_options.configure_server = [](apiserver::ApiServerOptions& o) {
      o.controllers.node.running_after = absl::Milliseconds(20);
      o.controllers.node.deployment_ready_after = absl::Milliseconds(20);
      // Frequent bookmarks tell when a watch has caught up with the writes.
      o.bookmark_interval = absl::Milliseconds(50);
    };
    auto env = envtest::Environment::Start(std::move(env_options));
    if (!env.ok()) {
      Fail("setup",
           absl::StrCat("starting the server: ", env.status().ToString()));
      return false;
    }
    env_ = *std::move(env);
    faults_ = std::make_unique<ServerFaults>(env_->server());
    client::Config config = env_->rest_config();
    config.user_agent = base_ + "user";
    auto user = client::NewRestClient(config);
    if (!user.ok()) {
      Fail("setup", user.status().ToString());
      return false;
    }
    user_ = *std::move(user);
    seen_seq_ = faults_->last_seq();
    return ArmPoint();
  }

  // The faults set before the first Manager starts.
  bool ArmPoint() {
    absl::Status armed;
    if (point_.kind == Point::Kind::kCrashAfterWrite) {
      const std::string prefix = ManagerPrefix();
      const int k = point_.write;
      // On the writing thread, before the K-th write is answered: the
      // Manager's own client refuses everything from here on, and the
      // server drops its identity where it can.
      ServerFaults* faults = faults_.get();
      faults->Subscribe([this, faults, prefix, k](const Write& w) {
        if (Ignored(w) || !absl::StartsWith(w.user_agent, prefix)) return;
        if (++writes_counted_ != k) return;
        FencedClient* client = first_client_.load();
        if (client != nullptr) client->Fence();
        absl::Status s = faults->CrashNow(w.user_agent);
        if (!s.ok() && !absl::IsUnimplemented(s)) {
          LOG(ERROR) << "explorer: the server's crash fence failed: " << s;
        }
        crash_fired_ = true;
      });
    } else if (point_.kind == Point::Kind::kError) {
      const auto& writes = reference_->controller_writes;
      if (point_.write > static_cast<int>(writes.size())) {
        Fail("setup", "no such write in the reference run");
        return false;
      }
      const Write& w = writes[point_.write - 1];
      int nth = 0;
      for (int i = 0; i < point_.write; ++i) {
        const Write& o = writes[i];
        if (o.verb == w.verb && o.group == w.group &&
            o.resource == w.resource && o.subresource == w.subresource) {
          ++nth;
        }
      }
      Match match{w.verb, w.group, w.resource,     w.subresource,
                  "",     "",      ManagerPrefix()};
      armed = faults_->FailRequest(match, nth, point_.code, point_.after_store);
    }
    if (!armed.ok()) {
      Fail("setup", armed.ToString());
      return false;
    }
    return true;
  }

  bool StartManager() {
    auto inc = std::make_unique<Incarnation>();
    inc->user_agent = UserAgentOf(++managers_);
    client::Config config = env_->rest_config();
    config.user_agent = inc->user_agent;
    auto client = client::NewRestClient(config);
    if (!client.ok()) {
      Fail("setup", absl::StrCat("a client: ", client.status().ToString()));
      return false;
    }
    auto fenced = std::make_unique<FencedClient>(*std::move(client));
    inc->client = fenced.get();
    if (managers_ == 1) first_client_ = fenced.get();
    controller::ManagerOptions options;
    options.leader_election = false;
    options.graceful_shutdown_timeout = options_.shutdown_timeout;
    options.cache_sync_timeout = options_.convergence_timeout;
    auto mgr = controller::Manager::New(std::move(fenced), std::move(options));
    if (!mgr.ok()) {
      Fail("setup", absl::StrCat("a new Manager: ", mgr.status().ToString()));
      return false;
    }
    inc->mgr = *std::move(mgr);
    absl::Status s = env_->MapCrds(*inc->mgr->GetRESTMapper());
    if (s.ok()) s = scenario_.add_controllers(inc->mgr.get());
    if (!s.ok()) {
      Fail("setup", absl::StrCat("adding the controllers: ", s.ToString()));
      return false;
    }
    auto [ctx, cancel] = WithCancel(Context::Background());
    inc->cancel = cancel;
    Incarnation* raw = inc.get();
    inc->thread = std::thread([raw, ctx = ctx] {
      absl::Status status = raw->mgr->Start(ctx);
      MutexLock lock(&raw->mu);
      raw->status = status;
      raw->returned = true;
    });
    current_ = std::move(inc);
    last_write_ = absl::Now();
    return true;
  }

  // Stops the current Manager (a crashed one: what it still tries fails,
  // the server drops it) and forgets it with its caches.
  void StopManager(bool expect_ok) {
    if (current_ == nullptr) return;
    current_->cancel();
    current_->thread.join();
    absl::Status status;
    {
      MutexLock lock(&current_->mu);
      status = current_->status;
    }
    if (expect_ok && !status.ok()) {
      Fail("manager-failed",
           absl::StrCat("m", managers_, " stopped with ", status.ToString()));
    }
    current_.reset();
  }

  bool ManagerReturned(absl::Status* status) {
    MutexLock lock(&current_->mu);
    *status = current_->status;
    return current_->returned;
  }

  // Reads the write log since the last poll.
  void Poll() {
    const std::string prefix = ManagerPrefix();
    const std::string user = base_ + "user";
    for (Write& w : faults_->WritesSince(seen_seq_)) {
      seen_seq_ = w.seq;
      int64_t& last = last_version_[absl::StrCat(w.group, "/", w.resource)];
      last = std::max(last, w.resource_version);
      if (w.user_agent == user && step_ > 0) {
        out_.recording.step_writes[step_ - 1].push_back(w);
      }
      if (!Ignored(w)) {
        last_write_ = absl::Now();
        if (absl::StartsWith(w.user_agent, prefix)) {
          out_.recording.controller_writes.push_back(w);
        }
      }
      out_.recording.all_writes.push_back(std::move(w));
    }
  }

  // Whether every controller's queue is empty with nothing in flight.
  static bool Idle(controller::Manager& mgr) {
    double busy = 0;
    for (const auto& family : mgr.GetMetricsRegistry().Collect()) {
      if (family.name != "workqueue_depth" &&
          family.name != "controller_runtime_active_workers") {
        continue;
      }
      for (const auto& m : family.metric) busy += m.gauge.value;
    }
    return busy == 0;
  }

  bool HoldActive() const { return hold_id_.has_value(); }

  // Whether every watch of the Manager delivered (an event or a bookmark)
  // every write to its collection so far.
  bool CaughtUp() const {
    return current_->client->CaughtUp(
        [this](const std::string& group, const std::string& resource) {
          auto it = last_version_.find(absl::StrCat(group, "/", resource));
          return it == last_version_.end() ? int64_t{0} : it->second;
        });
  }

  bool WaitConverged(const std::string& after) {
    const absl::Time begin = absl::Now();
    const absl::Time deadline = begin + options_.convergence_timeout;
    while (true) {
      Poll();
      if (crash_fired_ && !crash_handled_) {
        crash_handled_ = true;
        StopManager(/*expect_ok=*/false);
        if (!StartManager()) return false;
      }
      absl::Status status;
      if (ManagerReturned(&status)) {
        Fail("manager-failed",
             absl::StrCat("m", managers_, " stopped by itself after ", after,
                          ": ", status.ToString()));
        return false;
      }
      const absl::Time now = absl::Now();
      if (HoldActive() && now >= hold_release_at_) {
        faults_->ReleaseHold(*hold_id_);
        hold_id_.reset();
        last_write_ = now;
      }
      // A view held until the next step: the controllers may never settle
      // on it (they keep acting on what they cannot see); the next step
      // comes after `hold_for` at most.
      const bool held_for_next_step =
          HoldActive() && hold_release_at_ == absl::InfiniteFuture();
      if (held_for_next_step && now - begin >= options_.hold_for) return true;
      if ((!HoldActive() || held_for_next_step) &&
          now - last_write_ >= options_.quiet && current_->mgr->IsLeader() &&
          Idle(*current_->mgr) && (held_for_next_step || CaughtUp())) {
        VLOG(1) << "explorer run=" << base_ << " converged after " << after
                << " seq=" << seen_seq_;
        return true;
      }
      if (now > deadline) {
        std::vector<std::string> recent;
        const auto& writes = out_.recording.controller_writes;
        for (size_t i = writes.size() > 5 ? writes.size() - 5 : 0;
             i < writes.size(); ++i) {
          recent.push_back(Describe(writes[i], base_));
        }
        Fail("not-converged",
             absl::StrCat("no quiet ", absl::FormatDuration(options_.quiet),
                          " within ",
                          absl::FormatDuration(options_.convergence_timeout),
                          " after ", after, "; the controllers' last writes: ",
                          absl::StrJoin(recent, "; ")));
        return false;
      }
      absl::SleepFor(kPoll);
    }
  }

  bool CheckInvariants(const std::string& after) {
    for (const Invariant& inv : scenario_.invariants) {
      if (inv.needs_current_view && HoldActive()) continue;
      const auto [ctx, cancel] =
          WithTimeout(Context::Background(), kRequestTimeout);
      absl::Status s = inv.check(ctx, *user_);
      cancel();
      if (!s.ok()) {
        Fail("invariant", absl::StrCat("\"", inv.name, "\" after ", after, ": ",
                                       s.message()));
        return false;
      }
    }
    return true;
  }

  // Sets the watch faults that start before step `s`'s action.
  bool BeforeStep(int s) {
    if (point_.kind == Point::Kind::kStaleView && point_.step == s) {
      Match match;
      const size_t dot = point_.resource.find('.');
      match.resource = point_.resource.substr(0, dot);
      if (dot != std::string::npos)
        match.group = point_.resource.substr(dot + 1);
      match.user_agent = ManagerPrefix();
      auto id = faults_->HoldWatch(match);
      if (!id.ok()) {
        Fail("setup", id.status().ToString());
        return false;
      }
      hold_id_ = *id;
      hold_release_at_ = absl::InfiniteFuture();
      out_.fired = true;
    }
    if (point_.kind == Point::Kind::kUnobserved && point_.step == s) {
      const auto& writes = reference_->step_writes[s - 1];
      if (point_.nth > static_cast<int>(writes.size())) {
        Fail("setup", "no such write in the reference run's step");
        return false;
      }
      const Write& w = writes[point_.nth - 1];
      Match match{"",           w.group, w.resource,     "",
                  w.namespace_, w.name,  ManagerPrefix()};
      absl::Status s = faults_->DropNextWatchEvent(match);
      if (!s.ok()) {
        Fail("setup", s.ToString());
        return false;
      }
    }
    return true;
  }

  // A held kind is released hold_for after the step that follows the one
  // it began at started (after the last step: after that one).
  void AfterAction(int s) {
    if (!HoldActive()) return;
    const int steps = static_cast<int>(scenario_.steps.size());
    if (point_.step == s - 1 || (point_.step == s && s == steps)) {
      hold_release_at_ = absl::Now() + options_.hold_for;
    }
  }

  void RunSteps() {
    for (size_t i = 0; i < scenario_.steps.size(); ++i) {
      const int s = static_cast<int>(i) + 1;
      const Step& step = scenario_.steps[i];
      const std::string what =
          absl::StrCat("step ", s, " (", step.description, ")");
      Poll();
      step_ = s;
      if (!BeforeStep(s)) return;
      const auto [ctx, cancel] =
          WithTimeout(Context::Background(), kRequestTimeout);
      absl::Status done = step.run(ctx, *user_);
      cancel();
      VLOG(1) << "explorer run=" << base_ << " " << what << " done: " << done;
      if (!done.ok()) {
        Fail("step-failed", absl::StrCat(what, ": ", done.ToString()));
        return;
      }
      AfterAction(s);
      if (!WaitConverged(what)) return;
      if (!CheckInvariants(what)) return;
      if (!CheckState(s, what)) return;
    }
    step_ = 0;
    if (!WaitConverged("the last step")) return;
    // No hot loop: once converged, the controllers stay (nearly) quiet.
    const size_t before = out_.recording.controller_writes.size();
    const absl::Time end = absl::Now() + options_.hot_loop_window;
    while (absl::Now() < end) {
      absl::SleepFor(kPoll);
      Poll();
    }
    const auto& writes = out_.recording.controller_writes;
    const int more = static_cast<int>(writes.size() - before);
    if (more > options_.hot_loop_max_writes) {
      std::vector<std::string> lines;
      for (size_t i = before; i < writes.size() && lines.size() < 5; ++i) {
        lines.push_back(Describe(writes[i], base_));
      }
      Fail("hot-loop",
           absl::StrCat(more, " writes within ",
                        absl::FormatDuration(options_.hot_loop_window),
                        " after converging: ", absl::StrJoin(lines, "; ")));
    }
  }

  // The state now: the objects of the scenario's collections, normalised.
  std::optional<EndState> ReadState() {
    std::vector<StateObject> objects;
    for (const Collection& c : scenario_.state) {
      const client::Resource& r = c.resource;
      client::ListOptions list_options;
      list_options.label_selector = c.label_selector;
      const auto [ctx, cancel] =
          WithTimeout(Context::Background(), kRequestTimeout);
      auto list = user_->List(ctx, r, list_options);
      cancel();
      if (!list.ok()) {
        Fail("setup", absl::StrCat("listing ", r.gvr.resource, ": ",
                                   list.status().ToString()));
        return std::nullopt;
      }
      for (api::ObjectPtr& o : list->items) {
        objects.push_back(
            StateObject{r.gvr.group, r.gvr.resource, std::move(o)});
      }
    }
    return EndState::Of(objects, scenario_.ignored_fields);
  }

  // Whether the state after step `s` must equal the reference's: not while
  // a stale view may still be settling it, nor between an unobserved write
  // and the user's next write of that object.
  bool Comparable(int s) const {
    if (point_.kind == Point::Kind::kStaleView) return s != point_.step;
    if (point_.kind != Point::Kind::kUnobserved) return true;
    if (s < point_.step) return true;
    const Write& dropped =
        reference_->step_writes[point_.step - 1][point_.nth - 1];
    for (int t = point_.step + 1; t <= s; ++t) {
      for (const Write& w : reference_->step_writes[t - 1]) {
        if (SameObject(w, dropped)) return true;
      }
    }
    return false;
  }

  // Records the state after step `s` and compares it with the reference
  // run's there.
  bool CheckState(int s, const std::string& after) {
    std::optional<EndState> state = ReadState();
    if (!state.has_value()) return false;
    out_.recording.step_states.push_back(*state);
    if (reference_ == nullptr || !Comparable(s)) return true;
    std::string diff = state->DiffFrom(reference_->step_states[s - 1]);
    if (diff.empty()) return true;
    Fail("diverged",
         absl::StrCat("the state after ", after,
                      " differs from the reference run's:\n", diff));
    return false;
  }

  // Reads the end state and compares it with the reference run's.
  void CheckEnd() {
    std::optional<EndState> state = ReadState();
    if (!state.has_value()) return;
    out_.recording.end_state = *state;
    if (reference_ == nullptr) return;
    std::string diff = out_.recording.end_state.DiffFrom(reference_->end_state);
    if (!diff.empty()) {
      Fail("diverged", absl::StrCat("the end state differs from the reference "
                                    "run's:\n",
                                    diff));
    }
  }

  const Scenario& scenario_;
  const ExplorerOptions& options_;
  const Point point_;
  const Recording* const reference_;
  const std::string base_;

  std::unique_ptr<envtest::Environment> env_;
  std::unique_ptr<ServerFaults> faults_;
  std::unique_ptr<client::RestClient> user_;
  std::unique_ptr<Incarnation> current_;
  int managers_ = 0;
  int64_t seen_seq_ = 0;
  // The latest resourceVersion written per "group/resource".
  absl::flat_hash_map<std::string, int64_t> last_version_;
  absl::Time last_write_;
  // The step being run (1-based), 0 outside the steps.
  int step_ = 0;
  std::optional<int64_t> hold_id_;
  absl::Time hold_release_at_ = absl::InfiniteFuture();
  // Counted on the server's writing threads (the crash point's subscriber).
  std::atomic<int> writes_counted_{0};
  std::atomic<bool> crash_fired_{false};
  // The first Manager's client, which the crash point fences.
  std::atomic<FencedClient*> first_client_{nullptr};
  bool crash_handled_ = false;
  int64_t rules_fired_ = 0;
  Outcome out_;
};

std::vector<Point> Enumerate(const Scenario& scenario,
                             const ExplorerOptions& options,
                             const Recording& ref) {
  std::vector<Point> points;
  const int writes = static_cast<int>(ref.controller_writes.size());
  if (options.crash) {
    for (int k = 1; k <= writes; ++k) {
      Point p;
      p.kind = Point::Kind::kCrashAfterWrite;
      p.write = k;
      points.push_back(p);
    }
  }
  if (options.api_errors) {
    for (int k = 1; k <= writes; ++k) {
      for (int code : {409, 500, 429, 504}) {
        Point p;
        p.kind = Point::Kind::kError;
        p.write = k;
        p.code = code;
        p.after_store = code == 504;
        points.push_back(p);
      }
    }
  }
  const int steps = static_cast<int>(scenario.steps.size());
  if (options.stale_view) {
    std::vector<std::string> kinds;
    for (const Collection& c : scenario.state) {
      std::string name =
          ResourceName(c.resource.gvr.group, c.resource.gvr.resource);
      if (std::find(kinds.begin(), kinds.end(), name) == kinds.end()) {
        kinds.push_back(name);
      }
    }
    for (int s = 1; s <= steps; ++s) {
      for (const std::string& kind : kinds) {
        Point p;
        p.kind = Point::Kind::kStaleView;
        p.resource = kind;
        p.step = s;
        points.push_back(p);
      }
    }
  }
  if (options.unobserved) {
    for (int s = 1; s <= steps; ++s) {
      const auto& user_writes = ref.step_writes[s - 1];
      for (size_t n = 0; n < user_writes.size(); ++n) {
        const Write& w = user_writes[n];
        if (Ignored(w)) continue;
        bool first_in_step = true;
        for (size_t m = 0; m < n; ++m) {
          if (SameObject(user_writes[m], w)) first_in_step = false;
        }
        // Written again later by the user, so that the run sees the
        // object's final state whatever the controllers do.
        bool written_later = false;
        for (const Write& later : ref.all_writes) {
          if (later.seq > w.seq && later.user_agent == ref.user_agent &&
              SameObject(later, w)) {
            written_later = true;
          }
        }
        if (!first_in_step || !written_later) continue;
        Point p;
        p.kind = Point::Kind::kUnobserved;
        p.step = s;
        p.nth = static_cast<int>(n) + 1;
        points.push_back(p);
      }
    }
  }
  return points;
}

std::string Reproduction(const std::string& selection) {
  const char* target = getenv("TEST_TARGET");
  if (target != nullptr && *target != '\0') {
    return absl::StrCat("bazel test ", target, " --test_env=", kExploreEnv, "=",
                        selection);
  }
  return absl::StrCat(kExploreEnv, "=", selection, " ",
                      program_invocation_name);
}

absl::Status Validate(const Scenario& s) {
  if (s.name.empty() || !std::all_of(s.name.begin(), s.name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      })) {
    return absl::InvalidArgumentError(
        absl::StrCat("scenario name \"", s.name, "\": want [a-z0-9-]+"));
  }
  if (!s.add_controllers) {
    return absl::InvalidArgumentError(
        absl::StrCat("scenario ", s.name, ": no add_controllers"));
  }
  for (const Step& step : s.steps) {
    if (!step.run) {
      return absl::InvalidArgumentError(
          absl::StrCat("scenario ", s.name, ": step \"", step.description,
                       "\" does nothing"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string Finding::ToString() const {
  return absl::StrCat("FAIL ", point.ToString(), " [", oracle, "] ", message,
                      "\n  reproduce: ", reproduction);
}

std::vector<Finding> Report::FindingsOf(const std::string& point_class) const {
  std::vector<Finding> out;
  for (const Finding& f : findings) {
    if (f.point.Class() == point_class) out.push_back(f);
  }
  return out;
}

std::string Report::ToString() const {
  if (skipped) {
    return absl::StrCat("explorer ", scenario, ": skipped (", kExploreEnv,
                        " selects another scenario)\n");
  }
  int fired = 0;
  for (const PointRun& r : runs) fired += r.fired ? 1 : 0;
  std::string out = absl::StrCat(
      "explorer ", scenario, " seed=", seed, ": ", runs.size(),
      " runs (the reference and ", runs.empty() ? 0 : runs.size() - 1,
      " points, ", fired, " of them perturbed as planned), ",
      reference_writes.size(), " controller writes in the reference, ",
      findings.size(), " findings, ", absl::FormatDuration(wall), "\n");
  for (const Finding& f : findings) absl::StrAppend(&out, f.ToString(), "\n");
  return out;
}

absl::StatusOr<Report> Explore(const Scenario& scenario,
                               ExplorerOptions options) {
  if (absl::Status s = Validate(scenario); !s.ok()) return s;
  const absl::Time start = absl::Now();
  Report report;
  report.scenario = scenario.name;

  std::optional<Point> only;
  if (!options.only.empty()) {
    auto p = Point::Parse(options.only);
    if (!p.ok()) return p.status();
    only = *p;
  }
  const char* env = options.read_env ? getenv(kExploreEnv) : nullptr;
  if (env != nullptr && *env != '\0') {
    auto selection = Selection::Parse(env);
    if (!selection.ok()) return selection.status();
    if (selection->scenario != scenario.name) {
      report.skipped = true;
      return report;
    }
    only = selection->point;
    options.seed = selection->seed;
  }
  report.seed = options.seed;

  auto finish = [&](const Point& point, std::vector<Finding>* findings) {
    for (Finding& f : *findings) {
      f.selection = Selection{scenario.name, point, options.seed}.ToString();
      f.reproduction = Reproduction(f.selection);
      LOG(WARNING) << "explorer " << f.ToString();
      report.findings.push_back(std::move(f));
    }
  };

  Outcome ref = Run(scenario, options, Point{}, nullptr, "reference").Go();
  report.runs.push_back(
      PointRun{Point{}, ref.wall, false, ref.managers,
               static_cast<int>(ref.recording.controller_writes.size()),
               ref.findings.empty()});
  const std::string ref_base =
      absl::StrCat("kcr-explorer/", scenario.name, "/reference/");
  for (const Write& w : ref.recording.controller_writes) {
    report.reference_writes.push_back(Describe(w, ref_base));
  }
  report.reference_state = ref.recording.end_state;
  LOG(INFO) << "explorer " << scenario.name << ": the reference run's "
            << report.reference_writes.size() << " controller writes:\n  "
            << absl::StrJoin(report.reference_writes, "\n  ");
  if (!ref.findings.empty()) {
    finish(Point{}, &ref.findings);
    report.wall = absl::Now() - start;
    return report;
  }

  std::vector<Point> points = Enumerate(scenario, options, ref.recording);
  if (only.has_value()) {
    std::vector<Point> selected;
    for (const Point& p : points) {
      if (p.ToString() == only->ToString()) selected.push_back(p);
    }
    if (selected.empty() && only->kind != Point::Kind::kReference) {
      return absl::NotFoundError(absl::StrCat(
          "scenario ", scenario.name, " has no point ", only->ToString(),
          " (its reference run made ", ref.recording.controller_writes.size(),
          " controller writes)"));
    }
    points = selected;
  }
  // Run in an order fixed by the seed, so long points spread over the
  // workers; report in enumeration order.
  std::vector<size_t> order(points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 rng(options.seed);
  std::shuffle(order.begin(), order.end(), rng);
  if (options.max_points > 0 &&
      order.size() > static_cast<size_t>(options.max_points)) {
    order.resize(options.max_points);
  }

  std::vector<std::optional<Outcome>> outcomes(points.size());
  Mutex mu;
  size_t next = 0;
  auto worker = [&] {
    while (true) {
      size_t i;
      {
        MutexLock lock(&mu);
        if (next >= order.size()) return;
        i = order[next++];
      }
      const std::string run_id = absl::StrCat("p", i + 1);
      Outcome o =
          Run(scenario, options, points[i], &ref.recording, run_id).Go();
      MutexLock lock(&mu);
      outcomes[i] = std::move(o);
    }
  };
  std::vector<std::thread> workers;
  const int n = std::max(1, std::min<int>(options.parallelism, order.size()));
  for (int i = 0; i < n; ++i) workers.emplace_back(worker);
  for (std::thread& t : workers) t.join();

  for (size_t i = 0; i < points.size(); ++i) {
    if (!outcomes[i].has_value()) continue;
    Outcome& o = *outcomes[i];
    report.runs.push_back(
        PointRun{points[i], o.wall, o.fired, o.managers,
                 static_cast<int>(o.recording.controller_writes.size()),
                 o.findings.empty()});
    finish(points[i], &o.findings);
  }
  report.wall = absl::Now() - start;
  LOG(INFO) << report.ToString();
  return report;
}

}  // namespace kcr::explorer
