// Managers with leader election against the local API server over HTTP:
// exactly one replica runs its controllers at a time; a cleanly stopped
// leader hands over at once (it releases the Lease), a killed one after the
// lease expires; with the server failing requests and cutting watches the
// terms of the leaders still never overlap. And one Manager's endpoints:
// /readyz flips when the caches sync, /healthz, and /metrics as Prometheus
// scrapes it.
#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "api/object_builder.h"
#include "api/types/event.h"
#include "apiserver/api_server.h"
#include "apiserver/endpoints/faults.h"
#include "base/context.h"
#include "base/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/client/rest_client.h"
#include "runtime/controller/builder.h"
#include "runtime/controller/manager.h"
#include "runtime/controller/runnable.h"
#include "runtime/events/event_recorder.h"
#include "test/apiserver/api_server_fixture.h"
#include "test/runtime/metrics/raw_http.h"

namespace kcr {
namespace {

using ::kcr::metrics::testing::Body;
using ::kcr::metrics::testing::Get;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const Context kBg = Context::Background();

// Short terms, so that the test takes seconds: a standby takes an
// unreleased Lease over 3 s after it last saw it renewed.
constexpr absl::Duration kLease = absl::Seconds(3);
constexpr absl::Duration kRenew = absl::Seconds(2);
constexpr absl::Duration kRetry = absl::Milliseconds(200);

client::Resource ConfigMaps() {
  return client::Resource::Namespaced({"", "v1", "configmaps"});
}

bool Eventually(const std::function<bool()>& cond,
                absl::Duration timeout = absl::Seconds(60)) {
  const absl::Time give_up = absl::Now() + timeout;
  while (!cond()) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

// What ran, by whom, when: the leader's work of every replica.
class Log {
 public:
  struct Interval {
    std::string who;
    absl::Time start;
    absl::Time end;
  };
  void Add(Interval i) {
    MutexLock lock(&mu_);
    intervals_.push_back(std::move(i));
  }
  std::vector<Interval> Intervals() {
    MutexLock lock(&mu_);
    return intervals_;
  }
  int CountBy(const std::string& who) {
    MutexLock lock(&mu_);
    return static_cast<int>(
        std::count_if(intervals_.begin(), intervals_.end(),
                      [&](const Interval& i) { return i.who == who; }));
  }
  // Pairs of intervals of different replicas that overlap, described.
  std::vector<std::string> Overlaps() {
    std::vector<Interval> all = Intervals();
    std::sort(all.begin(), all.end(), [](const Interval& a, const Interval& b) {
      return a.start < b.start;
    });
    std::vector<std::string> out;
    for (size_t i = 0; i < all.size(); ++i) {
      for (size_t j = i + 1; j < all.size() && all[j].start < all[i].end; ++j) {
        if (all[j].who != all[i].who) {
          out.push_back(
              absl::StrCat(all[i].who, " ", absl::FormatTime(all[i].start),
                           "..", absl::FormatTime(all[i].end), " and ",
                           all[j].who, " ", absl::FormatTime(all[j].start),
                           "..", absl::FormatTime(all[j].end)));
        }
      }
    }
    return out;
  }

 private:
  Mutex mu_;
  std::vector<Interval> intervals_ ABSL_GUARDED_BY(mu_);
};

// Reconciles by logging how long it worked, stamped with its replica.
class LoggingReconciler final : public controller::Reconciler {
 public:
  LoggingReconciler(std::string who, Log* log)
      : who_(std::move(who)), log_(log) {}
  absl::StatusOr<controller::Result> Reconcile(
      const controller::Request&, controller::ReconcileContext&) override {
    const absl::Time start = absl::Now();
    absl::SleepFor(absl::Milliseconds(5));
    log_->Add({who_, start, absl::Now()});
    return controller::Result::Done();
  }

 private:
  const std::string who_;
  Log* const log_;
};

struct Replica {
  std::string name;
  std::unique_ptr<controller::Manager> mgr;
  Context ctx;
  CancelFunc cancel;
  std::thread thread;
  absl::Status result;
  std::atomic<bool> returned{false};

  // Stops it (as a process that exits: with or without releasing, as it
  // was configured) and waits for Start to return.
  void Stop() {
    cancel();
    if (thread.joinable()) thread.join();
  }
  ~Replica() { Stop(); }
};

class ManagerLeaderElectionTest : public kcr::testing::ApiServerFixture {
 protected:
  // The simulated node on, as in a cluster.
  void SetUp() override { StartServer(apiserver::ApiServerOptions()); }

  void TearDown() override {
    StopWriting();
    replicas_.clear();
  }

  controller::ManagerOptions Options(const std::string& name, bool release) {
    controller::ManagerOptions o;
    o.leader_election = true;
    o.leader_election_id = "kcr-test-controller";
    o.leader_election_namespace = "default";
    o.leader_election_identity = name;
    o.lease_duration = kLease;
    o.renew_deadline = kRenew;
    o.retry_period = kRetry;
    o.leader_election_release_on_cancel = release;
    o.graceful_shutdown_timeout = absl::Seconds(5);
    return o;
  }

  // A replica running a controller over ConfigMaps and a leader-only
  // Runnable whose run is one term, both logged.
  Replica* StartReplica(const std::string& name, bool release = true,
                        controller::ManagerOptions* options = nullptr) {
    controller::ManagerOptions o =
        options != nullptr ? *options : Options(name, release);
    auto mgr = controller::Manager::New(config_, o);
    EXPECT_TRUE(mgr.ok()) << mgr.status();
    if (!mgr.ok()) return nullptr;
    auto replica = std::make_unique<Replica>();
    replica->name = name;
    replica->mgr = *std::move(mgr);
    absl::Status built =
        controller::ControllerBuilder(*replica->mgr)
            .For(ConfigMaps())
            .Named("log")
            .Complete(std::make_shared<LoggingReconciler>(name, &reconciles_));
    EXPECT_TRUE(built.ok()) << built;
    Log* terms = &terms_;
    EXPECT_TRUE(replica->mgr
                    ->Add(std::make_unique<controller::RunnableFunc>(
                        "term",
                        [name, terms](const Context& ctx) {
                          const absl::Time start = absl::Now();
                          while (!ctx.done()) {
                            absl::SleepFor(absl::Milliseconds(2));
                          }
                          terms->Add({name, start, absl::Now()});
                          return absl::OkStatus();
                        },
                        /*need_leader_election=*/true))
                    .ok());
    std::tie(replica->ctx, replica->cancel) = WithCancel(kBg);
    Replica* r = replica.get();
    r->thread = std::thread([r] {
      r->result = r->mgr->Start(r->ctx);
      r->returned = true;
    });
    replicas_.push_back(std::move(replica));
    return r;
  }

  // Keeps changing a ConfigMap, so that the leader keeps reconciling.
  void StartWriting() {
    writer_ = std::thread([this] {
      int n = 0;
      while (!stop_writing_) {
        api::ObjectBuilder b("v1", "ConfigMap");
        b.SetNamespace("default").SetName(absl::StrCat("tick-", n % 5));
        (void)b.SetString("/data/n", absl::StrCat(n));
        auto cm = b.Build();
        if (n < 5) {
          (void)client_->Create(kBg, ConfigMaps().InNamespace("default"), **cm);
        } else {
          (void)client_->Update(kBg, ConfigMaps().InNamespace("default"), **cm);
        }
        ++n;
        absl::SleepFor(absl::Milliseconds(20));
      }
    });
  }
  void StopWriting() {
    stop_writing_ = true;
    if (writer_.joinable()) writer_.join();
  }

  // The replicas that lead now.
  std::vector<Replica*> Leaders() {
    std::vector<Replica*> out;
    for (auto& r : replicas_) {
      if (!r->returned && r->mgr->IsLeader()) out.push_back(r.get());
    }
    return out;
  }
  Replica* WaitForOneLeader() {
    Replica* leader = nullptr;
    EXPECT_TRUE(Eventually([&] {
      std::vector<Replica*> l = Leaders();
      leader = l.size() == 1 ? l[0] : nullptr;
      return leader != nullptr;
    }));
    return leader;
  }

  Log reconciles_;
  Log terms_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::thread writer_;
  std::atomic<bool> stop_writing_{false};
};

TEST_F(ManagerLeaderElectionTest, OneLeaderAndACleanStopHandsOverAtOnce) {
  // A lease far longer than the wait below: the standby can take over in
  // time only if the leader released the Lease. (Renewals still come every
  // retry period.)
  constexpr absl::Duration kLongLease = absl::Minutes(5);
  controller::ManagerOptions a = Options("a", /*release=*/true);
  controller::ManagerOptions b = Options("b", /*release=*/true);
  for (controller::ManagerOptions* o : {&a, &b}) {
    o->lease_duration = kLongLease;
    o->renew_deadline = absl::Minutes(1);
  }
  StartWriting();
  StartReplica("a", /*release=*/true, &a);
  StartReplica("b", /*release=*/true, &b);
  Replica* leader = WaitForOneLeader();
  ASSERT_NE(leader, nullptr);
  Replica* standby =
      leader == replicas_[0].get() ? replicas_[1].get() : replicas_[0].get();
  // The leader reconciles; the standby, whose caches are warm (it is
  // ready), does not.
  ASSERT_TRUE(
      Eventually([&] { return reconciles_.CountBy(leader->name) > 5; }));
  EXPECT_EQ(reconciles_.CountBy(standby->name), 0);
  EXPECT_FALSE(standby->mgr->IsLeader());

  // A clean stop releases the Lease: the standby takes over at once, not
  // after the lease (5 min) ran out; the wait gives up after 30 s.
  const absl::Time stop = absl::Now();
  leader->Stop();
  EXPECT_TRUE(leader->result.ok()) << leader->result;
  ASSERT_TRUE(
      Eventually([&] { return standby->mgr->IsLeader(); }, absl::Seconds(30)))
      << "the standby did not take the released Lease within 30 s";
  std::cerr << "takeover after a clean stop: " << (absl::Now() - stop) << "\n";
  ASSERT_TRUE(
      Eventually([&] { return reconciles_.CountBy(standby->name) > 5; }));
  StopWriting();
  standby->Stop();
  EXPECT_TRUE(standby->result.ok()) << standby->result;
  EXPECT_THAT(reconciles_.Overlaps(), ::testing::IsEmpty());
  EXPECT_THAT(terms_.Overlaps(), ::testing::IsEmpty());
  EXPECT_EQ(terms_.Intervals().size(), 2u);
}

TEST_F(ManagerLeaderElectionTest, AKilledLeaderIsReplacedOnceTheLeaseExpires) {
  StartWriting();
  // Without release: what a killed process leaves behind.
  Replica* first = StartReplica("killed", /*release=*/false);
  ASSERT_TRUE(Eventually([&] { return first->mgr->IsLeader(); }));
  Replica* second = StartReplica("standby");
  ASSERT_TRUE(Eventually([&] { return reconciles_.CountBy("killed") > 3; }));
  const absl::Time kill = absl::Now();
  first->Stop();
  // Replaced once the lease expires: the wait (30 s, ten leases) only
  // guards against a standby that never takes an expired Lease over.
  ASSERT_TRUE(
      Eventually([&] { return second->mgr->IsLeader(); }, absl::Seconds(30)))
      << "the standby did not take the expired Lease within 30 s";
  const absl::Duration takeover = absl::Now() - kill;
  // Not before the lease expired (judged from when the standby last saw it
  // renewed, at most a retry before the kill).
  EXPECT_GE(takeover, kLease - kRetry * 2) << takeover;
  std::cerr << "takeover after a kill: " << takeover << "\n";
  StopWriting();
  EXPECT_THAT(reconciles_.Overlaps(), ::testing::IsEmpty());
  EXPECT_THAT(terms_.Overlaps(), ::testing::IsEmpty());
}

TEST_F(ManagerLeaderElectionTest, NeverTwoLeadersWhileTheServerFails) {
  apiserver::FaultOptions faults;
  faults.error_fraction = 0.15;
  faults.throttle_fraction = 0.05;
  faults.retry_after_seconds = 0;
  faults.watch_close_after_events = 20;
  server_->faults()->set_options(faults);
  StartWriting();
  int started = 0;
  for (; started < 3; ++started) {
    StartReplica(absl::StrCat("r", started), /*release=*/started % 2 == 0);
  }
  // Stop whoever leads, now and then, and bring a new replica in; a leader
  // that cannot renew through the faults steps down by itself (its Start
  // returns "leader election lost").
  const absl::Time end = absl::Now() + absl::Seconds(10);
  while (absl::Now() < end) {
    absl::SleepFor(absl::Seconds(2));
    for (Replica* leader : Leaders()) leader->cancel();
    StartReplica(absl::StrCat("r", started), /*release=*/started % 2 == 0);
    ++started;
  }
  StopWriting();
  server_->faults()->set_options(apiserver::FaultOptions());
  for (auto& r : replicas_) {
    r->Stop();
    if (!r->result.ok()) {
      EXPECT_THAT(std::string(r->result.message()),
                  HasSubstr("leader election lost"))
          << r->name;
    }
  }
  EXPECT_GT(server_->faults()->errors_injected(), 0);
  EXPECT_GE(terms_.Intervals().size(), 2u);
  EXPECT_THAT(terms_.Overlaps(), ::testing::IsEmpty());
  EXPECT_THAT(reconciles_.Overlaps(), ::testing::IsEmpty());
}

int PortOf(const std::string& address) {
  int port = -1;
  (void)absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port);
  return port;
}

// The value of the sample `name_and_labels` ("a_total{x=\"y\"}") in a
// scrape, or -1.
double Sample(const std::string& scrape, const std::string& name_and_labels) {
  for (absl::string_view line : absl::StrSplit(scrape, '\n')) {
    if (!absl::ConsumePrefix(&line, name_and_labels)) continue;
    if (!absl::ConsumePrefix(&line, " ")) continue;
    double v;
    if (absl::SimpleAtod(line, &v)) return v;
  }
  return -1;
}

TEST_F(ManagerLeaderElectionTest, ProbesAndMetricsOverHttp) {
  // Every request fails at first: the caches cannot sync.
  apiserver::FaultOptions failing;
  failing.error_fraction = 1;
  server_->faults()->set_options(failing);
  controller::ManagerOptions o = Options("solo", true);
  o.metrics_bind_address = "127.0.0.1:0";
  o.health_probe_bind_address = "127.0.0.1:0";
  Replica* r = StartReplica("solo", true, &o);
  ASSERT_NE(r, nullptr);
  const int metrics = PortOf(r->mgr->metrics_address());
  const int probes = PortOf(r->mgr->health_probe_address());
  ASSERT_GT(metrics, 0);
  ASSERT_GT(probes, 0);
  ASSERT_NE(metrics, probes);

  // Alive, not ready.
  ASSERT_TRUE(Eventually([&] {
    return absl::StartsWith(Get(probes, "/readyz"), "HTTP/1.1 500");
  }));
  EXPECT_THAT(Get(probes, "/readyz/informer-sync"), StartsWith("HTTP/1.1 500"));
  EXPECT_EQ(Body(Get(probes, "/healthz")), "ok");
  EXPECT_THAT(Get(metrics, "/healthz"), StartsWith("HTTP/1.1 404"));

  server_->faults()->set_options(apiserver::FaultOptions());
  ASSERT_TRUE(Eventually([&] { return Body(Get(probes, "/readyz")) == "ok"; }));
  ASSERT_TRUE(Eventually([&] { return r->mgr->IsLeader(); }));
  StartWriting();
  ASSERT_TRUE(Eventually([&] { return reconciles_.CountBy("solo") > 3; }));

  std::string scrape;
  ASSERT_TRUE(Eventually([&] {
    scrape = Body(Get(metrics, "/metrics"));
    return Sample(scrape,
                  "controller_runtime_reconcile_total{controller=\"log\","
                  "result=\"success\"}") > 3;
  })) << scrape;
  EXPECT_EQ(Sample(scrape,
                   "leader_election_master_status{name=\"kcr-test-"
                   "controller\"}"),
            1)
      << scrape;
  EXPECT_EQ(Sample(scrape,
                   "controller_runtime_max_concurrent_reconciles{"
                   "controller=\"log\"}"),
            1);
  EXPECT_GT(Sample(scrape, "workqueue_adds_total{name=\"log\"}"), 0);
  EXPECT_GT(Sample(scrape, "process_start_time_seconds"), 1.7e9);
  EXPECT_GT(Sample(scrape, "process_resident_memory_bytes"), 0);
  EXPECT_THAT(scrape, HasSubstr("# TYPE rest_client_requests_total counter"));
  EXPECT_THAT(scrape,
              HasSubstr("# TYPE controller_runtime_reconcile_time_seconds "
                        "histogram"));
  const double before =
      Sample(scrape,
             "controller_runtime_reconcile_total{controller=\"log\",result="
             "\"success\"}");
  ASSERT_TRUE(Eventually([&] {
    return Sample(Body(Get(metrics, "/metrics")),
                  "controller_runtime_reconcile_total{controller=\"log\","
                  "result=\"success\"}") > before;
  }));
  StopWriting();
  r->Stop();
  EXPECT_TRUE(r->result.ok()) << r->result;
}

TEST_F(ManagerLeaderElectionTest, EventsOfTheManagersRecorderReachTheServer) {
  auto mgr = controller::Manager::New(config_);
  ASSERT_TRUE(mgr.ok()) << mgr.status();
  api::ObjectBuilder b("v1", "ConfigMap");
  b.SetNamespace("default").SetName("described");
  auto cm =
      client_->Create(kBg, ConfigMaps().InNamespace("default"), **b.Build());
  ASSERT_TRUE(cm.ok()) << cm.status();
  std::unique_ptr<events::EventRecorder> recorder =
      (*mgr)->GetEventRecorderFor("mirror-controller");
  for (int i = 0; i < 3; ++i) {
    recorder->Event(**cm, api::kEventTypeNormal, "Mirrored", "in step");
  }
  const client::Resource events =
      client::Resource::Namespaced({"", "v1", "events"}).InNamespace("default");
  ASSERT_TRUE(Eventually([&] {
    auto list = client_->List(kBg, events, {});
    if (!list.ok()) return false;
    for (const api::ObjectPtr& e : list->items) {
      const rapidjson::Value* count = e->Find("/count");
      if (e->Find("/reason") != nullptr &&
          std::string(e->Find("/reason")->GetString()) == "Mirrored" &&
          count != nullptr && count->GetInt() == 3 &&
          std::string(e->Find("/source/component")->GetString()) ==
              "mirror-controller" &&
          std::string(e->Find("/involvedObject/uid")->GetString()) ==
              std::string((*cm)->uid())) {
        return true;
      }
    }
    return false;
  }));
}

}  // namespace
}  // namespace kcr
